#pragma once
// `latency` (SPEC §2 "Latency"): where the time of the lane that holds the markers (the
// caller, which waits for every chain it publishes) went in a range. That lane's time is
// what a unit's duration is made of, so it is cut into parts, each a (group, class), that
// add up to the range's length exactly: its own chunks (work), its publishes, its waits on
// a stage split where the stage's last chunk ended (before: imbalance, the other lanes
// still worked; after: wake-up, the work was done and the lane not yet told), its other
// spans, the time in no event (outside) and the time after it stopped recording.
//
// A pure function of the trace, the lane and the range. One walk over the lane's spans
// in the range; the ends of the stages it waited on are looked up once per analysis.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flat_map.h"
#include "scope.h"
#include "stats.h"
#include "trace.h"

namespace jqtrace {

/// The classes of the marker lane's time, in the order every output lists them.
enum class LatencyClass : uint8_t { work, publish, imbalance, wake_up, wait, span, outside, not_recorded };
inline constexpr std::size_t kLatencyClasses = 8;
/// "work", "publish", "imbalance", "wake-up", "wait", "span", "outside", "not recorded".
const char* latency_class_name(LatencyClass c);
/// The class a name (as latency_class_name writes it; "wake_up" and "not_recorded" too) names.
bool parse_latency_class(std::string_view text, LatencyClass* c);

/// The groups of the marker lane's time that are not a group of spans.
inline constexpr std::string_view kOutsideGroup = "outside";
inline constexpr std::string_view kNotRecordedGroup = "not recorded";
/// The keys of those two (LatencyGroup::key): below every group's.
inline constexpr int64_t kOutsideGroupKey = -1;
inline constexpr int64_t kNotRecordedGroupKey = -2;

/// An imbalance part: the marker lane waited on stage `stage` of chain `chain` while the
/// stage's last chunk (on lane last_lane) still ran. Times in ns of the file's clock.
struct LatencyWait {
  int64_t ts_ns = 0;            ///< the part's start (the stage_wait's, clipped to the range)
  int64_t ns = 0;               ///< the part's length
  int64_t wake_ns = 0;          ///< the wake-up part after it (from the last chunk's end on)
  int64_t chain = 0, stage = 0;
  std::size_t group = 0;        ///< index into LatencyAnalysis::groups()
  std::size_t last_lane = SIZE_MAX;  ///< the lane whose chunk of the stage ended last
  int64_t last_chunk_arg = 0;   ///< that chunk's args.arg (its index in the stage)
  int64_t last_chunk_ts = 0, last_chunk_dur = 0;
  int64_t stage_first_ts = INT64_MAX;  ///< when the stage's first chunk started (any lane)
};

/// A publish or an own chunk of the marker lane, clipped to the range: what a unit's
/// publish time or work is made of (issue 65: publish was 46% of t12's token 3, and nothing
/// named which publish).
struct LatencyPiece {
  int64_t ts_ns = 0;      ///< the piece's start (the span's, clipped to the range)
  int64_t ns = 0;         ///< its length in the range
  int64_t span_ns = 0;    ///< the whole span's duration
  int64_t chain = 0, stage = 0;
  std::size_t group = 0;  ///< index into LatencyAnalysis::groups()
};

/// One range's parts: ns[group * kLatencyClasses + class], adding up to range.length().
struct LatencyParts {
  Range range;
  std::vector<int64_t> ns;
  std::vector<LatencyWait> waits;  ///< the longest imbalance parts, longest first (ties: earlier first)
  std::vector<LatencyPiece> publishes;   ///< the longest publish parts, longest first (as waits)
  std::vector<LatencyPiece> own_chunks;  ///< the longest parts of the lane's own chunks (work)

  int64_t at(std::size_t group, LatencyClass c) const { return ns[group * kLatencyClasses + static_cast<std::size_t>(c)]; }
  int64_t of_class(LatencyClass c) const;
  int64_t of_group(std::size_t group) const;
  int64_t total() const;
};

/// A group of the marker lane's time: a category (jobque) or cat (generic) its spans have,
/// then "outside" and "not recorded".
struct LatencyGroup {
  std::string name;
  /// The group's key: its category's index (jobque), its cat's id + 1 (generic, 0: none),
  /// or kOutsideGroupKey / kNotRecordedGroupKey. export's grp.
  int64_t key = 0;
  std::string color;     ///< "#RRGGBB"; empty for generic groups
  bool guessed = false;  ///< a category named by stage count (SPEC §1.4)
};

class LatencyAnalysis {
 public:
  /// lane: the marker lane (latency_lane); outer: the range every measured range lies in
  /// (the stages the lane waits on in it are the ones whose ends are looked up).
  LatencyAnalysis(const Trace& trace, const SpanIndex& index, std::size_t lane, Range outer);

