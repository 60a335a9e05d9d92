#include "stats.h"

#include <algorithm>

#include "flat_map.h"
#include "jobque.h"
#include "parallel.h"

namespace jqtrace {
namespace {

enum class SpanKind : uint8_t { publish, chunk, stage_wait, wake, fifo_job, other };
constexpr const char* kKindNames[] = {"publish", "chunk", "stage_wait", "wake", "fifo_job", "other"};

/// Name id → jobque span kind, for every name of the trace.
std::vector<SpanKind> span_kinds(const Trace& t) {
  std::vector<SpanKind> kinds(t.names.size(), SpanKind::other);
  JobqueNames names = JobqueNames::found(t.names);
  auto set = [&](uint32_t id, SpanKind k) {
    if (id != Interner::kNone) kinds[id] = k;
  };
  set(names.publish, SpanKind::publish);
  set(names.chunk, SpanKind::chunk);
  set(names.stage_wait, SpanKind::stage_wait);
  set(names.wake, SpanKind::wake);
  set(names.fifo_job, SpanKind::fifo_job);
  return kinds;
}

/// Busy time (SPEC §2), by kind: the test JobqueNames::busy makes by name.
bool is_busy(SpanKind k) { return k == SpanKind::chunk || k == SpanKind::fifo_job || k == SpanKind::publish; }

/// What some spans add to one group.
struct GroupTally {
  uint64_t events = 0;
  int64_t busy_ns = 0, total_ns = 0, self_ns = 0;
  DurationSample sample;

  void absorb(GroupTally&& t) {
    events += t.events;
    busy_ns += t.busy_ns;
    total_ns += t.total_ns;
    self_ns += t.self_ns;
    sample.absorb(std::move(t.sample));
  }
};

struct Group {
  GroupStats stats;
  GroupTally tally;
  std::vector<GroupTally*> parts;  ///< the slices' tallies of this group, in slice order
};

/// Rows [begin, end) of a lane's spans: a slice walked on its own.
struct Slice {
  std::size_t lane, begin, end;
};

/// What the walk over one slice adds up. Groups are known by slot here (a fixed group's
/// index, or the key of a group made on first sight); the join makes groups from slots in
/// the order the slices first saw them, which is the order one walk over everything would.
class SliceTally {
 public:
  /// slots: how many there can be; rows: the spans the slice walks. An array indexed by
  /// slot when there are few slots (up to kDenseSlots) and the slice is not much smaller
  /// than them; else a hash table (keyed by the names of a trace with thousands, or a
  /// slice of a lane with a handful of spans), so that a slice, and a unit's stats for each
  /// of thousands of units, costs what it sees: a million lanes of one span each and 4,000
  /// names once took 4,000 slots a lane (14 GB).
  SliceTally(std::size_t slots, std::size_t rows)
      : local_(0, slots <= kDenseSlots && slots <= 2 * rows + 64 ? static_cast<int64_t>(slots) - 1 : -1,
               kDenseSlots) {}
  GroupTally& at(std::size_t slot) {
    uint32_t& k = local_[static_cast<int64_t>(slot)];  // index + 1; 0: not seen yet
    if (k == 0) {
      groups_.push_back({slot, GroupTally{}});
      k = static_cast<uint32_t>(groups_.size());
    }
    return groups_[k - 1].second;
  }
  /// (slot, tally) in first-seen order.
  std::vector<std::pair<std::size_t, GroupTally>>& groups() { return groups_; }

  uint64_t events = 0, publishes = 0;
  int64_t busy_ns = 0, wait_ns = 0;

 private:
  static constexpr std::size_t kDenseSlots = 4096;
  IdMap<uint32_t> local_;
  std::vector<std::pair<std::size_t, GroupTally>> groups_;
};

/// An open span while walking a generic lane, to split its time into self and children.
struct OpenSpan {
  std::size_t slot;
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

