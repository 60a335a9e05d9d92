#pragma once
// `whatif` (SPEC §2 "What-if"): the trace's own dependency graph replayed with changed
// costs. Each span starts after its *binding* predecessor — the later-ending of its lane's
// previous span and, for a chunk, its stage's readiness (stage 0: its chain's publish end;
// stage k+1: stage k's last chunk end; a chunk claimed while its publish ran follows the
// publish's start) — by the gap recorded after it, and never before the other one ends. A
// stage_wait ends at its stage's replayed completion plus its recorded wake-up. Wake spans
// are no one's predecessor. Instants keep their place in their lane's sequence. With no
// change every recorded time comes back: the test that the graph is right.
//
// A change scales *work*: a chunk's (or publish's) duration while it is at most work_cap ×
// the median of its group's chunks of the same stage; a chunk past that was preempted, its
// work the median and the rest, preemption, kept.
//
// The graph is built once (ReplayGraph) and replayed as often as a question needs (the
// rank replays it at three speedups of each group, eight sets of changes a pass): a replay
// is one pass over the graph's nodes, laid out in an order where every node comes after its
// predecessors.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "huge_pages.h"
#include "scope.h"
#include "trace.h"

namespace jqtrace {

/// What a replay changes; the defaults: the recording itself.
struct WhatIfChanges {
  /// Per category (index into Trace::categories; shorter: 1 for the rest), the factor of
  /// its chunks' work and of its publishes' work.
  std::vector<double> chunk_factor, publish_factor;
  double wake_factor = 1;     ///< a stage_wait's wake-up, scaled (--no-wake: 0)
  /// How far each chunk moves towards its stage's median (--balance: 1, all the way).
  double balance = 0;
  /// The factor of a category's chunks (or publishes).
  static double factor(const std::vector<double>& factors, std::size_t category) {
    return category < factors.size() ? factors[category] : 1.0;
  }
  /// The recording itself: every factor 1, no balance.
  bool changes_nothing() const {
    auto ones = [](const std::vector<double>& factors) {
      return std::all_of(factors.begin(), factors.end(), [](double f) { return f == 1; });
    };
    return ones(chunk_factor) && ones(publish_factor) && wake_factor == 1 && balance == 0;
  }
};

/// Where the graph could not explain the recording, counted over the spans (the recording
/// alone decides them: every replay of a graph has the same).
struct ReplayAnomalies {
  /// A chunk that started before its stage was ready (before its publish started, or
  /// before its previous stage's last chunk ended): it follows its readiness by a negative gap.
  uint64_t early_chunks = 0;
  /// Not an anomaly, counted for the reader: chunks claimed while their chain's publish
  /// still ran, which follow the publish's start instead of its end.
  uint64_t claimed_during_publish = 0;
  /// A span that started inside its lane's previous one (nested): it keeps its offset from
  /// that span's start.
  uint64_t nested = 0;
  /// Dependencies that formed a cycle (an early chunk waited on by its own lane's past):
  /// the edge is read at its recorded time.
  uint64_t cycles = 0;
  /// The chains published more than once (their stage 0 follows the latest publish before it).
  uint64_t republished_chains = 0;
  bool any() const { return early_chunks || nested || cycles || republished_chains; }
};

/// How many of the last nodes' replayed ends a replay keeps at hand (a ring, 256 KiB at
/// eight sets); a node reads an end from farther back in a table of its own. On the bench
/// traces no read reaches back 1,200 places.
inline constexpr uint32_t kRecentEnds = 4096;

class ReplayGraph {
 public:
  /// work_cap: --work-cap K, a chunk longer than K x its (group, stage) median was preempted.
  /// recent_ends: the replays' ring (a power of two; the tests make it small, so that most
  /// reads come from far_read_).
  ReplayGraph(const Trace& trace, double work_cap, uint32_t recent_ends = kRecentEnds);
  ~ReplayGraph();  // where Node is complete
  ReplayGraph(const ReplayGraph&) = delete;
  ReplayGraph& operator=(const ReplayGraph&) = delete;
  const Trace& trace() const { return trace_; }
  std::size_t spans() const { return spans_; }
  const ReplayAnomalies& anomalies() const { return anomalies_; }
  /// The categories whose chains have chunks, and those with publishes (the rank's rows).
  const std::vector<std::size_t>& categories_with_chunks() const { return chunk_categories_; }
  bool has_publishes() const { return has_publishes_; }
  bool has_waits() const { return has_waits_; }

