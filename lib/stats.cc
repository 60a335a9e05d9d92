#include "stats.h"

#include <algorithm>

#include "jobque.h"

namespace jqtrace {
namespace {

enum class SpanKind : uint8_t { publish, chunk, stage_wait, wake, fifo_job, other };
constexpr const char* kKindNames[] = {"publish", "chunk", "stage_wait", "wake", "fifo_job", "other"};

/// Name id → jobque span kind, for every name of the trace.
std::vector<SpanKind> span_kinds(const Trace& t) {
  std::vector<SpanKind> kinds(t.names.size(), SpanKind::other);
  auto set = [&](std::string_view name, SpanKind k) {
    uint32_t id = t.names.find(name);
    if (id != Interner::kNone) kinds[id] = k;
  };
  set(kPublish, SpanKind::publish);
  set(kChunk, SpanKind::chunk);
  set(kStageWait, SpanKind::stage_wait);
  set(kWake, SpanKind::wake);
  set(kFifoJob, SpanKind::fifo_job);
  return kinds;
}

bool is_busy(SpanKind k) { return k == SpanKind::chunk || k == SpanKind::fifo_job || k == SpanKind::publish; }

struct Group {
  GroupStats stats;
  DurationSample sample;
};

/// An open span while walking a generic lane, to split its time into self and children.
struct OpenSpan {
  std::size_t group;
  int64_t end;
  int64_t clipped;
  int64_t children = 0;
};

std::vector<HistBucket> histogram(const std::vector<int64_t>& sorted) {
  std::vector<HistBucket> buckets;
  for (int64_t v : sorted) {
    int64_t lo = 0, hi = 1;
    if (v > 0) {
      lo = int64_t{1} << (63 - __builtin_clzll(static_cast<unsigned long long>(v)));
      hi = lo <= INT64_MAX / 2 ? lo * 2 : INT64_MAX;
    }
    if (buckets.empty() || buckets.back().lo_ns != lo) buckets.push_back({lo, hi, 0});
    ++buckets.back().count;
  }
  return buckets;
}

class StatsBuilder {
 public:
  StatsBuilder(const Trace& t, const SpanIndex& index, Range range, const StatsOptions& o)
      : t_(t), index_(index), r_(range), o_(o), kinds_(span_kinds(t)) {}

  RangeStats build() {
    s_.range = r_;
    s_.jobque = t_.jobque;
    s_.by = o_.by;
    s_.lanes = t_.lanes.size();
    make_fixed_groups();
    for (std::size_t lane = 0; lane < t_.lanes.size(); ++lane) {
      int64_t busy = t_.jobque ? walk_jobque_lane(lane) : walk_generic_lane(lane);
      s_.busy_ns += busy;
      add_lane(lane, busy);
    }
    finish_groups();
    double length = static_cast<double>(r_.length());
    s_.idle_pct = length > 0 ? 100.0 * (1.0 - static_cast<double>(s_.busy_ns) / (length * static_cast<double>(s_.lanes)))
                             : 100.0;
    s_.parallelism = length > 0 ? static_cast<double>(s_.busy_ns) / length : 0.0;
    return std::move(s_);
  }

 private:
  /// Groups known before the walk: every category (even unused: a gate may ask for it),
  /// every lane, every kind.
  void make_fixed_groups() {
    if (o_.by == GroupBy::category && t_.jobque)
      for (const Category& c : t_.categories) add_group(c.name, c.color);
    if (o_.by == GroupBy::lane)
      for (std::size_t l = 0; l < t_.lanes.size(); ++l) add_group(t_.lane_label(l), "");
    if (o_.by == GroupBy::kind && t_.jobque)
      for (const char* k : kKindNames) add_group(k, "");
  }

  std::size_t add_group(std::string name, std::string color) {
    groups_.push_back(Group{});
    groups_.back().stats.name = std::move(name);
    groups_.back().stats.color = std::move(color);
    return groups_.size() - 1;
  }

