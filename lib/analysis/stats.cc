#include "stats.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <span>

#include "flat_map.h"
#include "free_memory.h"
#include "jobque.h"
#include "parallel.h"
#include "permute.h"
#include "timings.h"

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
    add_totals(t);
    sample.absorb(std::move(t.sample));
  }
  /// t's counts and times, without its sample.
  void add_totals(const GroupTally& t) {
    events += t.events;
    busy_ns += t.busy_ns;
    total_ns += t.total_ns;
    self_ns += t.self_ns;
  }
};

/// Rows [begin, end) of a lane's spans that can overlap the range: a whole lane, or a
/// piece of a long jobque lane. `busy` is what the walk found for these rows.
struct LaneRows {
  std::size_t lane, begin, end;
  int64_t busy = 0;
};

/// Consecutive LaneRows [first, last), walked together on one thread with one tally: one
/// piece of a long lane, or many short lanes (a tally a lane cost ~1 KB each on a trace of
/// a million one-span lanes).
struct Slice {
  std::size_t first, last;
};

/// A slice's tally of one group, with the group's slot.
using SliceEntry = std::pair<std::size_t, GroupTally>;

/// What the walk over one slice adds up. Groups are known by slot here (a fixed group's
/// index, or the key of a group made on first sight); the join makes groups from slots in
/// the order the slices first saw them, which is the order one walk over everything would.
class SliceTally {
 public:
  /// slots: how many there can be; rows: the spans the slice walks. An array indexed by
  /// slot when there are few slots (up to kDenseSlots) and the slice is not much smaller
  /// than them; else a list, scanned while short and hashed past that (keyed by the names
  /// of a trace with thousands, or a unit with a handful of spans), so that a slice, and
  /// each of thousands of units, costs what it sees: a million lanes of one span each and
  /// 4,000 names once took 4,000 slots a lane (14 GB), then a 1 KB hash table a lane.
  SliceTally(std::size_t slots, std::size_t rows) {
    if (slots <= kDenseSlots && slots <= 2 * rows + 64) dense_.assign(slots, 0);
  }
  GroupTally& at(std::size_t slot) {
    if (!dense_.empty()) {
      uint32_t& k = dense_[slot];  // index + 1; 0: not seen yet
      if (k == 0) {
        groups_.push_back({slot, GroupTally{}});
        k = static_cast<uint32_t>(groups_.size());
      }
      return groups_[k - 1].second;
    }
    std::size_t k = sparse_.find(slot, groups_.size(), [&](std::size_t i) { return groups_[i].first; });
    if (k != SIZE_MAX) return groups_[k].second;
    groups_.push_back({slot, GroupTally{}});
    return groups_.back().second;
  }
  /// The tally of slot's group, with a span counted in it and in the slice.
  GroupTally& counted(std::size_t slot) {
    ++events;
    GroupTally& g = at(slot);
    ++g.events;
    return g;
  }
  /// (slot, tally) in first-seen order.
  std::vector<SliceEntry>& groups() { return groups_; }
  /// After the walk: no more groups come, so the lookup goes and the tallies take only
  /// their room (they stay until their groups are summarised: grown by doubling, a million
  /// one-span groups held up to twice their 104 bytes each).
  void settle() {
    std::vector<uint32_t>().swap(dense_);
    sparse_ = ShortListIndex<std::size_t>{};
    groups_.shrink_to_fit();
  }

  uint64_t events = 0, publishes = 0;
  int64_t wait_ns = 0;

 private:
  static constexpr std::size_t kDenseSlots = 4096;
  std::vector<uint32_t> dense_;              ///< by slot: index into groups_ + 1 (empty: sparse_)
  ShortListIndex<std::size_t> sparse_;       ///< slot -> index into groups_
  std::vector<SliceEntry> groups_;
};

/// An open span while walking a generic lane, to split its time into self and children.
struct OpenSpan {
  std::size_t slot;
  int64_t end;
  int64_t clipped;
  int64_t children = 0;      ///< the union of its children's time, clipped to the range
  int64_t children_end = 0;  ///< the latest end of its children (they come by start)
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
      : StatsBuilder(t, index, range, o, nullptr) {}
  /// kinds: span_kinds(t), when the caller has them (a builder a unit must not cost a
  /// pass over the names).
  StatsBuilder(const Trace& t, const SpanIndex& index, Range range, const StatsOptions& o,
               const std::vector<SpanKind>* kinds)
      : t_(t), index_(index), r_(range), o_(o), own_kinds_(kinds ? std::vector<SpanKind>{} : span_kinds(t)),
        kinds_(kinds ? *kinds : own_kinds_) {}

  /// Walks the slices on o_.threads threads, joins them in order, then summarises the
  /// groups (also in parallel): the result is the same at any thread count.
  RangeStats build() {
    start();
    std::vector<LaneRows> rows = rows_in_range();
    std::vector<Slice> slices = make_slices(rows);
    std::vector<SliceTally> tallies;
    tallies.reserve(slices.size());
    for (const Slice& slice : slices) {
      std::size_t spans = 0;
      for (std::size_t r = slice.first; r < slice.last; ++r) spans += rows[r].end - rows[r].begin;
      tallies.emplace_back(slot_count(), spans);
    }
    run_parallel(slices.size(), o_.threads, [&](std::size_t k) {
      for (std::size_t r = slices[k].first; r < slices[k].last; ++r)
        rows[r].busy = t_.jobque ? walk_jobque(rows[r], tallies[k]) : walk_generic(rows[r], tallies[k]);
      tallies[k].settle();
    });
    // 4 bytes a name, less than a hash table of the names seen.
    if (keyed()) group_of_key_dense_.assign(slot_count(), 0);
    join(tallies);
    std::vector<int64_t> lane_busy(t_.lanes.size(), 0);
    for (const LaneRows& r : rows) lane_busy[r.lane] += r.busy;
    std::vector<LaneRows>().swap(rows);  // before the lanes' detail: 32 bytes a lane
    if (o_.lanes) s_.lanes_detail.reserve(t_.lanes.size());
    for (std::size_t lane = 0; lane < t_.lanes.size(); ++lane) {
      s_.busy_ns += lane_busy[lane];
      if (o_.lanes) add_lane(lane, lane_busy[lane]);
    }
    return finish(tallies);
  }