  /// The parts of r (within outer), with up to max_waits of the longest imbalance parts.
  LatencyParts measure(Range r, std::size_t max_waits) const;

  const std::vector<LatencyGroup>& groups() const { return groups_; }
  std::size_t outside_group() const { return groups_.size() - 2; }
  std::size_t not_recorded_group() const { return groups_.size() - 1; }
  std::size_t lane() const { return lane_; }
  bool jobque() const { return trace_.jobque; }
  /// The lane stopped recording (its ring filled) at stop_ns, before the trace ended.
  bool stopped() const { return stopped_; }
  int64_t stop_ns() const { return stop_ns_; }

 private:
  /// When the last chunk of each (chain, stage) the lane waits on ended, over the whole
  /// trace. Chains the tracer numbers densely (0, 2, 4...) get an array a chain id of where
  /// their stages' ends start, and one end a stage: ~1 byte a chain id and 8 a stage, read
  /// in time order as the chunks come (a hash table of the 1.7M waits of a 570 MB trace
  /// took 60 MB and a cache miss a chunk). Other ids (spread out) go to a FlatMap.
  class StageEnds {
   public:
    /// Room for the stages the lane's waits in rows name.
    void plan(const SpanTable& lane, std::size_t begin, std::size_t end, const JobqueNames& names);
    /// The end slot of (chain, stage), or nullptr when the lane waits on no such stage.
    int64_t* find(int64_t chain, int64_t stage);
    const int64_t* find(int64_t chain, int64_t stage) const { return const_cast<StageEnds*>(this)->find(chain, stage); }
    bool empty() const { return ends_.empty() && sparse_.size() == 0; }

   private:
    int64_t lo_ = 0;
    std::vector<uint32_t> first_;  ///< chain id - lo_ → its first stage's slot in ends_ (dense ids)
    std::vector<uint8_t> stages_;  ///< chain id - lo_ → how many stages have a slot
    std::vector<int64_t> ends_;
    FlatMap<int64_t> sparse_;      ///< stage_key → end, for ids too spread out for the array
  };
  struct Walk;

  void find_groups(Range outer);
  void find_stage_ends(Range outer);
  void describe_waits(std::vector<LatencyWait>* waits) const;
  std::size_t group_of(std::size_t row) const;
  LatencyClass class_of(std::size_t row) const;

  const Trace& trace_;
  const SpanIndex& index_;
  std::size_t lane_;
  JobqueNames names_;
  bool stopped_ = false;
  int64_t stop_ns_ = 0;
  std::vector<LatencyGroup> groups_;
  /// A span's group key (category, or cat id + 1) → index into groups_.
  FlatMap<uint32_t> group_of_key_;
  StageEnds stage_ends_;
};

/// One analysis a marker lane, over the whole trace, made when first asked for: the kinds
/// of one lane share it (export and diff measure every kind's units).
class LatencyByLane {
 public:
  LatencyByLane(const Trace& trace, const SpanIndex& index) : trace_(trace), index_(index) {}
  /// The lane's analysis (nullptr for SIZE_MAX: no lane).
  const LatencyAnalysis* of(std::size_t lane);

 private:
  const Trace& trace_;
  const SpanIndex& index_;
  std::map<std::size_t, std::unique_ptr<LatencyAnalysis>> analyses_;
};

/// The key of a (chain, stage) in one int64 (false for a stage outside 0..7 or a chain
/// id too large to pack: such a wait is looked up nowhere and counts as `wait`; jobque
/// chains have at most 6 stages).
bool stage_key(int64_t chain, int64_t stage, int64_t* key);

/// The marker lane: the lane holding the most markers of kind (of every marker kind when
/// kind is empty; ties: the earlier lane); with no markers, for a jobque trace the caller
/// (the highest numeric tid with spans). SIZE_MAX when there is none. *by_markers (may be
/// null): whether markers chose it.
std::size_t latency_lane(const Trace& trace, std::string_view kind, bool* by_markers = nullptr);
/// The lane holding the most of these markers (ties: the earlier lane); SIZE_MAX for none.
std::size_t latency_lane(const Markers& markers);

}  // namespace jqtrace
