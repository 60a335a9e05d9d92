#pragma once
// Range stats (SPEC §2), identical to the jobque timeline viewer's stats line, plus
// per-group and per-lane detail. A pure function of the trace and a range.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "quantile.h"
#include "scope.h"
#include "trace.h"

namespace jqtrace {

/// How spans are grouped: jobque traces by category (default), name, lane or kind (the
/// jobque span kind: publish, chunk, stage_wait, wake, fifo_job, other); generic traces
/// by cat (default), name or lane.
enum class GroupBy { category, name, lane, kind, cat };

struct HistBucket {
  int64_t lo_ns = 0, hi_ns = 0;  ///< [lo, hi): powers of two
  uint64_t count = 0;
};

struct GroupStats {
  std::string name;
  std::string color;         ///< "#RRGGBB"; empty for generic groups
  bool guessed = false;      ///< a category named by stage count (SPEC §1.4): say so where it is shown
  int64_t busy_ns = 0;       ///< jobque: clipped chunk+fifo_job+publish; generic: self time
  double share_pct = 0;      ///< of the groups' total busy
  uint64_t events = 0;       ///< spans of the group overlapping the range
  Distribution dur;          ///< category/lane: chunk durations; name/kind/generic: all spans
  int64_t total_ns = 0;      ///< generic: clipped time including children
  int64_t self_ns = 0;       ///< generic: total minus direct children on the same lane
  std::vector<HistBucket> hist;  ///< with StatsOptions::hist
  /// By lane: the lane, an index into Trace::lanes (its ids and thread name are the
  /// trace's: as three strings here, a million lanes held 96 MB more).
  std::size_t lane = SIZE_MAX;
  /// By category or cat: the group's key, its category's index (jobque) or its cat's id + 1
  /// (0: no cat), export's grp; -1 otherwise.
  int64_t key = -1;
};

/// One lane's busy time in the range. Its label and thread name are the trace's
/// (Trace::lane_label, thread_name): as two strings here, a million lanes held 80 MB.
struct LaneStats {
  std::size_t lane = 0;      ///< index into Trace::lanes
  int64_t busy_ns = 0;
  double idle_pct = 0;
};

struct RangeStats {
  Range range;
  bool jobque = false;
  GroupBy by = GroupBy::category;
  uint64_t lanes = 0;        ///< every lane of the trace
  uint64_t events = 0;       ///< spans overlapping the range
  int64_t busy_ns = 0;
  int64_t wait_ns = 0;       ///< clipped stage_wait
  double idle_pct = 0;       ///< 100 * (1 - busy / (length * lanes)); 100 for an empty range
  double parallelism = 0;    ///< busy / length; 0 for an empty range
  uint64_t publishes = 0;
  std::vector<GroupStats> groups;  ///< by busy (descending), then name
  std::vector<LaneStats> lanes_detail;  ///< with StatsOptions::lanes
};

struct StatsOptions {
  GroupBy by = GroupBy::category;
  bool distributions = true;  ///< per-group duration summaries (markers' unit rows skip them)
  bool hist = false;          ///< log2 duration histograms per group
  /// Per-lane detail (lanes_detail). Unit rows skip it: a thousand units of a 32-lane
  /// trace made 32,000 lane labels for nothing.
  bool lanes = true;
  QuantileMethod quantiles = QuantileMethod::inclusive;
  unsigned threads = 1;       ///< threads for the walk and the summaries (any count: same result)
  /// Spans of a jobque lane walked as one piece: enough that a thread's share is worth its
  /// start, few enough that two threads share a lane (tests make it small).
  std::size_t slice_rows = 1u << 18;
};

/// Per lane, the running maximum of span ends per block of spans: lets a range query start
/// at the first block that can overlap it instead of at the lane's first span.
class SpanIndex {
 public:
  /// Built on up to `threads` threads.
  explicit SpanIndex(const Trace& trace, unsigned threads = 1);
  /// The first span of lane that can end at or after lo.
  std::size_t first_candidate(std::size_t lane, int64_t lo) const;
  /// Rows [begin, end) of the lane's spans (of `trace`, the one indexed) that can overlap
  /// r: from the first candidate to the last span starting by r.hi.
  std::pair<std::size_t, std::size_t> candidate_rows(const Trace& trace, std::size_t lane, Range r) const;

 private:
  static constexpr std::size_t kBlock = 64;
  /// Per block of kBlock spans, the latest end up to its last span; every lane's blocks,
  /// lane after lane (a vector a lane cost a one-span lane 56 bytes, not 16).
  std::vector<int64_t> block_max_end_;
  std::vector<std::size_t> lane_blocks_;  ///< lane l's blocks from lane_blocks_[l] to lane_blocks_[l + 1]
};

RangeStats compute_stats(const Trace& trace, const SpanIndex& index, Range range, const StatsOptions& options);

/// compute_stats of each range, on options.threads threads. Ranges in time order (lo and
/// hi both non-decreasing, as a kind's units are) asked for without per-lane detail or
/// distributions are measured in one sweep over the spans they cover: the work is those
/// spans and a binary search a lane, not a walk over every lane for every range.
std::vector<RangeStats> compute_stats_of_ranges(const Trace& trace, const SpanIndex& index,
                                                const std::vector<Range>& ranges, const StatsOptions& options);

/// "category", "name", ... and back; false for an unknown name.
const char* group_by_name(GroupBy by);
bool parse_group_by(std::string_view name, GroupBy* by);

}  // namespace jqtrace