  /// The range's stats from one tally of its spans and their busy time, as build() would
  /// give them without per-lane detail (the sweep over many ranges measures them so).
  RangeStats build_from(SliceTally& tally, int64_t busy) {
    start();
    join(std::span<SliceTally>(&tally, 1));
    s_.busy_ns = busy;
    return finish(std::span<SliceTally>(&tally, 1));
  }

  /// A span's group key (see SliceTally), and the kind of a name.
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
  SpanKind kind_of(int64_t name) const { return kinds_[static_cast<std::size_t>(name)]; }
  /// Keys count names from 1 (0: none): every name and cat id fits.
  std::size_t slot_count() const { return keyed() ? t_.names.size() + 1 : fixed_group_count(); }

 private:
  void start() {
    s_.range = r_;
    s_.jobque = t_.jobque;
    s_.by = o_.by;
    s_.lanes = t_.lanes.size();
    make_fixed_groups();
  }

  /// Each group takes in its slices' tallies (in slice order) and is summarised on its
  /// own (the samples' copying and their order statistics go on the threads); then the
  /// range's shares. The groups go in waves, in order: a lane's or keyed group's stats are
  /// made as its wave comes, and a slice is freed once every group it holds is summarised,
  /// so a million groups never hold their tallies and their stats at once (by lane, a
  /// million one-span lanes took 597 MB so; 760 when the groups also took a copy of the
  /// tallies, 456 now).
  RangeStats finish(std::span<SliceTally> slices) {
    // A group's later parts, together and in slice order.
    std::stable_sort(later_parts_.begin(), later_parts_.end(), by_group);
    std::vector<uint32_t> by_last_group(slices.size());
    std::iota(by_last_group.begin(), by_last_group.end(), 0u);
    std::sort(by_last_group.begin(), by_last_group.end(),
              [&](uint32_t a, uint32_t b) { return slice_groups_end_[a] < slice_groups_end_[b]; });
    std::size_t freed = 0, groups = first_part_.size();
    for (std::size_t wave = 0; wave < groups; wave += kWaveGroups) {
      std::size_t end = std::min(groups, wave + kWaveGroups);
      while (group_stats_.size() < end) make_group(group_stats_.size());
      std::vector<std::size_t> order = largest_first(wave, end);
      // A group of many spans is summarised on every thread, before the rest, a group a
      // thread: its order statistics were one thread's work while the others waited.
      std::size_t big = 0;
      while (big < order.size() && o_.threads > 1 && !o_.hist && group_spans(order[big]) >= kGroupOnThreads)
        summarize_group_on_threads(order[big++]);
      run_parallel(order.size() - big, o_.threads, [&](std::size_t k) { summarize_group(order[big + k]); });
      while (freed < slices.size() && slice_groups_end_[by_last_group[freed]] <= end)
        slices[by_last_group[freed++]] = SliceTally(0, 0);
      if (end < groups) release_free_memory();  // for the next waves' stats
    }
    std::vector<SliceEntry*>().swap(first_part_);
    std::vector<LaterPart>().swap(later_parts_);
    finish_groups();
    double length = static_cast<double>(r_.length());
    s_.idle_pct = length > 0 ? 100.0 * (1.0 - static_cast<double>(s_.busy_ns) / (length * static_cast<double>(s_.lanes)))
                             : 100.0;
    s_.parallelism = length > 0 ? static_cast<double>(s_.busy_ns) / length : 0.0;
    return std::move(s_);
  }

  /// Groups known before the walk: every category (even unused: a gate may ask for it),
  /// every lane, every kind.
  void make_fixed_groups() {
    if (o_.by == GroupBy::category && t_.jobque)
      for (std::size_t k = 0; k < t_.categories.size(); ++k) {
        const Category& c = t_.categories[k];
        GroupStats& g = group_stats_[add_group(c.name, c.color)];
        g.guessed = c.guessed;
        g.key = static_cast<int64_t>(k);
      }
    if (o_.by == GroupBy::lane)  // made as they are summarised (make_group); room now, used as they come
      group_stats_.reserve(t_.lanes.size());
    if (o_.by == GroupBy::kind && t_.jobque)
      for (const char* k : kKindNames) add_group(k, "");
  }

  /// True when groups are made on first sight (names, cats); else the slot is the group.
  bool keyed() const {
    if (o_.by == GroupBy::lane) return false;
    if (t_.jobque && (o_.by == GroupBy::category || o_.by == GroupBy::kind)) return false;
    return true;
  }
  /// The groups make_fixed_groups() makes (known before it ran: the sweep asks first).
  std::size_t fixed_group_count() const {
    if (o_.by == GroupBy::category && t_.jobque) return t_.categories.size();
    if (o_.by == GroupBy::lane) return t_.lanes.size();
    if (o_.by == GroupBy::kind && t_.jobque) return std::size(kKindNames);
    return 0;
  }
  /// Keyed groupings by cat name "(no cat)" their key 0; by name, "(no name)".
  bool keyed_by_cat() const { return o_.by == GroupBy::cat || o_.by == GroupBy::category; }

  std::size_t add_group(std::string name, std::string color) {
    group_stats_.emplace_back();
    group_stats_.back().name = std::move(name);
    group_stats_.back().color = std::move(color);
    return group_stats_.size() - 1;
  }

  /// Group g's stats, before it is summarised: a lane's, or a keyed group's (named by the
  /// key of the first slice that saw it). Fixed groups were made by make_fixed_groups().
  void make_group(std::size_t g) {
    if (o_.by == GroupBy::lane) group_stats_[add_group(t_.lane_label(g), "")].lane = g;
    else if (std::size_t made = add_group(key_name(first_part_[g]->first), ""); keyed_by_cat())
      group_stats_[made].key = static_cast<int64_t>(first_part_[g]->first);
  }