  /// The group of span i of lane, created on first sight for name and cat groupings.
  std::size_t group_of(std::size_t lane, std::size_t i, int64_t name, SpanKind kind) {
    const SpanTable& s = t_.lanes[lane].spans;
    switch (o_.by) {
      case GroupBy::category: return t_.jobque ? static_cast<std::size_t>(s.category[i]) : by_key(s.cat[i], true);
      case GroupBy::lane: return lane;
      case GroupBy::kind: return t_.jobque ? static_cast<std::size_t>(kind) : by_key(name + 1, false);
      case GroupBy::name: return by_key(name + 1, false);
      case GroupBy::cat: return by_key(s.cat[i], true);
    }
    return 0;
  }

  /// key: interned id + 1 (0: none).
  std::size_t by_key(int64_t key, bool is_cat) {
    std::size_t k = static_cast<std::size_t>(key);
    if (k >= group_of_key_.size()) group_of_key_.resize(t_.names.size() + 1, SIZE_MAX);
    if (group_of_key_[k] == SIZE_MAX) {
      std::string name = key == 0 ? (is_cat ? "(no cat)" : "(no name)")
                                  : std::string(t_.names.view(static_cast<uint32_t>(key - 1)));
      group_of_key_[k] = add_group(std::move(name), "");
    }
    return group_of_key_[k];
  }

  bool wants_duration(SpanKind kind) const {
    if (!o_.distributions && !o_.hist) return false;
    if (!t_.jobque) return true;
    return (o_.by == GroupBy::category || o_.by == GroupBy::lane) ? kind == SpanKind::chunk : true;
  }

  /// Calls f(row, ts, dur) for the spans of lane that overlap the range, in time order.
  template <typename F>
  void for_each_overlapping(std::size_t lane, F&& f) const {
    const SpanTable& s = t_.lanes[lane].spans;
    for (std::size_t i = index_.first_candidate(lane, r_.lo); i < s.size(); ++i) {
      int64_t ts = s.ts[i];
      if (ts > r_.hi) break;
      int64_t dur = s.dur[i];
      if (ts + dur >= r_.lo) f(i, ts, dur);
    }
  }

  /// SPEC §2 for jobque traces: busy is the clipped time of chunk, fifo_job and publish.
  int64_t walk_jobque_lane(std::size_t lane) {
    const SpanTable& s = t_.lanes[lane].spans;
    int64_t busy = 0;
    for_each_overlapping(lane, [&](std::size_t i, int64_t ts, int64_t dur) {
      int64_t end = ts + dur;
      int64_t name = s.name[i];
      SpanKind kind = kinds_[static_cast<std::size_t>(name)];
      Group& g = groups_[group_of(lane, i, name, kind)];
      ++s_.events;
      ++g.stats.events;
      int64_t clipped = r_.clipped(ts, end);
      if (is_busy(kind)) {
        busy += clipped;
        g.stats.busy_ns += clipped;
      }
      if (kind == SpanKind::stage_wait) s_.wait_ns += clipped;
      if (kind == SpanKind::publish) ++s_.publishes;
      if (wants_duration(kind)) g.sample.add(dur);
    });
    return busy;
  }

  /// Generic traces: busy is the time the lane has at least one span open; each group
  /// gets its spans' clipped time (total) and that minus direct children (self).
  int64_t walk_generic_lane(std::size_t lane) {
    const SpanTable& s = t_.lanes[lane].spans;
    std::vector<OpenSpan> open;
    int64_t busy = 0, run_start = 0, run_end = 0;
    bool in_run = false;
    auto close_top = [&]() {
      const OpenSpan& o = open.back();
      groups_[o.group].stats.self_ns += std::max<int64_t>(0, o.clipped - o.children);
      open.pop_back();
    };
    for_each_overlapping(lane, [&](std::size_t i, int64_t ts, int64_t dur) {
      int64_t end = ts + dur;
      int64_t name = s.name[i];
      std::size_t gi = group_of(lane, i, name, SpanKind::other);
      Group& g = groups_[gi];
      ++s_.events;
      ++g.stats.events;
      int64_t clipped = r_.clipped(ts, end);
      g.stats.total_ns += clipped;
      if (wants_duration(SpanKind::other)) g.sample.add(dur);
      // Spans come by start time, longer first on ties: an open span that ends before
      // this one does (or as it starts) is not its parent.
      while (!open.empty() && (open.back().end <= ts || open.back().end < end)) close_top();
      if (!open.empty()) open.back().children += clipped;
      open.push_back({gi, end, clipped});
      // The union of span time, clipped to the range.
      int64_t a = std::max(ts, r_.lo), b = std::min(end, r_.hi);
      if (b <= a) return;
      if (in_run && a <= run_end) {
        run_end = std::max(run_end, b);
      } else {
        if (in_run) busy += run_end - run_start;
        run_start = a;
        run_end = b;
        in_run = true;
      }
    });
    while (!open.empty()) close_top();
    if (in_run) busy += run_end - run_start;
    return busy;
  }

