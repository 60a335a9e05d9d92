#include "whatif.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "jobque.h"

namespace jqtrace {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// A (chain, stage) or (category, stage) pair as one hash key.
struct PairHash {
  std::size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    uint64_t h = static_cast<uint64_t>(p.first) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(p.second);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};
template <typename V>
using PairMap = std::unordered_map<std::pair<int64_t, int64_t>, V, PairHash>;

int64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

/// Builds the graph and replays it: one node a span, one a stage (its completion), each
/// computed once its predecessors are (a depth-first walk: the recording's order is not a
/// safe order, since a stage_wait's end waits on chunks that start after it).
class Replay::Builder {
 public:
  Builder(const Trace& trace, const WhatIfChanges& changes, Replay* out)
      : t_(trace), changes_(changes), r_(*out), names_(JobqueNames::found(trace.names)) {}

  void run() {
    index_spans();
    link_chains();
    change_durations();
    walk();
    measure_end();
  }

 private:
  const Trace& t_;
  const WhatIfChanges& changes_;
  Replay& r_;
  JobqueNames names_;
  std::size_t spans_ = 0;
  std::vector<std::size_t> lane_of_;  ///< per span (global id): its lane
  std::vector<uint32_t> pred_;        ///< per span: its lane predecessor (global id) or kNone
  std::vector<uint32_t> ready_;       ///< per chunk: its publish (span id) or stage node (spans_ + n); stage_wait: its stage node
  std::vector<int64_t> dur_;          ///< per span: its replayed duration
  // Stage nodes: the chunks of (chain, stage), their recorded completion.
  PairMap<uint32_t> stage_ids_;
  std::vector<std::pair<int64_t, int64_t>> stage_keys_;
  std::vector<std::vector<uint32_t>> stage_chunks_;
  std::vector<int64_t> stage_recorded_, stage_replayed_;
  std::unordered_map<int64_t, std::vector<uint32_t>> publishes_;  ///< chain -> its publish spans, in time order
  std::vector<uint8_t> state_;  ///< per node: 0 not reached, 1 on the walk's stack, 2 replayed

  int64_t ts(uint32_t g) const { return t_.lanes[lane_of_[g]].spans.ts[g - r_.offset_[lane_of_[g]]]; }
  int64_t recorded_dur(uint32_t g) const { return t_.lanes[lane_of_[g]].spans.dur[g - r_.offset_[lane_of_[g]]]; }
  int64_t recorded_end(uint32_t g) const { return ts(g) + recorded_dur(g); }
  int64_t field(uint32_t g, const IntColumn SpanTable::*column) const {
    return (t_.lanes[lane_of_[g]].spans.*column)[g - r_.offset_[lane_of_[g]]];
  }
  int64_t name(uint32_t g) const { return field(g, &SpanTable::name); }
  bool is_stage(uint32_t node) const { return node >= spans_; }
  int64_t node_recorded_end(uint32_t node) const {
    return is_stage(node) ? stage_recorded_[node - spans_] : recorded_end(node);
  }
  int64_t node_replayed_end(uint32_t node) {
    if (state_[node] != 2) {  // a cycle: read at its recorded time
      ++r_.anomalies_.cycles;
      return node_recorded_end(node);
    }
    return is_stage(node) ? stage_replayed_[node - spans_] : r_.end_[node];
  }

  uint32_t stage_node(int64_t chain, int64_t stage) {
    auto [it, added] = stage_ids_.try_emplace({chain, stage}, static_cast<uint32_t>(stage_keys_.size()));
    if (added) {
      stage_keys_.emplace_back(chain, stage);
      stage_chunks_.emplace_back();
      stage_recorded_.push_back(INT64_MIN);
    }
    return it->second;
  }