  /// A keyed group's index, given in the order the keys are first asked for.
  std::size_t group_of_key(std::size_t slot) {
    uint32_t& index = slot < group_of_key_dense_.size() ? group_of_key_dense_[slot]
                                                        : group_of_key_[static_cast<int64_t>(slot)];
    if (index == 0) index = ++keys_;  // index + 1; 0: not given yet
    return index - 1;
  }
  /// The name of a keyed group.
  std::string key_name(std::size_t slot) const {
    if (slot == 0) return keyed_by_cat() ? "(no cat)" : "(no name)";
    return std::string(t_.names.view(static_cast<uint32_t>(slot - 1)));
  }

  bool wants_duration(SpanKind kind) const {
    if (!o_.distributions && !o_.hist) return false;
    if (!t_.jobque) return true;
    return (o_.by == GroupBy::category || o_.by == GroupBy::lane) ? kind == SpanKind::chunk : true;
  }

  /// Per lane, the rows that can overlap the range (from the index's first candidate to
  /// the last span starting by its end): jobque lanes in pieces of slice_rows (their sums
  /// split anywhere), generic lanes whole (nesting needs one walk a lane). A lane with
  /// nothing in range has no rows (and busy 0).
  std::vector<LaneRows> rows_in_range() const {
    std::vector<LaneRows> rows;
    for (std::size_t lane = 0; lane < t_.lanes.size(); ++lane) {
      auto [begin, end] = index_.candidate_rows(t_, lane, r_);
      std::size_t step = t_.jobque ? std::max<std::size_t>(1, o_.slice_rows) : SIZE_MAX;
      while (begin < end) {
        std::size_t stop = end - begin > step ? begin + step : end;
        rows.push_back({lane, begin, stop});
        begin = stop;
      }
    }
    return rows;
  }

