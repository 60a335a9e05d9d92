#include "latency.h"

#include <algorithm>
#include <array>

namespace jqtrace {
namespace {

constexpr std::array<const char*, kLatencyClasses> kClassNames = {"work",      "publish", "imbalance", "wake-up",
                                                                  "wait",      "span",    "outside",   "not recorded"};

std::size_t slot(std::size_t group, LatencyClass c) { return group * kLatencyClasses + static_cast<std::size_t>(c); }

/// The lane with the most markers (counts a lane; ties: the earlier lane); SIZE_MAX for none.
std::size_t most_marked_lane(const std::vector<uint64_t>& counts) {
  std::size_t best = SIZE_MAX;
  for (std::size_t l = 0; l < counts.size(); ++l)
    if (counts[l] > 0 && (best == SIZE_MAX || counts[l] > counts[best])) best = l;
  return best;
}

/// Longest first; ties: the earlier first (waits and pieces alike).
template <typename Part>
bool longer_part(const Part& a, const Part& b) {
  return a.ns != b.ns ? a.ns > b.ns : a.ts_ns < b.ts_ns;
}

/// Keeps the `keep` longest of parts (unordered).
template <typename Part>
void keep_longest_of(std::vector<Part>* parts, std::size_t keep) {
  if (parts->size() <= keep) return;
  std::nth_element(parts->begin(), parts->begin() + static_cast<std::ptrdiff_t>(keep), parts->end(), longer_part<Part>);
  parts->resize(keep);
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

std::size_t latency_lane(const Markers& markers) {
  std::vector<uint64_t> counts;
  for (int64_t l : markers.lane) {
    auto lane = static_cast<std::size_t>(l);
    if (lane >= counts.size()) counts.resize(lane + 1, 0);
    ++counts[lane];
  }
  return most_marked_lane(counts);
}

std::size_t latency_lane(const Trace& trace, std::string_view kind, bool* by_markers) {
  std::vector<std::string> kinds = kind.empty() ? marker_kinds(trace) : std::vector<std::string>{std::string(kind)};
  std::vector<uint64_t> counts(trace.lanes.size(), 0);
  for_each_kind_markers(trace, kinds, [&](std::size_t, const Markers& m) {
    for (int64_t l : m.lane) ++counts[static_cast<std::size_t>(l)];
  });
  std::size_t best = most_marked_lane(counts);
  if (by_markers) *by_markers = best != SIZE_MAX;
  if (best != SIZE_MAX || !trace.jobque) return best;
  return caller_lane(trace);  // no markers: the caller, as gaps finds it (SPEC §2)
}

const LatencyAnalysis* LatencyByLane::of(std::size_t lane) {
  if (lane == SIZE_MAX) return nullptr;
  auto& a = analyses_[lane];
  if (!a) a = std::make_unique<LatencyAnalysis>(trace_, index_, lane, whole_trace(trace_));
  return a.get();
}

LatencyAnalysis::LatencyAnalysis(const Trace& trace, const SpanIndex& index, std::size_t lane, Range outer)
    : trace_(trace), index_(index), lane_(lane), names_(JobqueNames::found(trace.names)) {
  stopped_ = lane_stopped_early(trace, lane, &stop_ns_);
  find_groups(outer);
  if (trace.jobque) find_stage_ends(outer);
}

/// The groups the lane's spans in outer have, in the trace's order of categories (cat ids
/// for a generic trace), then outside and not recorded.
void LatencyAnalysis::find_groups(Range outer) {
  const SpanTable& s = trace_.lanes[lane_].spans;
  auto [begin, end] = index_.candidate_rows(trace_, lane_, outer);
  // Keys are category indices, or cat ids + 1. Only those the lane uses are kept: a trace
  // can have many names and many marker lanes (an analysis each in export and diff).
  std::vector<int64_t> keys;
  for (std::size_t i = begin; i < end; ++i) {
    int64_t key = trace_.jobque ? s.category[i] : s.cat[i];
    if (!group_of_key_.find(key)) {
      group_of_key_[key] = 0;
      keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end());
  for (int64_t key : keys) {
    group_of_key_[key] = static_cast<uint32_t>(groups_.size());
    if (trace_.jobque) {
      const Category& c = trace_.categories[static_cast<std::size_t>(key)];
      groups_.push_back({c.name, key, c.color, c.guessed});
    } else {
      groups_.push_back({key == 0 ? std::string("(no cat)") : std::string(trace_.names.view(static_cast<uint32_t>(key - 1))),
                         key, "", false});
    }
  }
  groups_.push_back({std::string(kOutsideGroup), kOutsideGroupKey, "", false});
  groups_.push_back({std::string(kNotRecordedGroup), kNotRecordedGroupKey, "", false});
}

void LatencyAnalysis::StageEnds::plan(const SpanTable& s, std::size_t begin, std::size_t end, const JobqueNames& names) {
  int64_t key = 0, lo = INT64_MAX, hi = INT64_MIN;
  std::size_t waits = 0;
  for (std::size_t i = begin; i < end; ++i)
    if (s.name[i] == names.stage_wait && stage_key(s.chain[i], s.stage[i], &key)) {
      lo = std::min(lo, s.chain[i]);
      hi = std::max(hi, s.chain[i]);
      ++waits;
    }
  if (waits == 0) return;
  // Dense when the ids span at most 4 a wait (the tracer's step is 2): memory stays linear.
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  bool dense = span < 4 * static_cast<uint64_t>(waits) + 1024;
  if (!dense) {
    for (std::size_t i = begin; i < end; ++i)
      if (s.name[i] == names.stage_wait && stage_key(s.chain[i], s.stage[i], &key)) sparse_[key] = INT64_MIN;
    return;
  }
  lo_ = lo;
  stages_.assign(span + 1, 0);
  for (std::size_t i = begin; i < end; ++i)
    if (s.name[i] == names.stage_wait && stage_key(s.chain[i], s.stage[i], &key)) {
      uint8_t& n = stages_[static_cast<std::size_t>(s.chain[i] - lo)];
      n = std::max<uint8_t>(n, static_cast<uint8_t>(s.stage[i] + 1));
    }
  first_.assign(span + 1, 0);
  std::size_t slots = 0;
  for (std::size_t c = 0; c <= span; ++c) {
    first_[c] = static_cast<uint32_t>(slots);
    slots += stages_[c];
  }
  ends_.assign(slots, INT64_MIN);
}

int64_t* LatencyAnalysis::StageEnds::find(int64_t chain, int64_t stage) {
  if (!stages_.empty()) {
    uint64_t at = static_cast<uint64_t>(chain) - static_cast<uint64_t>(lo_);
    if (at >= stages_.size() || stage < 0 || stage >= stages_[at]) return nullptr;
    return &ends_[first_[at] + static_cast<std::size_t>(stage)];
  }
  int64_t key = 0;
  return sparse_.size() && stage_key(chain, stage, &key) ? sparse_.find(key) : nullptr;
}

/// For every stage the lane waits on in outer, when its last chunk ended on any lane (the
/// whole trace: a stage's last chunk can end outside the range).
void LatencyAnalysis::find_stage_ends(Range outer) {
  auto [begin, end] = index_.candidate_rows(trace_, lane_, outer);
  stage_ends_.plan(trace_.lanes[lane_].spans, begin, end, names_);
  if (stage_ends_.empty()) return;
  for (const Lane& lane : trace_.lanes) {
    const SpanTable& t = lane.spans;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.name[i] != names_.chunk) continue;
      if (int64_t* last = stage_ends_.find(t.chain[i], t.stage[i])) *last = std::max(*last, t.end(i));
    }
  }
}

/// The chunk of each wait's stage that ended last (the first of equal ends: lane order,
/// then time order), and when the stage's first chunk started: one pass over the chunks
/// for the few waits listed.
void LatencyAnalysis::describe_waits(std::vector<LatencyWait>* waits) const {
  if (waits->empty()) return;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const LatencyWait& w : *waits) {
    lo = std::min(lo, w.chain);
    hi = std::max(hi, w.chain);
  }
  for (std::size_t l = 0; l < trace_.lanes.size(); ++l) {
    const SpanTable& t = trace_.lanes[l].spans;
    for (std::size_t i = 0; i < t.size(); ++i) {
      int64_t chain = t.chain[i];
      if (chain < lo || chain > hi || t.name[i] != names_.chunk) continue;
      for (LatencyWait& w : *waits) {
        if (w.chain != chain || w.stage != t.stage[i]) continue;
        w.stage_first_ts = std::min(w.stage_first_ts, t.ts[i]);
        if (t.end(i) > w.last_chunk_ts + w.last_chunk_dur || w.last_lane == SIZE_MAX) {
          w.last_lane = l;
          w.last_chunk_ts = t.ts[i];
          w.last_chunk_dur = t.dur[i];
          w.last_chunk_arg = t.arg[i];
        }
      }
    }
  }
}

std::size_t LatencyAnalysis::group_of(std::size_t row) const {
  const SpanTable& s = trace_.lanes[lane_].spans;
  // Every span of the outer range has a group (measure's contract keeps ranges inside it).
  const uint32_t* g = group_of_key_.find(trace_.jobque ? s.category[row] : s.cat[row]);
  return g ? *g : outside_group();
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
    if (max_waits == 0 || (c != LatencyClass::publish && c != LatencyClass::work)) return;
    const SpanTable& s = a.trace_.lanes[a.lane_].spans;
    std::vector<LatencyPiece>& pieces = c == LatencyClass::publish ? parts.publishes : parts.own_chunks;
    pieces.push_back({from, to - from, s.dur[row], s.chain[row], s.stage[row], group});
    if (pieces.size() >= 4 * max_waits + 64) keep_longest_of(&pieces, max_waits);
  }

