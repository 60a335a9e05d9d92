#include "latency.h"

#include <algorithm>
#include <array>

namespace jqtrace {
namespace {

constexpr std::array<const char*, kLatencyClasses> kClassNames = {"work",      "publish", "imbalance", "wake-up",
                                                                  "wait",      "span",    "outside",   "not recorded"};

std::size_t slot(std::size_t group, LatencyClass c) { return group * kLatencyClasses + static_cast<std::size_t>(c); }

/// Longest first; ties: the earlier first.
bool longer_wait(const LatencyWait& a, const LatencyWait& b) {
  return a.ns != b.ns ? a.ns > b.ns : a.ts_ns < b.ts_ns;
}

}  // namespace

const char* latency_class_name(LatencyClass c) { return kClassNames[static_cast<std::size_t>(c)]; }

bool parse_latency_class(std::string_view text, LatencyClass* c) {
  for (std::size_t k = 0; k < kLatencyClasses; ++k) {
    std::string_view name = kClassNames[k];
    bool underscored = name.size() == text.size() && std::equal(name.begin(), name.end(), text.begin(), [](char n, char t) {
                         return n == t || ((n == '-' || n == ' ') && t == '_');
                       });
    if (name == text || underscored) {
      *c = static_cast<LatencyClass>(k);
      return true;
    }
  }
  return false;
}

int64_t LatencyParts::of_class(LatencyClass c) const {
  int64_t sum = 0;
  for (std::size_t at = static_cast<std::size_t>(c); at < ns.size(); at += kLatencyClasses) sum += ns[at];
  return sum;
}

int64_t LatencyParts::of_group(std::size_t group) const {
  int64_t sum = 0;
  for (std::size_t k = 0; k < kLatencyClasses; ++k) sum += ns[group * kLatencyClasses + k];
  return sum;
}

int64_t LatencyParts::total() const {
  int64_t sum = 0;
  for (int64_t v : ns) sum += v;
  return sum;
}

bool stage_key(int64_t chain, int64_t stage, int64_t* key) {
  constexpr int64_t kMaxChain = INT64_MAX / 16;
  if (stage < 0 || stage > 7 || chain > kMaxChain || chain < -kMaxChain) return false;
  *key = chain * 8 + stage;
  return true;
}

std::size_t latency_lane(const Trace& trace, std::string_view kind, bool* by_markers) {
  std::vector<std::string> kinds = kind.empty() ? marker_kinds(trace) : std::vector<std::string>{std::string(kind)};
  std::vector<uint64_t> markers(trace.lanes.size(), 0);
  for_each_kind_markers(trace, kinds, [&](std::size_t, const Markers& m) {
    for (int64_t l : m.lane) ++markers[static_cast<std::size_t>(l)];
  });
  std::size_t best = SIZE_MAX;
  for (std::size_t l = 0; l < markers.size(); ++l)
    if (markers[l] > 0 && (best == SIZE_MAX || markers[l] > markers[best])) best = l;
  if (by_markers) *by_markers = best != SIZE_MAX;
  if (best != SIZE_MAX || !trace.jobque) return best;
  // No markers: the caller, as gaps finds it (SPEC §2).
  for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
    const Lane& lane = trace.lanes[l];
    if (lane.spans.size() == 0 || lane.tid.is_string) continue;
    if (best == SIZE_MAX || lane.tid.number > trace.lanes[best].tid.number) best = l;
  }
  return best;
}

LatencyAnalysis::LatencyAnalysis(const Trace& trace, const SpanIndex& index, std::size_t lane, Range outer)
    : trace_(trace), index_(index), lane_(lane), names_(JobqueNames::found(trace.names)) {
  for (const StoppedLane& s : lanes_stopped_early(trace))
    if (s.lane == lane) {
      stopped_ = true;
      stop_ns_ = s.stop_ns;
    }
  find_groups(outer);
  if (trace.jobque) find_stage_ends(outer);
}

/// The groups the lane's spans in outer have, in the trace's order of categories (cat ids
/// for a generic trace), then outside and not recorded.
void LatencyAnalysis::find_groups(Range outer) {
  const SpanTable& s = trace_.lanes[lane_].spans;
  auto [begin, end] = index_.candidate_rows(trace_, lane_, outer);
  std::vector<int64_t> keys;
  FlatMap<bool> seen;
  for (std::size_t i = begin; i < end; ++i) {
    int64_t key = trace_.jobque ? s.category[i] : s.cat[i];
    if (!seen.find(key)) {
      seen[key] = true;
      keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end());
  for (int64_t key : keys) {
    group_of_key_[key] = static_cast<uint32_t>(groups_.size());
    if (trace_.jobque) {
      const Category& c = trace_.categories[static_cast<std::size_t>(key)];
      groups_.push_back({c.name, c.color, c.guessed});
    } else {
      groups_.push_back({key == 0 ? std::string("(no cat)") : std::string(trace_.names.view(static_cast<uint32_t>(key - 1))),
                         "", false});
    }
  }
  groups_.push_back({std::string(kOutsideGroup), "", false});
  groups_.push_back({std::string(kNotRecordedGroup), "", false});
}

/// For every stage the lane waits on in outer, where its chunks ran on any lane (the whole
/// trace: a stage's last chunk can end outside the range).
void LatencyAnalysis::find_stage_ends(Range outer) {
  const SpanTable& s = trace_.lanes[lane_].spans;
  auto [begin, end] = index_.candidate_rows(trace_, lane_, outer);
  int64_t key = 0, lo = INT64_MAX, hi = INT64_MIN;
  for (std::size_t i = begin; i < end; ++i)
    if (s.name[i] == names_.stage_wait && stage_key(s.chain[i], s.stage[i], &key)) {
      stages_[key];
      lo = std::min(lo, key);
      hi = std::max(hi, key);
    }
  if (stages_.size() == 0) return;
  for (std::size_t l = 0; l < trace_.lanes.size(); ++l) {
    const SpanTable& t = trace_.lanes[l].spans;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.name[i] != names_.chunk || !stage_key(t.chain[i], t.stage[i], &key) || key < lo || key > hi) continue;
      StageChunks* c = stages_.find(key);
      if (!c) continue;
      int64_t ts = t.ts[i], end_ns = t.end(i);
      c->first_ts = std::min(c->first_ts, ts);
      if (end_ns > c->last_end) {  // the first of equal ends: file order on one lane, lane order across
        c->last_end = end_ns;
        c->last_ts = ts;
        c->last_dur = t.dur[i];
        c->last_arg = t.arg[i];
        c->last_lane = l;
      }
    }
  }
}