  /// Consecutive rows in slices of at least kSliceRows spans (or one piece of a lane), so
  /// that short lanes share a tally: the slices are joined in order, and a walk over a
  /// slice's rows one after another adds up what a walk over each would. A slice holds a
  /// tally a group it sees: slices of 4,096 spans over a million one-span lanes of 4,000
  /// names held a tally a span (425 MB by name); of 65,536, one a name a slice.
  std::vector<Slice> make_slices(const std::vector<LaneRows>& rows) const {
    static constexpr std::size_t kSliceRows = 65536;
    std::size_t target = std::min(kSliceRows, o_.slice_rows);  // tests ask for small ones
    std::vector<Slice> slices;
    std::size_t first = 0, spans = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      spans += rows[r].end - rows[r].begin;
      bool piece = rows[r].end - rows[r].begin >= target;
      if (spans >= target || piece || r + 1 == rows.size()) {
        slices.push_back({first, r + 1});
        first = r + 1;
        spans = 0;
      }
    }
    return slices;
  }

  /// Calls f(row, ts, dur) for the spans of rows that overlap the range, in time order.
  template <typename F>
  void for_each_overlapping(const LaneRows& rows, F&& f) const {
    const SpanTable& s = t_.lanes[rows.lane].spans;
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
      int64_t ts = s.ts[i];
      int64_t dur = s.dur[i];
      if (ts + dur >= r_.lo) f(i, ts, dur);
    }
  }

  /// SPEC §2 for jobque traces: busy is the clipped time of chunk, fifo_job and publish.
  int64_t walk_jobque(const LaneRows& rows, SliceTally& tally) const {
    const SpanTable& s = t_.lanes[rows.lane].spans;
    int64_t busy = 0;
    for_each_overlapping(rows, [&](std::size_t i, int64_t ts, int64_t dur) {
      int64_t end = ts + dur;
      int64_t name = s.name[i];
      SpanKind kind = kind_of(name);
      GroupTally& g = tally.counted(slot_of(s, rows.lane, i, name, kind));
      int64_t clipped = r_.clipped(ts, end);
      if (is_busy(kind)) {
        busy += clipped;
        g.busy_ns += clipped;
      }
      if (kind == SpanKind::stage_wait) tally.wait_ns += clipped;
      if (kind == SpanKind::publish) ++tally.publishes;
      if (wants_duration(kind)) g.sample.add(dur);
    });
    return busy;
  }

  /// Generic traces: busy is the time the lane has at least one span open; each group
  /// gets its spans' clipped time (total) and that minus direct children (self).
  int64_t walk_generic(const LaneRows& rows, SliceTally& tally) const {
    const SpanTable& s = t_.lanes[rows.lane].spans;
    int64_t busy = 0;
    std::vector<OpenSpan> open;
    int64_t run_start = 0, run_end = 0;
    bool in_run = false;
    auto close_top = [&]() {
      const OpenSpan& o = open.back();
      tally.at(o.slot).self_ns += std::max<int64_t>(0, o.clipped - o.children);
      open.pop_back();
    };
    for_each_overlapping(rows, [&](std::size_t i, int64_t ts, int64_t dur) {
      int64_t end = ts + dur;
      int64_t name = s.name[i];
      std::size_t slot = slot_of(s, rows.lane, i, name, SpanKind::other);
      GroupTally& g = tally.counted(slot);
      int64_t clipped = r_.clipped(ts, end);
      g.total_ns += clipped;
      if (wants_duration(SpanKind::other)) g.sample.add(dur);
      // Spans come by start time, longer first on ties: an open span that ends before
      // this one does (or as it starts) is not its parent. One that it overlaps without
      // nesting in (ill-formed, validate warns) gives up the overlap to it, so that self
      // times still add up to the lane's busy time.
      while (!open.empty() && (open.back().end <= ts || open.back().end < end)) {
        if (open.back().end > ts) add_child_time(open.back(), ts, open.back().end);
        close_top();
      }
      if (!open.empty()) add_child_time(open.back(), ts, end);
      open.push_back({slot, end, clipped, 0, ts});
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

  /// [ts, end) of a child of o, less what its earlier children cover (they overlap when
  /// spans do not nest), clipped to the range.
  void add_child_time(OpenSpan& o, int64_t ts, int64_t end) const {
    int64_t from = std::max(ts, o.children_end);
    o.children += std::max<int64_t>(0, r_.clipped(from, end));
    o.children_end = std::max(o.children_end, end);
  }

  /// Adds the slices' totals to the range's and points each group at its tallies, which
  /// stay in the slices until the group is summarised (a group of one slice, as each of a
  /// million names or lanes is, costs a pointer here). Keyed groups are made in the order
  /// the slices first saw them; they are counted first, so their stats are allocated once.
  void join(std::span<SliceTally> tallies) {
    std::size_t groups = keyed() ? 0 : fixed_group_count();
    if (keyed()) {
      for (SliceTally& tally : tallies)
        for (auto& entry : tally.groups()) groups = std::max(groups, group_of_key(entry.first) + 1);
      group_stats_.reserve(groups);  // room now, used as they come (finish)
    }
    first_part_.assign(groups, nullptr);
    slice_groups_end_.assign(tallies.size(), 0);
    for (std::size_t k = 0; k < tallies.size(); ++k) {
      SliceTally& tally = tallies[k];
      s_.events += tally.events;
      s_.publishes += tally.publishes;
      s_.wait_ns += tally.wait_ns;
      for (SliceEntry& entry : tally.groups()) {
        std::size_t group = keyed() ? group_of_key(entry.first) : entry.first;
        if (first_part_[group]) later_parts_.push_back({group, &entry.second});
        else first_part_[group] = &entry;  // keyed groups are numbered by first sight, in slice order
        slice_groups_end_[k] = std::max(slice_groups_end_[k], group + 1);
      }
    }
  }

  /// Groups [from, to) by their spans, most first: sorting one group's durations is one
  /// thread's work, and the largest (attn chain, a third of a jobque trace's spans) handed
  /// out last kept the other threads waiting.
  std::vector<std::size_t> largest_first(std::size_t from, std::size_t to) const {
    std::vector<uint64_t> spans(to - from);
    for (std::size_t k = from; k < to; ++k) spans[k - from] = group_spans(k);
    std::vector<std::size_t> order(to - from);
    std::iota(order.begin(), order.end(), from);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return spans[a - from] > spans[b - from]; });
    return order;
  }

  static constexpr uint64_t kGroupOnThreads = uint64_t{1} << 18;  // spans

  /// The later parts (tallies of slices after its first) of group k, in slice order.
  auto later_parts(std::size_t k) const {
    return std::equal_range(later_parts_.begin(), later_parts_.end(), LaterPart{k, nullptr}, by_group);
  }

  uint64_t group_spans(std::size_t k) const {
    uint64_t n = first_part_[k] ? first_part_[k]->second.events : 0;
    auto [from, to] = later_parts(k);
    for (auto it = from; it != to; ++it) n += it->second->events;
    return n;
  }

  /// A group's counts and times, from the tally of all its spans.
  void take_totals(GroupStats& stats, const GroupTally& tally) const {
    stats.events = tally.events;
    stats.busy_ns = t_.jobque ? tally.busy_ns : tally.self_ns;
    stats.total_ns = tally.total_ns;
    stats.self_ns = tally.self_ns;
  }

  /// summarize_group without joining the slices' samples: their distribution is found
  /// across them on the threads (DurationSample::summarize_together).
  void summarize_group_on_threads(std::size_t k) {
    GroupTally totals;  // the parts' counts and times; their samples stay where they are
    GroupTally& first = first_part_[k]->second;
    totals.add_totals(first);
    std::vector<DurationSample*> samples{&first.sample};
    auto [from, to] = later_parts(k);
    for (auto it = from; it != to; ++it) {
      totals.add_totals(*it->second);
      samples.push_back(&it->second->sample);
    }
    GroupStats& stats = group_stats_[k];
    take_totals(stats, totals);
    if (o_.distributions) stats.dur = DurationSample::summarize_together(samples, o_.quantiles, o_.threads);
    for (DurationSample* s : samples) *s = DurationSample{};
  }

  /// One group's tallies taken in (in slice order), then its totals, distribution and
  /// histogram. A group no span reached has a tally of nothing.
  void summarize_group(std::size_t k) {
    GroupTally none;
    GroupTally& tally = first_part_[k] ? first_part_[k]->second : none;
    auto [from, to] = later_parts(k);
    for (auto it = from; it != to; ++it) tally.absorb(std::move(*it->second));
    GroupStats& stats = group_stats_[k];
    take_totals(stats, tally);
    if (o_.hist) stats.hist = histogram(tally.sample.sorted());
    if (o_.distributions) stats.dur = tally.sample.summarize(o_.quantiles);
    tally.sample = DurationSample{};
  }

  void add_lane(std::size_t lane, int64_t busy) {
    LaneStats ls;
    ls.lane = lane;
    ls.busy_ns = busy;
    double length = static_cast<double>(r_.length());
    ls.idle_pct = length > 0 ? 100.0 * (1.0 - static_cast<double>(busy) / length) : 100.0;
    s_.lanes_detail.push_back(ls);
  }

  void finish_groups() {
    drop_empty_reserved_groups();
    int64_t total = 0;
    for (const GroupStats& g : group_stats_) total += g.busy_ns;
    // Sorted by busy (descending), then name, then first seen; the groups move once, in
    // that order (sorting the 200-byte GroupStats themselves was 12% of stats --by name
    // on a trace of 100,000 names).
    std::vector<uint32_t> order(group_stats_.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      const GroupStats& a = group_stats_[x];
      const GroupStats& b = group_stats_[y];
      if (a.busy_ns != b.busy_ns) return a.busy_ns > b.busy_ns;
      if (int c = a.name.compare(b.name)) return c < 0;
      return x < y;
    });
    // In place: a second vector of 200-byte groups doubled the peak of a million groups.
    permute_by_cycles(order, [&](std::size_t i) { return std::move(group_stats_[i]); },
                      [&](std::size_t i, GroupStats&& g) { group_stats_[i] = std::move(g); });
    for (GroupStats& g : group_stats_)
      g.share_pct = total > 0 ? 100.0 * static_cast<double>(g.busy_ns) / static_cast<double>(total) : 0.0;
    s_.groups = std::move(group_stats_);
  }

  /// The reserved groups (other spans, wake, fifo job, unpublished chain: categories
  /// 0..3) are listed only where they hold spans: every jobque trace has them, few use them.
  void drop_empty_reserved_groups() {
    if (o_.by != GroupBy::category || !t_.jobque) return;
    std::size_t kept = 0;
    for (std::size_t g = 0; g < group_stats_.size(); ++g)
      if (g >= kReservedCategories || group_stats_[g].events > 0) {
        if (kept != g) group_stats_[kept] = std::move(group_stats_[g]);
        ++kept;
      }
    group_stats_.resize(kept);
  }

  const Trace& t_;
  const SpanIndex& index_;
  Range r_;
  StatsOptions o_;
  std::vector<SpanKind> own_kinds_;
  const std::vector<SpanKind>& kinds_;
  std::vector<GroupStats> group_stats_;  ///< by group index (the order groups were made)
  /// A group's tally in the first slice that saw it, by group index, until summarised.
  std::vector<SliceEntry*> first_part_;
  /// By slice: 1 + the highest group index it holds (it is freed once those are summarised).
  std::vector<std::size_t> slice_groups_end_;
  static constexpr std::size_t kWaveGroups = 1 << 16;
  /// (group, tally) of the later slices that saw a group, one entry a slice past the first:
  /// one list, not a list a group (a million groups of one slice need none).
  using LaterPart = std::pair<std::size_t, GroupTally*>;
  static bool by_group(const LaterPart& a, const LaterPart& b) { return a.first < b.first; }
  std::vector<LaterPart> later_parts_;
  /// Keyed groupings: slot -> group index + 1, an array over every slot for one range's
  /// stats, a hash map for each of many units' (which see few slots each).
  std::vector<uint32_t> group_of_key_dense_;
  FlatMap<uint32_t> group_of_key_;
  uint32_t keys_ = 0;
  RangeStats s_;
};