  /// Walks the slices on o_.threads threads, joins them in order, then summarises the
  /// groups (also in parallel): the result is the same at any thread count.
  RangeStats build() {
    s_.range = r_;
    s_.jobque = t_.jobque;
    s_.by = o_.by;
    s_.lanes = t_.lanes.size();
    make_fixed_groups();
    std::vector<Slice> slices = make_slices();
    std::vector<SliceTally> tallies;
    tallies.reserve(slices.size());
    for (const Slice& slice : slices) tallies.emplace_back(slot_count(), slice.end - slice.begin);
    run_parallel(slices.size(), o_.threads, [&](std::size_t k) {
      if (t_.jobque) walk_jobque(slices[k], tallies[k]);
      else walk_generic(slices[k], tallies[k]);
    });
    std::vector<int64_t> lane_busy(t_.lanes.size(), 0);
    for (std::size_t k = 0; k < slices.size(); ++k) {
      lane_busy[slices[k].lane] += tallies[k].busy_ns;
      join(tallies[k]);
    }
    for (std::size_t lane = 0; lane < t_.lanes.size(); ++lane) {
      s_.busy_ns += lane_busy[lane];
      if (o_.lanes) add_lane(lane, lane_busy[lane]);
    }
    // Each group takes in its slices' tallies (in slice order) and is summarised on its
    // own: the samples' copying and their order statistics go on the threads.
    run_parallel(groups_.size(), o_.threads, [&](std::size_t g) { summarize_group(groups_[g]); });
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
      for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
        GroupStats& g = groups_[add_group(t_.lane_label(l), "")].stats;
        auto id = [&](const ProcessId& p) { return p.is_string ? std::string(t_.names.view(p.text)) : std::to_string(p.number); };
        g.pid = id(t_.lanes[l].pid);
        g.tid = id(t_.lanes[l].tid);
        g.thread = t_.lanes[l].thread_name;
      }
    if (o_.by == GroupBy::kind && t_.jobque)
      for (const char* k : kKindNames) add_group(k, "");
  }

  /// True when groups are made on first sight (names, cats); else the slot is the group.
  bool keyed() const {
    if (o_.by == GroupBy::lane) return false;
    if (t_.jobque && (o_.by == GroupBy::category || o_.by == GroupBy::kind)) return false;
    return true;
  }
  /// Keys count names from 1 (0: none): every name and cat id fits.
  std::size_t slot_count() const { return keyed() ? t_.names.size() + 1 : groups_.size(); }
  /// Keyed groupings by cat name "(no cat)" their key 0; by name, "(no name)".
  bool keyed_by_cat() const { return o_.by == GroupBy::cat || o_.by == GroupBy::category; }

  std::size_t add_group(std::string name, std::string color) {
    groups_.push_back(Group{});
    groups_.back().stats.name = std::move(name);
    groups_.back().stats.color = std::move(color);
    return groups_.size() - 1;
  }

  /// The slot of span i of lane, whose spans are s (see SliceTally).
  std::size_t slot_of(const SpanTable& s, std::size_t lane, std::size_t i, int64_t name, SpanKind kind) const {
    switch (o_.by) {
      case GroupBy::category: return static_cast<std::size_t>(t_.jobque ? s.category[i] : s.cat[i]);
      case GroupBy::lane: return lane;
      case GroupBy::kind: return t_.jobque ? static_cast<std::size_t>(kind) : static_cast<std::size_t>(name + 1);
      case GroupBy::name: return static_cast<std::size_t>(name + 1);
      case GroupBy::cat: return static_cast<std::size_t>(s.cat[i]);
    }
    return 0;
  }

  /// The group of a slot, made on first sight for keyed groupings.
  std::size_t group_of_slot(std::size_t slot) {
    if (!keyed()) return slot;
    if (group_of_key_.empty()) group_of_key_.assign(slot_count(), SIZE_MAX);
    if (group_of_key_[slot] == SIZE_MAX) {
      std::string name = slot == 0 ? (keyed_by_cat() ? "(no cat)" : "(no name)")
                                   : std::string(t_.names.view(static_cast<uint32_t>(slot - 1)));
      group_of_key_[slot] = add_group(std::move(name), "");
    }
    return group_of_key_[slot];
  }

  bool wants_duration(SpanKind kind) const {
    if (!o_.distributions && !o_.hist) return false;
    if (!t_.jobque) return true;
    return (o_.by == GroupBy::category || o_.by == GroupBy::lane) ? kind == SpanKind::chunk : true;
  }

  /// Per lane, the rows that can overlap the range (from the index's first candidate to
  /// the last span starting by its end), in slices: jobque lanes in pieces of slice_rows
  /// (their sums split anywhere), generic lanes whole (nesting needs one walk a lane).
  std::vector<Slice> make_slices() const {
    std::vector<Slice> slices;
    for (std::size_t lane = 0; lane < t_.lanes.size(); ++lane) {
      const IntColumn& ts = t_.lanes[lane].spans.ts;
      std::size_t end = ts.size(), begin = std::min(index_.first_candidate(lane, r_.lo), end);
      if (begin < end) {  // spans are sorted by start: the first one after the range ends the walk
        std::size_t lo = begin, hi = end;
        while (lo < hi) {
          std::size_t mid = lo + (hi - lo) / 2;
          if (ts[mid] > r_.hi) hi = mid;
          else lo = mid + 1;
        }
        end = lo;
      }
      std::size_t step = t_.jobque ? std::max<std::size_t>(1, o_.slice_rows) : SIZE_MAX;
      while (begin < end) {  // a lane with nothing in range has no slice (and busy 0)
        std::size_t stop = end - begin > step ? begin + step : end;
        slices.push_back({lane, begin, stop});
        begin = stop;
      }
    }
    return slices;
  }