  /// Lane order, each span's lane predecessor (the latest-ending non-wake span before it)
  /// and the frontier instants read.
  void index_spans() {
    r_.offset_.assign(t_.lanes.size() + 1, 0);
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) r_.offset_[l + 1] = r_.offset_[l] + t_.lanes[l].spans.size();
    spans_ = r_.offset_.back();
    lane_of_.resize(spans_);
    pred_.assign(spans_, kNone);
    r_.frontier_.assign(spans_, kNone);
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const SpanTable& s = t_.lanes[l].spans;
      uint32_t frontier = kNone;  // lane-local
      int64_t frontier_end = INT64_MIN;
      for (std::size_t i = 0; i < s.size(); ++i) {
        auto g = static_cast<uint32_t>(r_.offset_[l] + i);
        lane_of_[g] = l;
        if (frontier != kNone) pred_[g] = static_cast<uint32_t>(r_.offset_[l] + frontier);
        if (s.name[i] != names_.wake && s.end(i) >= frontier_end) {
          frontier = static_cast<uint32_t>(i);
          frontier_end = s.end(i);
        }
        r_.frontier_[g] = frontier;
      }
    }
  }

  /// Each chunk's readiness and each stage's chunks; each stage_wait's stage.
  void link_chains() {
    ready_.assign(spans_, kNone);
    for (uint32_t g = 0; g < spans_; ++g)
      if (name(g) == names_.publish) publishes_[field(g, &SpanTable::chain)].push_back(g);
    for (auto& [chain, list] : publishes_) {
      std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) { return ts(a) < ts(b); });
      if (list.size() > 1) ++r_.anomalies_.republished_chains;
    }
    for (uint32_t g = 0; g < spans_; ++g) {
      int64_t n = name(g);
      if (n != names_.chunk && n != names_.stage_wait) continue;
      uint32_t stage = stage_node(field(g, &SpanTable::chain), field(g, &SpanTable::stage));
      if (n == names_.stage_wait) {
        ready_[g] = static_cast<uint32_t>(spans_) + stage;
        continue;
      }
      stage_chunks_[stage].push_back(g);
      stage_recorded_[stage] = std::max(stage_recorded_[stage], recorded_end(g));
    }
    for (uint32_t g = 0; g < spans_; ++g)
      if (name(g) == names_.chunk) ready_[g] = readiness(g);
    stage_replayed_ = stage_recorded_;
  }

  /// A chunk's readiness: its chain's latest publish before it (stage 0), or its previous
  /// stage's completion; kNone when that was not recorded.
  uint32_t readiness(uint32_t g) const {
    int64_t chain = field(g, &SpanTable::chain), stage = field(g, &SpanTable::stage);
    if (stage == 0) {
      auto it = publishes_.find(chain);
      if (it == publishes_.end()) return kNone;
      auto after = std::upper_bound(it->second.begin(), it->second.end(), ts(g),
                                    [&](int64_t at, uint32_t p) { return at < ts(p); });
      return after == it->second.begin() ? it->second.front() : *(after - 1);
    }
    auto it = stage_ids_.find({chain, stage - 1});
    if (it == stage_ids_.end() || stage_chunks_[it->second].empty()) return kNone;
    return static_cast<uint32_t>(spans_) + it->second;
  }

  /// The replayed durations: balance, then each group's work scaled up to the cap.
  void change_durations() {
    dur_.resize(spans_);
    for (uint32_t g = 0; g < spans_; ++g) dur_[g] = recorded_dur(g);
    if (changes_.balance)
      for (const auto& chunks : stage_chunks_) {
        std::vector<int64_t> d;
        for (uint32_t g : chunks) d.push_back(recorded_dur(g));
        int64_t median = median_of(d);
        for (uint32_t g : chunks) dur_[g] = median;
      }
    scale(names_.chunk, changes_.chunks, false);
    scale(names_.publish, changes_.publishes, changes_.all_publishes);
  }

  double factor_of(const std::vector<GroupScale>& scales, bool every, int64_t category) const {
    if (every) return changes_.publish_factor;
    for (const GroupScale& s : scales)
      if (static_cast<int64_t>(s.category) == category) return s.factor;
    return 1;
  }

  void scale(int64_t span_name, const std::vector<GroupScale>& scales, bool every) {
    if (scales.empty() && !every) return;
    // The median of each scaled (group, stage): the cap of a chunk's work.
    PairMap<std::vector<int64_t>> samples;
    for (uint32_t g = 0; g < spans_; ++g) {
      if (name(g) != span_name) continue;
      int64_t category = field(g, &SpanTable::category);
      if (factor_of(scales, every, category) == 1) continue;
      int64_t stage = span_name == names_.chunk ? field(g, &SpanTable::stage) : 0;
      samples[{category, stage}].push_back(recorded_dur(g));
    }
    PairMap<int64_t> cap;
    for (auto& [key, durations] : samples)
      cap[key] = static_cast<int64_t>(std::llround(changes_.work_cap * static_cast<double>(median_of(durations))));
    for (uint32_t g = 0; g < spans_; ++g) {
      if (name(g) != span_name) continue;
      int64_t category = field(g, &SpanTable::category);
      double factor = factor_of(scales, every, category);
      if (factor == 1) continue;
      int64_t stage = span_name == names_.chunk ? field(g, &SpanTable::stage) : 0;
      int64_t work = std::min(dur_[g], cap[{category, stage}]);
      dur_[g] = static_cast<int64_t>(std::llround(static_cast<double>(work) * factor)) + (dur_[g] - work);
    }
  }

  /// The dependencies of a node, in a fixed order: a span's lane predecessor and its
  /// readiness (or its stage, for a stage_wait); a stage's chunks.
  std::size_t dependency_count(uint32_t node) const {
    if (is_stage(node)) return stage_chunks_[node - spans_].size();
    return 2;
  }
  uint32_t dependency(uint32_t node, std::size_t k) const {
    if (is_stage(node)) return stage_chunks_[node - spans_][k];
    return k == 0 ? pred_[node] : ready_[node];
  }

  void walk() {
    r_.ts_.resize(spans_);
    r_.end_.resize(spans_);
    state_.assign(spans_ + stage_keys_.size(), 0);
    std::vector<std::pair<uint32_t, std::size_t>> stack;
    for (uint32_t root = 0; root < state_.size(); ++root) {
      if (state_[root]) continue;
      stack.emplace_back(root, 0);
      state_[root] = 1;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < dependency_count(node)) {
          uint32_t dep = dependency(node, next++);
          if (dep != kNone && state_[dep] == 0) {
            state_[dep] = 1;
            stack.emplace_back(dep, 0);
          }
          continue;
        }
        uint32_t done = node;
        stack.pop_back();
        replay_node(done);
        state_[done] = 2;
      }
    }
  }

  void replay_node(uint32_t node) {
    if (is_stage(node)) {
      int64_t end = INT64_MIN;
      for (uint32_t g : stage_chunks_[node - spans_]) end = std::max(end, node_replayed_end(g));
      stage_replayed_[node - spans_] = end;
      return;
    }
    int64_t start = replay_start(node);
    r_.ts_[node] = start;
    r_.end_[node] = name(node) == names_.stage_wait ? wait_end(node, start) : start + dur_[node];
  }

  int64_t replay_start(uint32_t g) {
    int64_t at = ts(g);
    uint32_t pred = pred_[g];
    uint32_t ready = name(g) == names_.chunk ? ready_[g] : kNone;
    if (pred != kNone && at < recorded_end(pred)) {  // nested in its predecessor
      ++r_.anomalies_.nested;
      return (state_[pred] == 2 ? r_.ts_[pred] : ts(pred)) + (at - ts(pred));
    }
    if (pred == kNone && ready == kNone) return at;
    // The two predecessors' recorded and replayed times; the binding one is the later
    // (ties: the lane's), the chunk follows it by the recorded gap and the other's end.
    int64_t pred_recorded = pred == kNone ? INT64_MIN : recorded_end(pred);
    int64_t pred_replayed = pred == kNone ? INT64_MIN : node_replayed_end(pred);
    int64_t ready_recorded = INT64_MIN, ready_replayed = INT64_MIN;
    if (ready != kNone) ready_time(ready, at, &ready_recorded, &ready_replayed);
    bool by_ready = ready_recorded > pred_recorded;
    int64_t gap = at - (by_ready ? ready_recorded : pred_recorded);
    if (by_ready && gap < 0) ++r_.anomalies_.early_chunks;
    return std::max((by_ready ? ready_replayed : pred_replayed) + gap, by_ready ? pred_replayed : ready_replayed);
  }

  /// When a chunk's stage was ready: its publish's end, or the publish's start for a chunk
  /// claimed while the publish ran (the publish had queued the work before it returned: on
  /// real traces a preempted publish of 1.98 ms had its chunks claimed 5 us into it); its
  /// previous stage's completion.
  void ready_time(uint32_t ready, int64_t at, int64_t* recorded, int64_t* replayed) {
    *recorded = node_recorded_end(ready);
    *replayed = node_replayed_end(ready);
    if (!is_stage(ready) && at < *recorded && at >= ts(ready)) {
      ++r_.anomalies_.claimed_during_publish;
      *recorded = ts(ready);
      *replayed = r_.ts_[ready];
    }
  }

  /// A stage_wait ends at its stage's replayed completion plus its recorded wake-up (never
  /// before it starts); a stage without recorded chunks leaves it its duration.
  int64_t wait_end(uint32_t g, int64_t start) {
    uint32_t stage = ready_[g];
    if (stage == kNone || stage_chunks_[stage - spans_].empty()) return start + dur_[g];
    int64_t wake = recorded_end(g) - stage_recorded_[stage - spans_];
    if (changes_.no_wake) wake = std::min<int64_t>(wake, 0);
    return std::max(start, node_replayed_end(stage) + wake);
  }

  /// The trace's end: its recorded tail after the last work's end, after the replayed one.
  void measure_end() {
    int64_t recorded = INT64_MIN, replayed = INT64_MIN;
    for (uint32_t g = 0; g < spans_; ++g) {
      if (name(g) == names_.wake) continue;
      recorded = std::max(recorded, recorded_end(g));
      replayed = std::max(replayed, r_.end_[g]);
    }
    int64_t hi = whole_trace(t_).hi;
    r_.trace_end_ = recorded == INT64_MIN ? hi : replayed + (hi - recorded);
  }
};