/// Range stats of many ranges in time order (lo and hi both non-decreasing: a kind's units,
/// or some of them) from one walk over the spans they cover, where a compute_stats per
/// range walked every lane for every range (a million lanes and ten thousand units:
/// 10^10 steps). Each span is met once per block of ranges and adds to the ranges it
/// overlaps, as the walk of each would have: the same numbers, clamps included.
///
/// A span adds to the ranges it meets in part one at a time; to the ranges it covers
/// whole (a run of them, [p, q)) it adds the same thing each, times the range's length, so
/// it records that once, as "+1 from p, -1 from q" (a Cover), and the block sums them at
/// its end. A span open across k units cost k steps and k words: nested 100,000 deep
/// over 500 units, 3.88 s and 269 MB.
class RangesSweep {
 public:
  RangesSweep(const Trace& t, const SpanIndex& index, const std::vector<Range>& ranges, const StatsOptions& o)
      : t_(t), index_(index), ranges_(ranges), o_(o), kinds_(span_kinds(t)), shape_(t, index, Range{}, o, &kinds_) {
    o_.threads = 1;  // each range's summary is small: the ranges are shared out instead
  }

  std::vector<RangeStats> run(unsigned threads) {
    tallies_.reserve(ranges_.size());
    for (std::size_t v = 0; v < ranges_.size(); ++v) tallies_.emplace_back(shape_.slot_count(), 0);
    busy_.assign(ranges_.size(), 0);
    // Blocks of ranges on the threads: each block walks every lane once (a binary search
    // for where it starts), so a few blocks a thread, not one a range.
    std::size_t blocks = std::min<std::size_t>(ranges_.size(), threads > 1 ? 4 * std::size_t{threads} : 1);
    run_parallel(blocks, threads, [&](std::size_t k) {
      std::size_t a = k * ranges_.size() / blocks, b = (k + 1) * ranges_.size() / blocks;
      OpenSpans open;
      Covers covers;
      for (std::size_t lane = 0; lane < t_.lanes.size() && a < b; ++lane) {
        if (t_.jobque) sweep_jobque(lane, a, b, covers);
        else sweep_generic(lane, a, b, open, covers);
      }
      add_covers(covers);
    });
    std::vector<RangeStats> out(ranges_.size());
    run_parallel(ranges_.size(), threads, [&](std::size_t v) {
      out[v] = StatsBuilder(t_, index_, ranges_[v], o_, &kinds_).build_from(tallies_[v], busy_[v]);
      tallies_[v] = SliceTally(0, 0);
    });
    return out;
  }

  /// True when a generic lane had spans that overlap without nesting: the sweep's self
  /// times assume nesting, so compute_stats must answer each range instead.
  bool saw_partial_overlap() const { return partial_overlap_; }

  /// Whether the sweep gives what compute_stats would: ranges in time order, and none of
  /// the per-lane or per-span detail it does not keep.
  static bool applies(const std::vector<Range>& ranges, const StatsOptions& o) {
    if (o.lanes || o.distributions || o.hist || o.by == GroupBy::lane) return false;
    for (std::size_t v = 1; v < ranges.size(); ++v)
      if (ranges[v].lo < ranges[v - 1].lo || ranges[v].hi < ranges[v - 1].hi) return false;
    return true;
  }

 private:
  /// The ranges a span meets, [first, last), of which it covers [p, q) whole (their lo
  /// and hi inside it); it meets [first, p) and [q, last) in part.
  struct Met {
    std::size_t first = 0, p = 0, q = 0, last = 0;
    bool covers_any() const { return p < q; }
  };

  /// What a span adds to every range of a run it covers whole, per range: one of these
  /// times the range's length (or times one, for counts).
  enum class Channel : uint8_t {
    span,     ///< the group's events (and the range's); generic: the group's total time
    busy,     ///< jobque busy time: the group's and the range's
    self,     ///< generic self time: covered, and not covered whole by a child
    wait,     ///< jobque stage_wait time, the range's
    publish,  ///< jobque publishes, the range's
  };
  /// "n more spans of slot from range v on" (n < 0: fewer).
  struct Cover {
    Channel channel;
    std::size_t slot, v;
    int64_t n;
  };
  using Covers = std::vector<Cover>;

