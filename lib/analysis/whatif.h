#pragma once
// `whatif` (SPEC §2 "What-if"): the trace's own dependency graph replayed with changed
// costs. Each span starts after its *binding* predecessor — the later-ending of its lane's
// previous span and, for a chunk, its stage's readiness (stage 0: its chain's publish end;
// stage k+1: stage k's last chunk end; a chunk claimed while its publish ran follows the
// publish's start) — by the gap recorded after it, and never before the
// other one ends. A stage_wait ends at its stage's replayed completion plus its recorded
// wake-up. Wake spans are no one's predecessor. Instants keep their place in their lane's
// sequence. With no change every recorded time comes back: the test that the graph is right.
//
// A change scales *work*: the part of a chunk (or publish) up to work_cap × the median of
// its group's chunks of the same stage; the time past it was preemption and is kept.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scope.h"
#include "trace.h"

namespace jqtrace {

/// One group's cost multiplied: its chunks (or its publishes).
struct GroupScale {
  std::size_t category = 0;  ///< index into Trace::categories
  double factor = 1;
};

/// What the replay changes. Nothing: the recording itself.
struct WhatIfChanges {
  std::vector<GroupScale> chunks;     ///< --scale GROUP=F
  std::vector<GroupScale> publishes;  ///< --publish GROUP=F
  bool all_publishes = false;         ///< --publish all=F: publish_factor for every group
  double publish_factor = 1;
  bool no_wake = false;               ///< --no-wake: every stage_wait ends at its stage's completion
  bool balance = false;               ///< --balance: each chunk of a stage lasts the stage's median
  double work_cap = 3;                ///< --work-cap K: work is at most K x the (group, stage) median
  bool any() const {
    return !chunks.empty() || !publishes.empty() || all_publishes || no_wake || balance;
  }
};

/// Where the graph could not explain the recording, counted over the spans replayed.
struct ReplayAnomalies {
  /// A chunk that started before its stage was ready (before its publish ended, or its
  /// previous stage's last chunk): it follows its readiness by a negative gap.
  uint64_t early_chunks = 0;
  /// Not an anomaly, counted for the reader: chunks claimed while their chain's publish
  /// still ran, which follow the publish's start instead of its end.
  uint64_t claimed_during_publish = 0;
  /// A span that started inside its lane's previous one (nested): it keeps its offset from
  /// that span's start.
  uint64_t nested = 0;
  /// Dependencies that formed a cycle (an early chunk waited on by its own lane's past):
  /// the edge was read at its recorded time.
  uint64_t cycles = 0;
  /// The chains published more than once (their stages' readiness is the latest publish).
  uint64_t republished_chains = 0;
  bool any() const { return early_chunks || nested || cycles || republished_chains; }
};

/// Every span's replayed start and end, and the trace's replayed extent.
class Replay {
 public:
  Replay(const Trace& trace, const WhatIfChanges& changes);

  int64_t start(std::size_t lane, std::size_t i) const { return ts_[offset_[lane] + i]; }
  int64_t end(std::size_t lane, std::size_t i) const { return end_[offset_[lane] + i]; }
  /// An instant's time on a lane, replayed: the same distance after the lane's latest-ending
  /// span before it (inside a span: from that span's start), never after the next span's
  /// start.
  int64_t time_at(std::size_t lane, int64_t ts) const;
  /// The trace's end replayed: its recorded tail after the last work kept after the last
  /// work's replayed end.
  int64_t trace_end() const { return trace_end_; }
  const ReplayAnomalies& anomalies() const { return anomalies_; }
  std::size_t spans() const { return ts_.size(); }
  /// The largest |replayed - recorded| over every span's start and end (ns).
  int64_t max_error_ns() const;

 private:
  const Trace& trace_;
  std::vector<std::size_t> offset_;  ///< lane l's spans from offset_[l]
  std::vector<int64_t> ts_, end_;
  /// Per span: the index (in its lane) of the latest-ending non-wake span up to it
  /// (UINT32_MAX: none), the predecessor an instant after it follows.
  std::vector<uint32_t> frontier_;
  int64_t trace_end_ = 0;
  ReplayAnomalies anomalies_;
  class Builder;
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
};

WhatIfResult what_if(const Trace& trace, const WhatIfChanges& changes, const UnitRequest& unit_at);

}  // namespace jqtrace