Replay::Replay(const Trace& trace, const WhatIfChanges& changes) : trace_(trace) {
  Builder(trace, changes, this).run();
}

int64_t Replay::time_at(std::size_t lane, int64_t at) const {
  const SpanTable& s = trace_.lanes[lane].spans;
  // The spans that start by `at`: [0, after).
  std::size_t lo = 0, hi = s.size();
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (s.ts[mid] <= at) lo = mid + 1;
    else hi = mid;
  }
  std::size_t after = lo;
  int64_t replayed = at;
  if (after > 0) {
    uint32_t f = frontier_[offset_[lane] + after - 1];
    if (f != kNone) {
      std::size_t g = offset_[lane] + f;
      replayed = at >= s.end(f) ? end_[g] + (at - s.end(f)) : std::min(ts_[g] + (at - s.ts[f]), end_[g]);
    }
  }
  if (after < s.size()) replayed = std::min(replayed, ts_[offset_[lane] + after]);
  return replayed;
}

int64_t Replay::max_error_ns() const {
  int64_t worst = 0;
  for (std::size_t l = 0; l < trace_.lanes.size(); ++l) {
    const SpanTable& s = trace_.lanes[l].spans;
    for (std::size_t i = 0; i < s.size(); ++i) {
      worst = std::max(worst, std::abs(ts_[offset_[l] + i] - s.ts[i]));
      worst = std::max(worst, std::abs(end_[offset_[l] + i] - s.end(i)));
    }
  }
  return worst;
}