  static void cover(Covers& covers, Channel channel, std::size_t slot, const Met& m) {
    covers.push_back({channel, slot, m.p, 1});
    covers.push_back({channel, slot, m.q, -1});
  }

  /// The length a covered range adds (0 for a range whose lo passed its hi).
  int64_t covered_length(std::size_t v) const { return std::max<int64_t>(0, ranges_[v].length()); }

  /// The covers of a block summed into its ranges' tallies: per channel and slot, the
  /// ranges between two changes get the count then standing. Work: the covers, sorted,
  /// and the (range, slot) tallies they add to.
  void add_covers(Covers& covers) {
    std::sort(covers.begin(), covers.end(), [](const Cover& x, const Cover& y) {
      if (x.channel != y.channel) return x.channel < y.channel;
      if (x.slot != y.slot) return x.slot < y.slot;
      return x.v < y.v;
    });
    int64_t standing = 0;
    for (std::size_t k = 0; k < covers.size(); ++k) {
      const Cover& c = covers[k];
      standing += c.n;
      bool run_ends = k + 1 == covers.size() || covers[k + 1].channel != c.channel || covers[k + 1].slot != c.slot;
      std::size_t until = run_ends ? c.v : covers[k + 1].v;
      if (standing != 0)
        for (std::size_t v = c.v; v < until; ++v) add_cover(c.channel, c.slot, v, standing);
      if (run_ends) standing = 0;  // every +1 has its -1: already 0
    }
    covers.clear();
  }

  void add_cover(Channel channel, std::size_t slot, std::size_t v, int64_t n) {
    SliceTally& tally = tallies_[v];
    int64_t time = n * covered_length(v);
    switch (channel) {
      case Channel::span: {
        GroupTally& g = tally.at(slot);
        g.events += static_cast<uint64_t>(n);
        tally.events += static_cast<uint64_t>(n);
        if (!t_.jobque) g.total_ns += time;
        break;
      }
      case Channel::busy:
        tally.at(slot).busy_ns += time;
        busy_[v] += time;
        break;
      case Channel::self: tally.at(slot).self_ns += time; break;
      case Channel::wait: tally.wait_ns += time; break;
      case Channel::publish: tally.publishes += static_cast<uint64_t>(n); break;
    }
  }

  /// Where a lane's walk over the block [a, b) of ranges is: its spans from the first that
  /// can reach range a, up to the last that starts by the end of range b - 1.
  class LaneWalk {
   public:
    LaneWalk(const RangesSweep& sweep, std::size_t lane, std::size_t a, std::size_t b)
        : sweep_(sweep), lane_(lane), s_(sweep.t_.lanes[lane].spans), first_(a), b_(b),
          row_(sweep.index_.first_candidate(lane, sweep.ranges_[a].lo)) {}

    /// The next span overlapping a range of the block: its row, ts, end and the ranges it
    /// meets. False past the block's last range.
    [[gnu::always_inline]] bool next(std::size_t* row, int64_t* ts, int64_t* end, Met* met) {
      const std::vector<Range>& r = sweep_.ranges_;
      for (; row_ < s_.size(); ++row_) {
        int64_t t0 = s_.ts[row_];
        if (t0 > r[b_ - 1].hi) break;
        if (r[first_].hi < t0) {  // ranges are done once a span starts past them
          // A search, not a step at a time: a lane's first span may be thousands of ranges in.
          first_ = search(first_ + 1, b_, [&](const Range& x) { return x.hi < t0; });
        }
        int64_t t1 = t0 + s_.dur[row_];
        if (t1 < r[first_].lo) {  // between ranges: jump to the first span that can reach the next
          if (jumped_to_ != first_) {  // once a range: the index finds a block, walked from there
            jumped_to_ = first_;
            std::size_t to = sweep_.index_.first_candidate(lane_, r[first_].lo);
            if (to > row_ + 1) row_ = to - 1;
          }
          continue;
        }
        met->first = first_;
        if (first_ + 1 == b_ || r[first_ + 1].lo > t1) {  // mostly: a span meets one range
          met->last = first_ + 1;
          met->p = r[first_].lo < t0 ? met->last : first_;
          met->q = met->p == first_ && r[first_].hi <= t1 ? met->last : met->p;
        } else {
          met->last = search(first_ + 1, b_, [&](const Range& x) { return x.lo <= t1; });
          met->p = search(first_, met->last, [&](const Range& x) { return x.lo < t0; });
          met->q = search(met->p, met->last, [&](const Range& x) { return x.hi <= t1; });
        }
        *row = row_++;
        *ts = t0;
        *end = t1;
        return true;
      }
      return false;
    }

   private:
    /// The first range of [from, to) for which `before` is false (it is true, then false):
    /// a few steps, then a binary search (it is mostly one of the first).
    template <typename Before>
    std::size_t search(std::size_t from, std::size_t to, Before before) const {
      const std::vector<Range>& r = sweep_.ranges_;
      for (int step = 0; step < 4 && from < to; ++step, ++from)
        if (!before(r[from])) return from;
      auto it = std::partition_point(r.begin() + static_cast<std::ptrdiff_t>(from),
                                     r.begin() + static_cast<std::ptrdiff_t>(to), before);
      return static_cast<std::size_t>(it - r.begin());
    }

    const RangesSweep& sweep_;
    std::size_t lane_;
    const SpanTable& s_;
    std::size_t first_, b_, row_;
    std::size_t jumped_to_ = SIZE_MAX;  ///< the range whose first span was last jumped to
  };

  /// Calls f(v) for each range the span meets in part.
  template <typename F>
  static void for_each_partial(const Met& m, F f) {
    for (std::size_t v = m.first; v < m.p; ++v) f(v);
    for (std::size_t v = std::max(m.p, m.q); v < m.last; ++v) f(v);
  }