 private:
  friend class Replay;
  friend class LanesModel;
  struct Slot;  // what a replay reads of a node, packed
  const Trace& trace_;
  std::size_t spans_ = 0;
  std::vector<std::size_t> offset_;   ///< lane l's spans from offset_[l] (span ids)
  /// Every node (the spans and the stages' completions) in an order where each comes after
  /// its predecessors: a replay is one pass over it (a predecessor placed later closes a
  /// cycle, marked in its node's flags). A node's predecessors are their places here.
  HugeTable<Slot> slots_;
  /// Per span id (a lane's offset plus its index there): its node's place in slots_.
  HugeTable<uint32_t> position_;
  const Slot& slot_of_span(std::size_t id) const;
  std::vector<int64_t> stage_late_end_;  ///< per stage: the latest recorded end of its chunks placed after it
  std::vector<uint32_t> lane_frontier_;  ///< per lane: its latest-ending non-wake span (span id; kNone: none)
  std::vector<uint32_t> stage_begin_, stage_chunks_;  ///< per stage: its chunks' places in slots_ (CSR)
  std::vector<int64_t> stage_median_;  ///< per stage: its chunks' median duration (balance)
  /// The places whose replayed start a later node reads (a nested span's predecessor, a
  /// publish a chunk was claimed during), ascending.
  std::vector<uint32_t> start_read_;
  /// The places whose replayed end a node recent_ends_ or more places on reads (a lane's
  /// span after a long idle stretch, a publish whose chunks came late), ascending.
  std::vector<uint32_t> far_read_;
  uint32_t recent_ends_;
  std::vector<uint32_t> stage_publish_;  ///< per stage: its chain's publish before it (kNone: none recorded)
  std::vector<int64_t> stage_number_;    ///< per stage: its number in its chain
  std::vector<int64_t> caps_;         ///< a (group, stage)'s work cap, ns
  std::vector<int64_t> medians_;      ///< a (group, stage)'s median duration, ns (a preempted chunk's work)
  int64_t last_work_end_ = 0;         ///< the latest recorded end of a non-wake span
  std::vector<std::size_t> chunk_categories_;  ///< the categories of chunks, each once, in order
  ReplayAnomalies anomalies_;
  bool has_publishes_ = false, has_waits_ = false;
  class Builder;
};

/// An instant on a lane (its recorded time) whose replayed time a replay is asked for.
struct LanePoint {
  std::size_t lane = 0;
  int64_t ts = 0;
};

/// Replays of a graph, several sets of changes in one pass over it (the rank's recording
/// and three speedups of each cost, eight sets a pass: its nodes are read once for eight).
/// A node's replayed end is kept while the next nodes of the graph's ring (kRecentEnds) are
/// replayed, and to the end of the run where a node farther on, or an instant asked about,
/// reads it; a start only where something reads it later: a nested span's predecessor, a
/// publish its chunks were claimed during, the spans around the instants asked about.
/// (Every node's ends, kept whole, were 24 bytes a node at three sets, and writing them out
/// most of a pass's time.)
class Replay {
 public:
  /// points: the instants time_at will be asked about.
  Replay(const ReplayGraph& graph, const std::vector<LanePoint>& points);
  /// Replays each set of changes (k: its index), in the same memory as the run before
  /// (the rank replays a graph dozens of times: fresh buffers cost it more in page faults
  /// and zeroing than the replays).
  void run(const std::vector<WhatIfChanges>& changes);
  /// An instant's time on a lane, replayed under changes k: the same distance after the
  /// lane's latest-ending span before it (inside a span: from that span's start), never
  /// after the next span's start. Only for the points given at construction (else throws).
  int64_t time_at(std::size_t lane, int64_t ts, std::size_t k = 0) const;
  /// The trace's end replayed: its recorded tail after the last work kept after the last
  /// work's replayed end.
  int64_t trace_end(std::size_t k = 0) const { return trace_end_[k]; }
  /// For a set that changes nothing: the largest |replayed - recorded| over every span's
  /// start and end (ns). Not measured for the others (throws).
  int64_t max_error_ns(std::size_t k = 0) const;
  /// The most sets of changes one pass replays.
  static constexpr std::size_t kMaxWidth = 8;
  /// A span's (or publish's) duration under the changes: balanced, its work scaled up to its cap.
  static int64_t changed_duration(const ReplayGraph& g, const ReplayGraph::Slot& n, const WhatIfChanges& c);