  /// A wait on a stage: imbalance until its last chunk ended, wake-up from then on.
  void stage_wait(std::size_t row, std::size_t group, int64_t from, int64_t to) {
    const SpanTable& s = a.trace_.lanes[a.lane_].spans;
    const int64_t* last_end = a.stage_ends_.find(s.chain[row], s.stage[row]);
    if (!last_end || *last_end == INT64_MIN) return add(group, LatencyClass::wait, to - from);
    int64_t split = std::clamp(*last_end, from, to);
    add(group, LatencyClass::imbalance, split - from);
    add(group, LatencyClass::wake_up, to - split);
    if (max_waits == 0 || split == from) return;
    LatencyWait w;
    w.ts_ns = from;
    w.ns = split - from;
    w.wake_ns = to - split;
    w.chain = s.chain[row];
    w.stage = s.stage[row];
    w.group = group;
    parts.waits.push_back(w);
    if (parts.waits.size() >= 4 * max_waits + 64) keep_longest();
  }

  void keep_longest() {
    keep_longest_of(&parts.waits, max_waits);
    keep_longest_of(&parts.publishes, max_waits);
    keep_longest_of(&parts.own_chunks, max_waits);
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
  std::sort(parts.waits.begin(), parts.waits.end(), longer_part<LatencyWait>);
  std::sort(parts.publishes.begin(), parts.publishes.end(), longer_part<LatencyPiece>);
  std::sort(parts.own_chunks.begin(), parts.own_chunks.end(), longer_part<LatencyPiece>);
  describe_waits(&parts.waits);
  return parts;
}

}  // namespace jqtrace