  /// SPEC §2 for jobque traces, as StatsBuilder::walk_jobque, for each range a span meets.
  void sweep_jobque(std::size_t lane, std::size_t a, std::size_t b, Covers& covers) {
    const SpanTable& s = t_.lanes[lane].spans;
    LaneWalk walk(*this, lane, a, b);
    std::size_t i;
    int64_t ts, end;
    Met m;
    while (walk.next(&i, &ts, &end, &m)) {
      int64_t name = s.name[i];
      SpanKind kind = shape_.kind_of(name);
      std::size_t slot = shape_.slot_of(s, lane, i, name, kind);
      for_each_partial(m, [&](std::size_t v) {
        GroupTally& g = tallies_[v].counted(slot);
        int64_t clipped = ranges_[v].clipped(ts, end);
        if (is_busy(kind)) {
          busy_[v] += clipped;
          g.busy_ns += clipped;
        }
        if (kind == SpanKind::stage_wait) tallies_[v].wait_ns += clipped;
        if (kind == SpanKind::publish) ++tallies_[v].publishes;
      });
      if (!m.covers_any()) continue;
      cover(covers, Channel::span, slot, m);
      if (is_busy(kind)) cover(covers, Channel::busy, slot, m);
      if (kind == SpanKind::stage_wait) cover(covers, Channel::wait, slot, m);
      if (kind == SpanKind::publish) cover(covers, Channel::publish, slot, m);
    }
  }

  /// The open spans of a generic lane (a stack, reused lane after lane), with what their
  /// direct children take of the ranges they meet, for self time: the time of each child
  /// in each range it meets in part, and the runs of ranges some child covers whole (there
  /// the parent's self time is 0). Each open span's entries follow its parent's.
  struct OpenSpans {
    struct Open {
      std::size_t slot;
      int64_t ts, end;
      Met met;
      std::size_t parts_from, covered_from;  ///< where its children's entries start
    };
    std::vector<Open> open;
    std::vector<std::pair<std::size_t, int64_t>> child_parts;         ///< (range, time)
    std::vector<std::pair<std::size_t, std::size_t>> child_covered;   ///< [p, q), in order, merged
  };

  /// Generic traces, as StatsBuilder::walk_generic: busy is the union of span time (each
  /// run of it added to the ranges it meets), self a span's time less its direct children's,
  /// per range. A span's parent contains it, so it meets every range the span does.
  void sweep_generic(std::size_t lane, std::size_t a, std::size_t b, OpenSpans& stack, Covers& covers) {
    const SpanTable& s = t_.lanes[lane].spans;
    LaneWalk walk(*this, lane, a, b);
    auto& open = stack.open;
    std::size_t i, run_first = 0;
    int64_t ts, end, run_start = 0, run_end = 0;
    bool in_run = false;
    Met m;
    while (walk.next(&i, &ts, &end, &m)) {
      std::size_t slot = shape_.slot_of(s, lane, i, s.name[i], SpanKind::other);
      while (!open.empty() && (open.back().end <= ts || open.back().end < end)) {
        if (open.back().end > ts) partial_overlap_ = true;  // see compute_stats_of_ranges
        close_top(stack, covers);
      }
      bool has_parent = !open.empty();
      for_each_partial(m, [&](std::size_t v) {
        GroupTally& g = tallies_[v].counted(slot);
        int64_t clipped = ranges_[v].clipped(ts, end);
        g.total_ns += clipped;
        if (has_parent && clipped > 0) stack.child_parts.emplace_back(v, clipped);
      });
      if (m.covers_any()) {
        cover(covers, Channel::span, slot, m);
        if (has_parent) add_child_covered(stack, m);
      }
      open.push_back({slot, ts, end, m, stack.child_parts.size(), stack.child_covered.size()});
      if (in_run && ts <= run_end) {
        run_end = std::max(run_end, end);
      } else {
        if (in_run) add_run(run_first, b, run_start, run_end);
        run_first = m.first;
        run_start = ts;
        run_end = end;
        in_run = true;
      }
    }
    while (!open.empty()) close_top(stack, covers);
    if (in_run) add_run(run_first, b, run_start, run_end);
  }

  /// The top span's [p, q) joins the runs its parent's children cover (children come in
  /// order of start and of end, so the runs do too: a new one extends the last or follows it).
  static void add_child_covered(OpenSpans& stack, const Met& m) {
    auto& runs = stack.child_covered;
    if (runs.size() > stack.open.back().covered_from && runs.back().second >= m.p)
      runs.back().second = std::max(runs.back().second, m.q);
    else
      runs.emplace_back(m.p, m.q);
  }

  /// The top span's self time in each range it meets (never below 0: siblings may
  /// overlap): in a range it meets in part, its time there less its children's; in the
  /// ranges it covers, the range's length, except where a child covers the range too (0)
  /// or meets it in part (less the children's time there, at least 0).
  void close_top(OpenSpans& stack, Covers& covers) {
    const OpenSpans::Open& o = stack.open.back();
    auto parts_begin = stack.child_parts.begin() + static_cast<std::ptrdiff_t>(o.parts_from);
    std::sort(parts_begin, stack.child_parts.end());
    // The children's time in range v: their parts at v, summed (parts sorted by range).
    auto part = parts_begin;
    auto children_in = [&](std::size_t v) {
      int64_t sum = 0;
      for (; part != stack.child_parts.end() && part->first < v; ++part) {}
      for (; part != stack.child_parts.end() && part->first == v; ++part) sum += part->second;
      return sum;
    };
    for (std::size_t v = o.met.first; v < o.met.p; ++v) add_self(v, o.slot, ranges_[v].clipped(o.ts, o.end) - children_in(v));
    if (o.met.covers_any()) cover_self(stack, o, covers, children_in);
    for (std::size_t v = std::max(o.met.p, o.met.q); v < o.met.last; ++v)
      add_self(v, o.slot, ranges_[v].clipped(o.ts, o.end) - children_in(v));
    stack.child_parts.resize(o.parts_from);
    stack.child_covered.resize(o.covered_from);
    stack.open.pop_back();
  }

  void add_self(std::size_t v, std::size_t slot, int64_t self) {
    tallies_[v].at(slot).self_ns += std::max<int64_t>(0, self);
  }