  void add_lane(std::size_t lane, int64_t busy) {
    LaneStats ls;
    ls.lane = t_.lane_label(lane);
    ls.name = t_.lanes[lane].thread_name;
    ls.busy_ns = busy;
    double length = static_cast<double>(r_.length());
    ls.idle_pct = length > 0 ? 100.0 * (1.0 - static_cast<double>(busy) / length) : 100.0;
    s_.lanes_detail.push_back(std::move(ls));
  }

  void finish_groups() {
    int64_t total = 0;
    for (Group& g : groups_) {
      if (!t_.jobque) g.stats.busy_ns = g.stats.self_ns;
      total += g.stats.busy_ns;
    }
    for (Group& g : groups_) {
      g.stats.share_pct = total > 0 ? 100.0 * static_cast<double>(g.stats.busy_ns) / static_cast<double>(total) : 0.0;
      if (o_.hist) g.stats.hist = histogram(g.sample.sorted());
      if (o_.distributions) g.stats.dur = g.sample.summarize();
      s_.groups.push_back(std::move(g.stats));
    }
    std::stable_sort(s_.groups.begin(), s_.groups.end(), [](const GroupStats& a, const GroupStats& b) {
      return a.busy_ns != b.busy_ns ? a.busy_ns > b.busy_ns : a.name < b.name;
    });
  }

  const Trace& t_;
  const SpanIndex& index_;
  Range r_;
  StatsOptions o_;
  std::vector<SpanKind> kinds_;
  std::vector<Group> groups_;
  std::vector<std::size_t> group_of_key_;
  RangeStats s_;
};

}  // namespace

SpanIndex::SpanIndex(const Trace& trace) {
  for (const Lane& lane : trace.lanes) {
    const SpanTable& s = lane.spans;
    std::vector<int64_t> blocks((s.size() + kBlock - 1) / kBlock);
    int64_t running = INT64_MIN;
    for (std::size_t i = 0; i < s.size(); ++i) {
      running = std::max(running, s.end(i));
      blocks[i / kBlock] = running;
    }
    block_max_end_.push_back(std::move(blocks));
  }
}

std::size_t SpanIndex::first_candidate(std::size_t lane, int64_t lo) const {
  const std::vector<int64_t>& b = block_max_end_[lane];
  return static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), lo) - b.begin()) * kBlock;
}

RangeStats compute_stats(const Trace& trace, const SpanIndex& index, Range range, const StatsOptions& options) {
  return StatsBuilder(trace, index, range, options).build();
}

const char* group_by_name(GroupBy by) {
  switch (by) {
    case GroupBy::category: return "category";
    case GroupBy::name: return "name";
    case GroupBy::lane: return "lane";
    case GroupBy::kind: return "kind";
    case GroupBy::cat: return "cat";
  }
  return "?";
}

bool parse_group_by(std::string_view name, GroupBy* by) {
  for (GroupBy b : {GroupBy::category, GroupBy::name, GroupBy::lane, GroupBy::kind, GroupBy::cat})
    if (name == group_by_name(b)) {
      *by = b;
      return true;
    }
  return false;
}

}  // namespace jqtrace