 private:
  const ReplayGraph& g_;
  std::size_t width_ = 0;
  std::vector<int64_t> recent_end_;  ///< the last kRecentEnds nodes' ends: [place % kRecentEnds * width + k]
  std::vector<uint32_t> far_;        ///< the places whose end is read from farther back, ascending
  std::vector<int64_t> far_end_;     ///< [index in far_ * width + k]
  std::vector<uint32_t> kept_;     ///< the places whose start is kept, ascending
  std::vector<int64_t> kept_start_;  ///< [index in kept_ * width + k]
  std::vector<int64_t> completion_;  ///< per stage and set, during a run: its latest chunk end so far
  std::vector<int64_t> trace_end_, worst_;  ///< per set
  /// A point asked about, with the nodes its time is read from (places; kNone: none) and
  /// where their starts are kept; by lane and time.
  struct ResolvedPoint {
    std::size_t lane = 0;
    int64_t ts = 0;
    uint32_t frontier = UINT32_MAX, next = UINT32_MAX;
    std::size_t frontier_kept = 0, frontier_far = 0, next_kept = 0;
  };
  std::vector<ResolvedPoint> points_;
  /// The index in kept_ of a place whose start is kept.
  std::size_t kept_index(uint32_t place) const;
  /// The index in far_ of a place whose end is kept for the whole run.
  std::size_t far_index(uint32_t place) const;
  template <std::size_t kFixedWidth>
  void run_width(const std::vector<WhatIfChanges>& changes);
};

/// One kind's units measured and replayed.
struct WhatIfKind {
  std::string kind;
  UnitRule rule;
  std::vector<Unit> measured, predicted;  ///< the same units, in order
};

/// The whole trace and each marker kind, measured against the replay.
struct WhatIfResult {
  int64_t measured_ns = 0, predicted_ns = 0;  ///< the trace's length
  std::vector<WhatIfKind> kinds;
  ReplayAnomalies anomalies;
  int64_t identity_error_ns = 0;  ///< the replay with no change: max |replayed - recorded|
  uint64_t spans = 0;
  /// --lanes: the lanes modelled and those that ran chunks in the recording (0: the replay
  /// kept the recorded lanes), and the lanes model's own error there, the median |model -
  /// measured| / measured of the first kind's units (%).
  std::size_t lanes = 0, recorded_lanes = 0;
  double model_error_pct = 0;
};

/// Units of every marker kind cut from the replayed markers, beside the recorded ones.
class UnitReplayer {
 public:
  UnitReplayer(const Trace& trace, const UnitRequest& unit_at);
  /// The instants units() asks a replay about.
  std::vector<LanePoint> points() const;
  /// Each kind's units (or only `only`'s, and the kinds it nests in), measured and as the
  /// replay moves them under its changes k.
  std::vector<WhatIfKind> units(const Replay& replay, std::size_t k, const std::string& only = "") const;
  /// The same for any replay: an instant's replayed time on its lane, the trace's end.
  std::vector<WhatIfKind> units(const std::function<int64_t(std::size_t lane, int64_t ts)>& time_at,
                                int64_t trace_end, const std::string& only = "") const;
  const std::vector<std::string>& kinds() const { return kinds_; }