  /// Self time of the top span in the ranges it covers: a Cover for each gap between the
  /// runs its children cover, less what children meeting a range of a gap in part take.
  template <typename ChildrenIn>
  void cover_self(const OpenSpans& stack, const OpenSpans::Open& o, Covers& covers, ChildrenIn& children_in) {
    std::size_t from = o.met.p;
    auto gap = [&](std::size_t to) {
      if (from >= to) return;
      cover(covers, Channel::self, o.slot, Met{from, from, to, to});
      // Where children meet a range of the gap in part: their time there is not self.
      auto it = std::lower_bound(stack.child_parts.begin() + static_cast<std::ptrdiff_t>(o.parts_from),
                                 stack.child_parts.end(), std::pair<std::size_t, int64_t>{from, INT64_MIN});
      while (it != stack.child_parts.end() && it->first < to) {
        std::size_t v = it->first;
        int64_t taken = children_in(v);
        int64_t length = covered_length(v);
        tallies_[v].at(o.slot).self_ns += std::max<int64_t>(0, length - taken) - length;
        while (it != stack.child_parts.end() && it->first == v) ++it;
      }
    };
    for (std::size_t k = o.covered_from; k < stack.child_covered.size(); ++k) {
      gap(std::min(stack.child_covered[k].first, o.met.q));
      from = std::max(from, stack.child_covered[k].second);
    }
    gap(o.met.q);
  }

  /// Busy time of a run [start, end] of a lane, to the ranges from `first` it meets.
  void add_run(std::size_t first, std::size_t b, int64_t start, int64_t end) {
    for (std::size_t v = first; v < b && ranges_[v].lo <= end; ++v) busy_[v] += ranges_[v].clipped(start, end);
  }

  const Trace& t_;
  const SpanIndex& index_;
  const std::vector<Range>& ranges_;
  StatsOptions o_;
  std::vector<SpanKind> kinds_;
  StatsBuilder shape_;  ///< slots and kinds as the builders see them
  std::vector<SliceTally> tallies_;  ///< by range
  std::vector<int64_t> busy_;        ///< by range
  std::atomic<bool> partial_overlap_{false};
};

}  // namespace

SpanIndex::SpanIndex(const Trace& trace, unsigned threads) {
  PhaseClock clock("index", PhaseKind::scales);  // the ranges' first spans, lane by lane
  lane_blocks_.reserve(trace.lanes.size() + 1);
  lane_blocks_.push_back(0);
  for (const Lane& lane : trace.lanes) lane_blocks_.push_back(lane_blocks_.back() + (lane.spans.size() + kBlock - 1) / kBlock);
  block_max_end_.resize(lane_blocks_.back());
  // Each block's own latest end, in stretches of blocks on the threads (a caller lane is a
  // third of the spans: lane by lane, it was one thread's work)...
  constexpr std::size_t kStretchBlocks = 4096;
  std::vector<std::pair<std::size_t, std::size_t>> stretches;  // (lane, first block of the lane's)
  for (std::size_t l = 0; l < trace.lanes.size(); ++l)
    for (std::size_t b = 0; b < lane_blocks_[l + 1] - lane_blocks_[l]; b += kStretchBlocks) stretches.emplace_back(l, b);
  run_parallel(stretches.size(), threads, [&](std::size_t k) {
    auto [l, first] = stretches[k];
    const SpanTable& s = trace.lanes[l].spans;
    int64_t* blocks = block_max_end_.data() + lane_blocks_[l];
    std::size_t end = std::min(s.size(), (first + kStretchBlocks) * kBlock);
    for (std::size_t i = first * kBlock; i < end; ++i) {
      int64_t& block = blocks[i / kBlock];
      block = i % kBlock == 0 ? s.end(i) : std::max(block, s.end(i));
    }
  });
  // ...then the running latest end over each lane's blocks (a 64th of the spans).
  for (std::size_t l = 0; l < trace.lanes.size(); ++l)
    for (std::size_t b = lane_blocks_[l] + 1; b < lane_blocks_[l + 1]; ++b)
      block_max_end_[b] = std::max(block_max_end_[b], block_max_end_[b - 1]);
}

std::size_t SpanIndex::first_candidate(std::size_t lane, int64_t lo) const {
  auto begin = block_max_end_.begin() + static_cast<std::ptrdiff_t>(lane_blocks_[lane]);
  auto end = block_max_end_.begin() + static_cast<std::ptrdiff_t>(lane_blocks_[lane + 1]);
  return static_cast<std::size_t>(std::lower_bound(begin, end, lo) - begin) * kBlock;
}

std::pair<std::size_t, std::size_t> SpanIndex::candidate_rows(const Trace& trace, std::size_t lane, Range r) const {
  const IntColumn& ts = trace.lanes[lane].spans.ts;
  std::size_t end = ts.size(), begin = std::min(first_candidate(lane, r.lo), end);
  for (std::size_t low = begin; low < end;) {  // spans are sorted by start: the first one after r ends it
    std::size_t mid = low + (end - low) / 2;
    if (ts[mid] > r.hi) end = mid;
    else low = mid + 1;
  }
  return {begin, end};
}

RangeStats compute_stats(const Trace& trace, const SpanIndex& index, Range range, const StatsOptions& options) {
  PhaseClock clock("analysis", PhaseKind::scales);
  return StatsBuilder(trace, index, range, options).build();
}

std::vector<RangeStats> compute_stats_of_ranges(const Trace& trace, const SpanIndex& index,
                                                const std::vector<Range>& ranges, const StatsOptions& options) {
  if (RangesSweep::applies(ranges, options)) {
    RangesSweep sweep(trace, index, ranges, options);
    std::vector<RangeStats> out = sweep.run(options.threads);
    if (!sweep.saw_partial_overlap()) return out;
  }
  std::vector<RangeStats> out(ranges.size());
  StatsOptions one = options;
  one.threads = 1;  // each range on one thread
  run_parallel(ranges.size(), options.threads, [&](std::size_t v) { out[v] = compute_stats(trace, index, ranges[v], one); });
  return out;
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