std::size_t LatencyAnalysis::group_of(std::size_t row) const {
  const SpanTable& s = trace_.lanes[lane_].spans;
  const uint32_t* g = group_of_key_.find(trace_.jobque ? s.category[row] : s.cat[row]);
  return g ? *g : outside_group();  // a span outside the outer range (measure's contract says none)
}

LatencyClass LatencyAnalysis::class_of(std::size_t row) const {
  if (!trace_.jobque) return LatencyClass::span;
  int64_t name = trace_.lanes[lane_].spans.name[row];
  if (name == names_.chunk) return LatencyClass::work;
  if (name == names_.publish) return LatencyClass::publish;
  if (name == names_.stage_wait) return LatencyClass::wait;  // split by Walk::stage_wait when its stage is known
  return LatencyClass::span;
}

/// One range's walk: every instant of [lo, hi] goes to exactly one part.
struct LatencyAnalysis::Walk {
  const LatencyAnalysis& a;
  LatencyParts& parts;
  std::size_t max_waits;

  void add(std::size_t group, LatencyClass c, int64_t ns) {
    if (ns > 0) parts.ns[slot(group, c)] += ns;
  }

  /// [from, to) in no event: outside, or not recorded once the lane had stopped.
  void gap(int64_t from, int64_t to) {
    if (to <= from) return;
    int64_t split = a.stopped_ ? std::clamp(a.stop_ns_, from, to) : to;
    add(a.outside_group(), LatencyClass::outside, split - from);
    add(a.not_recorded_group(), LatencyClass::not_recorded, to - split);
  }

  /// [from, to) of span row.
  void span(std::size_t row, int64_t from, int64_t to) {
    std::size_t group = a.group_of(row);
    LatencyClass c = a.class_of(row);
    if (c == LatencyClass::wait) return stage_wait(row, group, from, to);
    add(group, c, to - from);
  }

  /// A wait on a stage: imbalance until its last chunk ended, wake-up from then on.
  void stage_wait(std::size_t row, std::size_t group, int64_t from, int64_t to) {
    const SpanTable& s = a.trace_.lanes[a.lane_].spans;
    int64_t key = 0;
    const StageChunks* c = stage_key(s.chain[row], s.stage[row], &key) ? a.stages_.find(key) : nullptr;
    if (!c || c->last_end == INT64_MIN) return add(group, LatencyClass::wait, to - from);
    int64_t split = std::clamp(c->last_end, from, to);
    add(group, LatencyClass::imbalance, split - from);
    add(group, LatencyClass::wake_up, to - split);
    if (max_waits == 0 || split == from) return;
    parts.waits.push_back({from, split - from, to - split, s.chain[row], s.stage[row], group, c->last_lane,
                           c->last_arg, c->last_ts, c->last_dur, c->first_ts});
    if (parts.waits.size() >= 4 * max_waits + 64) keep_longest();
  }

  void keep_longest() {
    auto& w = parts.waits;
    if (w.size() > max_waits) {
      std::nth_element(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(max_waits), w.end(), longer_wait);
      w.resize(max_waits);
    }
  }
};

LatencyParts LatencyAnalysis::measure(Range r, std::size_t max_waits) const {
  LatencyParts parts;
  parts.range = r;
  parts.ns.assign(groups_.size() * kLatencyClasses, 0);
  Walk walk{*this, parts, max_waits};
  const SpanTable& s = trace_.lanes[lane_].spans;
  auto [begin, end] = index_.candidate_rows(trace_, lane_, r);
  // Spans are sorted by start (a parent before its children): each instant goes to the
  // earliest-started span covering it, so a span's children and overlaps add nothing twice.
  int64_t covered = r.lo;
  for (std::size_t i = begin; i < end; ++i) {
    int64_t from = std::max(s.ts[i], covered), to = std::min(s.end(i), r.hi);
    if (to <= from) continue;
    walk.gap(covered, from);
    walk.span(i, from, to);
    covered = to;
  }
  walk.gap(covered, r.hi);
  walk.keep_longest();
  std::sort(parts.waits.begin(), parts.waits.end(), longer_wait);
  return parts;
}

}  // namespace jqtrace