namespace {

/// The markers replayed: each at its lane's replayed time, in the same order.
Markers replayed_markers(const Markers& m, const Replay& replay) {
  Markers out = m;
  for (std::size_t i = 0; i < m.size(); ++i) {
    out.ts[i] = replay.time_at(static_cast<std::size_t>(m.lane[i]), m.ts[i]);
    if (i > 0) out.ts[i] = std::max(out.ts[i], out.ts[i - 1]);  // they keep their order
  }
  return out;
}

/// Recorded marker times and their replayed ones, sorted: a nested kind's bounds (its
/// coarser kinds' marker times) are looked up in it.
using TimeMap = std::vector<std::pair<int64_t, int64_t>>;

int64_t mapped(const TimeMap& map, int64_t at) {
  auto it = std::lower_bound(map.begin(), map.end(), std::make_pair(at, INT64_MIN));
  return it != map.end() && it->first == at ? it->second : at;
}

}  // namespace

WhatIfResult what_if(const Trace& trace, const WhatIfChanges& changes, const UnitRequest& unit_at) {
  WhatIfResult result;
  Replay recorded(trace, WhatIfChanges{});
  result.identity_error_ns = recorded.max_error_ns();
  result.spans = recorded.spans();
  Replay changed(trace, changes);
  result.anomalies = changed.anomalies();
  Range whole = whole_trace(trace);
  result.measured_ns = whole.length();
  result.predicted_ns = changed.trace_end() - whole.lo;

  std::vector<std::string> kinds = marker_kinds(trace);
  std::vector<Markers> markers = markers_of_kinds(trace, kinds);
  std::vector<Markers> moved;
  TimeMap times;
  for (const Markers& m : markers) {
    moved.push_back(replayed_markers(m, changed));
    for (std::size_t i = 0; i < m.size(); ++i) times.emplace_back(m.ts[i], moved.back().ts[i]);
  }
  std::sort(times.begin(), times.end());
  UnitPlanner planner(trace, unit_at);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (markers[k].size() == 0) continue;
    KindUnits plan = planner.plan(kinds[k], markers[k]);
    KindUnits replayed_plan = plan;
    replayed_plan.outer.hi = plan.rule.lane_stopped
                                 ? changed.time_at(static_cast<std::size_t>(markers[k].lane.back()), plan.outer.hi)
                                 : changed.trace_end();
    for (int64_t& b : replayed_plan.bounds) b = mapped(times, b);
    std::sort(replayed_plan.bounds.begin(), replayed_plan.bounds.end());
    WhatIfKind kind{kinds[k], plan.rule, cut_units(markers[k], plan), cut_units(moved[k], replayed_plan)};
    result.kinds.push_back(std::move(kind));
  }
  return result;
}

}  // namespace jqtrace