 private:
  const Trace& trace_;
  std::vector<std::string> kinds_;
  std::vector<Markers> markers_;
  std::vector<KindUnits> plans_;
};

WhatIfResult what_if(const ReplayGraph& graph, const WhatIfChanges& changes, const UnitRequest& unit_at);
/// The same on `lanes` lanes (LanesModel): each unit's prediction is its measured duration
/// times the model's ratio of it on `lanes` lanes, with the changes, to it on the recorded
/// lanes, without (the model's own bias cancels); marker_lane: the lane whose program runs.
WhatIfResult what_if_lanes(const ReplayGraph& graph, const WhatIfChanges& changes, const UnitRequest& unit_at,
                           std::size_t marker_lane, std::size_t lanes);
/// The lanes that ran chunks in the recording.
std::size_t lanes_with_chunks(const Trace& trace);

/// --lanes N: the marker lane's program replayed with each stage's chunks claimed by
/// whichever of N lanes is free first (the runtime's rule: a free worker claims the next
/// chunk after a claim latency; the marker lane, while it waits on the chain, runs chunks
/// too), not by the lanes that ran them. The model's costs are the recording's medians: a
/// worker's claim latency after its stage is ready, its gap between chunks, the marker
/// lane's wake-up. Other lanes' other work (fifo jobs) is not modelled. Run at the trace's
/// own lanes it does not give the recording back exactly: its error there is the error
/// beside its prediction.
class LanesModel {
 public:
  LanesModel(const ReplayGraph& graph, std::size_t marker_lane);
  struct Run {
    /// (recorded, replayed) times of the marker lane's checkpoints, in order: an instant
    /// there is the same distance after the last one before it.
    std::vector<std::pair<int64_t, int64_t>> checkpoints;
    int64_t trace_end = 0;
    int64_t time_at(int64_t ts) const;
  };
  Run run(const WhatIfChanges& changes, std::size_t lanes) const;
  int64_t claim_latency_ns() const { return claim_latency_; }
  int64_t chunk_gap_ns() const { return chunk_gap_; }
  int64_t wake_ns() const { return wake_; }

 private:
  const ReplayGraph& g_;
  std::size_t lane_;
  int64_t claim_latency_ = 0, chunk_gap_ = 0, wake_ = 0;
  /// Per publish on the marker lane (span id): its chain's stages in order (stage ids).
  std::unordered_map<uint32_t, std::vector<uint32_t>> stages_of_publish_;
};

/// Cilkscale's numbers for a job system, per unit: the work of the chains published in it
/// (every chunk and publish), its span (the longest path through them: a chain's publish,
/// then each stage's longest chunk in turn, a chain after every chain that completed before
/// it was published), and the floor no number of lanes can beat: max(work / P, span).
struct WorkSpan {
  Unit unit;
  int64_t work_ns = 0, span_ns = 0;
  uint64_t chains = 0;
  double parallelism() const { return span_ns > 0 ? static_cast<double>(work_ns) / static_cast<double>(span_ns) : 0; }
  int64_t floor_ns(std::size_t lanes) const {
    return std::max(lanes ? work_ns / static_cast<int64_t>(lanes) : work_ns, span_ns);
  }
};
/// The work and span of each unit (units in time order), from the recorded durations.
std::vector<WorkSpan> work_span(const Trace& trace, const std::vector<Unit>& units);

/// The rank (the causal profile): for each thing that could cost less — a group's chunks,
/// every publish, every wake-up, the imbalance of stages — the predicted saving of the
/// trace and of the median unit of a kind at each speedup.
struct RankRow {
  std::string group;         ///< a category's name, or "publish", "wake-up", "imbalance"
  int speedup_pct = 0;       ///< 25, 50, 100: that much of its work (or wait) removed
  int64_t saving_ns = 0;     ///< of the trace's length
  int64_t unit_saving_ns = 0;  ///< of the kind's median unit
};
struct WhatIfRank {
  int64_t measured_ns = 0;   ///< the trace's length
  std::string unit_kind;     ///< the kind whose median unit is measured ("" none)
  int64_t unit_median_ns = 0;
  std::vector<RankRow> rows;  ///< largest saving first
};
/// Replays on up to `threads` threads.
WhatIfRank what_if_rank(const ReplayGraph& graph, const UnitRequest& unit_at, const std::string& unit_kind,
                        unsigned threads);

}  // namespace jqtrace