  /// Calls f(row, ts, dur) for the spans of a slice that overlap the range, in time order.
  template <typename F>
  void for_each_overlapping(const Slice& slice, F&& f) const {
    const SpanTable& s = t_.lanes[slice.lane].spans;
    for (std::size_t i = slice.begin; i < slice.end; ++i) {
      int64_t ts = s.ts[i];
      int64_t dur = s.dur[i];
      if (ts + dur >= r_.lo) f(i, ts, dur);
    }
  }

  /// SPEC §2 for jobque traces: busy is the clipped time of chunk, fifo_job and publish.
  void walk_jobque(const Slice& slice, SliceTally& tally) const {
    const SpanTable& s = t_.lanes[slice.lane].spans;
    for_each_overlapping(slice, [&](std::size_t i, int64_t ts, int64_t dur) {
      int64_t end = ts + dur;
      int64_t name = s.name[i];
      SpanKind kind = kinds_[static_cast<std::size_t>(name)];
      GroupTally& g = tally.at(slot_of(s, slice.lane, i, name, kind));
      ++tally.events;
      ++g.events;
      int64_t clipped = r_.clipped(ts, end);
      if (is_busy(kind)) {
        tally.busy_ns += clipped;
        g.busy_ns += clipped;
      }
      if (kind == SpanKind::stage_wait) tally.wait_ns += clipped;
      if (kind == SpanKind::publish) ++tally.publishes;
      if (wants_duration(kind)) g.sample.add(dur);
    });
  }

  /// Generic traces: busy is the time the lane has at least one span open; each group
  /// gets its spans' clipped time (total) and that minus direct children (self).
  void walk_generic(const Slice& slice, SliceTally& tally) const {
    const SpanTable& s = t_.lanes[slice.lane].spans;
    std::vector<OpenSpan> open;
    int64_t run_start = 0, run_end = 0;
    bool in_run = false;
    auto close_top = [&]() {
      const OpenSpan& o = open.back();
      tally.at(o.slot).self_ns += std::max<int64_t>(0, o.clipped - o.children);
      open.pop_back();
    };
    for_each_overlapping(slice, [&](std::size_t i, int64_t ts, int64_t dur) {
      int64_t end = ts + dur;
      int64_t name = s.name[i];
      std::size_t slot = slot_of(s, slice.lane, i, name, SpanKind::other);
      GroupTally& g = tally.at(slot);
      ++tally.events;
      ++g.events;
      int64_t clipped = r_.clipped(ts, end);
      g.total_ns += clipped;
      if (wants_duration(SpanKind::other)) g.sample.add(dur);
      // Spans come by start time, longer first on ties: an open span that ends before
      // this one does (or as it starts) is not its parent.
      while (!open.empty() && (open.back().end <= ts || open.back().end < end)) close_top();
      if (!open.empty()) open.back().children += clipped;
      open.push_back({slot, end, clipped});
      // The union of span time, clipped to the range.
      int64_t a = std::max(ts, r_.lo), b = std::min(end, r_.hi);
      if (b <= a) return;
      if (in_run && a <= run_end) {
        run_end = std::max(run_end, b);
      } else {
        if (in_run) tally.busy_ns += run_end - run_start;
        run_start = a;
        run_end = b;
        in_run = true;
      }
    });
    while (!open.empty()) close_top();
    if (in_run) tally.busy_ns += run_end - run_start;
  }

  /// Adds a slice's totals to the range's, and hands its groups' tallies to the groups
  /// (made here, on first sight, for keyed groupings).
  void join(SliceTally& tally) {
    s_.events += tally.events;
    s_.publishes += tally.publishes;
    s_.wait_ns += tally.wait_ns;
    for (auto& [slot, g] : tally.groups()) groups_[group_of_slot(slot)].parts.push_back(&g);
  }

  /// One group's tallies taken in, then its distribution (and histogram) summarised.
  void summarize_group(Group& g) {
    for (GroupTally* part : g.parts) g.tally.absorb(std::move(*part));
    g.parts.clear();
    if (o_.hist) g.stats.hist = histogram(g.tally.sample.sorted());
    if (o_.distributions) g.stats.dur = g.tally.sample.summarize(o_.quantiles);
    g.tally.sample = DurationSample{};
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
      GroupStats& st = g.stats;
      st.events = g.tally.events;
      st.busy_ns = t_.jobque ? g.tally.busy_ns : g.tally.self_ns;
      st.total_ns = g.tally.total_ns;
      st.self_ns = g.tally.self_ns;
      total += st.busy_ns;
    }
    for (Group& g : groups_) {
      g.stats.share_pct =
          total > 0 ? 100.0 * static_cast<double>(g.stats.busy_ns) / static_cast<double>(total) : 0.0;
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
