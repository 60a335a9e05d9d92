#include "trace.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "begin_end.h"
#include "jobque.h"
#include "lane_index.h"
#include "parallel.h"
#include "parts.h"
#include "stream_parts.h"
#include "timings.h"

namespace jqtrace {
namespace {

/// A B or E event kept in file order until the pass ends, then paired per lane.
struct BeginEnd {
  int64_t ts;
  uint32_t name;
  uint32_t cat;
  bool begin;
};

/// True when ids map to themselves: the parts met the same names (or lanes) in the same order.
bool is_identity(const std::vector<uint32_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] != i) return false;
  return true;
}

/// A name id of a part's interner (negative: none) as the interner it joins numbers it
/// (names: Interner::intern_all's mapping).
int64_t renamed(const std::vector<uint32_t>& names, int64_t id) {
  return id < 0 ? id : names[static_cast<std::size_t>(id)];
}
/// The same for a span's cat column, which holds id + 1 (0: no cat).
int64_t renamed_cat(const std::vector<uint32_t>& names, int64_t cat) {
  return cat == 0 ? 0 : int64_t{names[static_cast<std::size_t>(cat - 1)]} + 1;
}

/// Appends from to column through f, or as it is when f changes nothing (one copy of the
/// bytes instead of a loop over the values).
template <typename F>
void append_through(IntColumn& column, const IntColumn& from, bool unchanged, F&& f) {
  if (unchanged) column.append(from);
  else column.append_mapped(from, f);
}

/// Each lane's B and E events in file order, paired when the whole file is read: a list for
/// the lanes that have them, 4 bytes for those that do not (a vector a lane was 24 bytes, a
/// tenth of a one-span lane's cost).
class BeginEndLists {
 public:
  void add_lane() { slot_.push_back(0); }
  std::size_t lanes() const { return slot_.size(); }
  std::vector<BeginEnd>& of(std::size_t lane) {
    uint32_t& slot = slot_[lane];  // index + 1; 0: none yet
    if (slot == 0) {
      lists_.emplace_back();
      slot = static_cast<uint32_t>(lists_.size());
    }
    return lists_[slot - 1];
  }
  /// Lane's list (null when it had none): its memory is freed by release(lane).
  std::vector<BeginEnd>* find(std::size_t lane) { return slot_[lane] ? &lists_[slot_[lane] - 1] : nullptr; }
  void release(std::size_t lane) {
    if (std::vector<BeginEnd>* list = find(lane)) std::vector<BeginEnd>().swap(*list);
  }

 private:
  std::vector<uint32_t> slot_;
  std::deque<std::vector<BeginEnd>> lists_;
};

/// Chain id → category for the span-by-span join: an array when the ids are dense (one
/// load instead of a hash probe a span), else a table.
class ChainCategories {
 public:
  explicit ChainCategories(const DenseFirstMap<ChainInfo>& chains) : categories_(make(chains)) {}
  uint16_t of(int64_t id) const {
    const uint16_t* category = categories_.find(id);
    return category ? *category : uint16_t{kUnpublishedCategory};
  }

 private:
  static IdMap<uint16_t> make(const DenseFirstMap<ChainInfo>& chains) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    chains.for_each([&](int64_t id, const ChainInfo&) {
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    });
    IdMap<uint16_t> categories(lo, hi, 4 * chains.size() + 4096);
    chains.for_each([&](int64_t id, const ChainInfo& c) { categories[id] = c.category; });
    return categories;
  }
  IdMap<uint16_t> categories_;
};

/// A span's category (SPEC §1.4): its chain's for publish, chunk and stage_wait (a chain
/// no publish named: unpublished chain), else the group of its kind.
uint16_t span_category(const JobqueNames& names, const ChainCategories& chains, int64_t name, int64_t chain) {
  if (names.chained(name)) return chains.of(chain);
  if (name == names.wake) return kWakeCategory;
  if (name == names.fifo_job) return kFifoJobCategory;
  return kOtherSpansCategory;
}

/// Builds the Trace from the reader's events; finish() resolves what needs the whole file.
/// The union of a lane's spans (sorted by ts) as disjoint stretches [lo, hi], in order;
/// spans that overlap or touch make one stretch.
struct BusyStretches {
  std::vector<int64_t> lo, hi, busy_before;  ///< busy_before[k]: the stretches before k, added up
  int64_t total = 0;
};

BusyStretches busy_stretches(const SpanTable& spans) {
  BusyStretches b;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    int64_t ts = spans.ts[i], end = spans.end(i);
    if (!b.lo.empty() && ts <= b.hi.back()) {
      if (end > b.hi.back()) {
        b.total += end - b.hi.back();
        b.hi.back() = end;
      }
      continue;
    }
    b.busy_before.push_back(b.total);
    b.lo.push_back(ts);
    b.hi.push_back(end);
    b.total += end - ts;
  }
  return b;
}

/// Fills the instants' quiet_before, quiet_after, busy_before and busy_after from their
/// lanes' spans (sorted), a lane at a time.
void measure_instants(Trace& t) {
  InstantTable& in = t.instants;
  std::size_t n = in.size();
  // Filled in place (set): zeros cost nothing until a value widens a column, and a trace of
  // a kind an instant holds no second copy of them (memory_bounds.sh).
  for (IntColumn* c : {&in.quiet_before, &in.quiet_after, &in.busy_before, &in.busy_after}) {
    *c = IntColumn{};
    for (std::size_t i = 0; i < n; ++i) c->push(0);
  }
  // The instants' rows lane after lane (a counting sort, each lane's in time order).
  std::vector<uint32_t> begin(t.lanes.size() + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++begin[static_cast<std::size_t>(in.lane[i]) + 1];
  for (std::size_t l = 0; l < t.lanes.size(); ++l) begin[l + 1] += begin[l];
  std::vector<uint32_t> rows(n), next(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < n; ++i) rows[next[static_cast<std::size_t>(in.lane[i])]++] = static_cast<uint32_t>(i);
  std::vector<uint32_t>().swap(next);
  for (std::size_t l = 0; l < t.lanes.size(); ++l) {
    if (begin[l] == begin[l + 1]) continue;
    BusyStretches b = busy_stretches(t.lanes[l].spans);
    for (std::size_t r = begin[l]; r < begin[l + 1]; ++r) {
      std::size_t i = rows[r];
      int64_t ts = in.ts[i];
      // after: the first stretch starting at or after ts; j = after - 1 starts before it.
      auto after = static_cast<std::size_t>(std::lower_bound(b.lo.begin(), b.lo.end(), ts) - b.lo.begin());
      bool has_before = after > 0;
      std::size_t j = after - 1;
      int64_t busy_before = 0;
      if (has_before && ts < b.hi[j]) {  // inside a stretch: quiet on neither side
        busy_before = b.busy_before[j] + (ts - b.lo[j]);
      } else {
        in.quiet_before.set(i, has_before ? ts - b.hi[j] : -1);
        in.quiet_after.set(i, after < b.lo.size() ? b.lo[after] - ts : -1);
        busy_before = has_before ? b.busy_before[j] + (b.hi[j] - b.lo[j]) : 0;
      }
      in.busy_before.set(i, busy_before);
      in.busy_after.set(i, b.total - busy_before);
    }
  }
}

class TraceBuilder final : public EventSink {
 public:
  /// Where the events go as well from now on (a parallel load reading the rest of the
  /// input into the first part's builder gives it a sink of its own).
  void set_tee(SplittableSink* tee) {
    options_.tee = tee;
    if (tee) tee->bind(t_.names);
  }

  TraceBuilder(Trace* t, const LoadOptions& options) : t_(*t), options_(options) {
    if (options_.tee) options_.tee->bind(t_.names);
    span_names_ = JobqueNames::interned(t_.names);
    thread_name_ = t_.names.intern("thread_name");
    process_name_ = t_.names.intern("process_name");
    thread_sort_index_ = t_.names.intern("thread_sort_index");
  }

  void on_profile(const JobqueProfile& p) override {
    t_.profile = p;
    if (options_.tee) options_.tee->on_profile(p);
  }
  void on_window_record(const WindowRecord& w) override {
    t_.window = w;
    if (options_.tee) options_.tee->on_window_record(w);
  }
  void on_root_member(RootMember m, uint64_t offset) override {
    if (options_.tee) options_.tee->on_root_member(m, offset);
  }

  void on_event(const RawEvent& e, const Interner& names) override {
    record(e);
    if (options_.tee) options_.tee->on_event(e, names);
  }

  /// Appends what `later` read from the part of the file after this builder's: its names
  /// re-interned here, its lanes matched to these (new ones after), every table appended in
  /// file order. B/E pairs and the category join wait for finish(), so the result is the
  /// model one pass over the whole file builds.
  /// Returns how the later part's name ids map to this trace's.
  std::vector<uint32_t> absorb(TraceBuilder& later) {
    Trace& p = later.t_;
    std::vector<uint32_t> names = t_.names.intern_all(p.names);
    std::vector<uint32_t> thread_names = t_.thread_names.intern_all(p.thread_names);
    bool same_names = is_identity(names);
    auto name = [&](int64_t id) { return renamed(names, id); };
    auto cat = [&](int64_t c) { return renamed_cat(names, c); };

    // The part's lanes are taken from the front and freed one by one: a trace of a million
    // one-span lanes would otherwise hold the part's half million beside the joined ones.
    auto take = [](IntColumn& to, IntColumn& from) {
      if (to.empty()) to = std::move(from);  // a lane new to the join (most of them): no copy
      else to.append(from);
      from = IntColumn{};  // each column's memory back as soon as it is copied
    };
    auto append_spans = [&](SpanTable& a, SpanTable& b) {
      take(a.ts, b.ts);
      take(a.dur, b.dur);
      append_through(a.name, b.name, same_names, name);
      b.name = IntColumn{};
      append_through(a.cat, b.cat, same_names, cat);
      b.cat = IntColumn{};
      take(a.stage, b.stage);
      take(a.arg, b.arg);
      take(a.chain, b.chain);
      b = SpanTable{};
    };
    std::vector<uint32_t> lanes(p.lanes.size());
    for (std::size_t l = 0; !p.lanes.empty(); ++l, p.lanes.pop_front()) {
      Lane& from = p.lanes.front();
      ProcessId pid = reinterned(from.pid, names), tid = reinterned(from.tid, names);
      uint32_t at = lane_for(pid, tid);
      lanes[l] = at;
      Lane& to = t_.lanes[at];
      to.events += from.events;
      if (from.thread_name != Interner::kNone) to.thread_name = thread_names[from.thread_name];  // the later metadata wins
      if (from.has_time) {
        extend_range(&to.has_time, &to.first_ts, &to.last_end, from.first_ts, from.last_end);
      }
      if (std::vector<BeginEnd>* list = later.begin_ends_.find(l)) {
        for (BeginEnd be : *list) {
          be.name = be.name == Interner::kNone ? be.name : names[be.name];
          be.cat = be.cat == Interner::kNone ? be.cat : names[be.cat];
          begin_ends_.of(at).push_back(be);
        }
        later.begin_ends_.release(l);
      }
      append_spans(to.spans, from.spans);
    }
    auto lane = [&](int64_t l) -> int64_t { return lanes[static_cast<std::size_t>(l)]; };
    bool same_lanes = is_identity(lanes);
    InstantTable& in = t_.instants;
    in.ts.append(p.instants.ts);
    append_through(in.lane, p.instants.lane, same_lanes, lane);
    append_through(in.name, p.instants.name, same_names, name);
    in.arg.append(p.instants.arg);
    in.scope.append(p.instants.scope);
    CounterTable& co = t_.counters;
    co.ts.append(p.counters.ts);
    append_through(co.lane, p.counters.lane, same_lanes, lane);
    append_through(co.name, p.counters.name, same_names, name);
    for (const ProcessName& pn : p.process_names) add_process_name(reinterned(pn.pid, names), pn.name);
    t_.chains.absorb_each(p.chains, [&](int64_t id, const ChainInfo& c) {
      ChainInfo& to = t_.chains[id];
      if (c.publishes) {
        to.nstages = c.nstages;
        to.tag = c.tag;
      }
      to.publishes = static_cast<uint8_t>(std::min(255, to.publishes + c.publishes));
    });
    if (p.profile.present) t_.profile = p.profile;
    if (p.window.present) t_.window = p.window;
    t_.jobque = t_.jobque || p.jobque;
    if (p.has_time) extend_range(&t_.has_time, &t_.start_ns, &t_.end_ns, p.start_ns, p.end_ns);
    for (std::size_t i = 0; i < t_.phase_counts.size(); ++i) t_.phase_counts[i] += p.phase_counts[i];
    t_.events += p.events;
    t_.malformed += p.malformed;
    add_duration(p.duration_sum_ns);
    have_last_ = false;
    return names;
  }

  /// Lanes are sorted and joined to their chains' categories on up to `threads` threads.
  void finish(unsigned threads = 1) {
    pair_begin_ends();
    sort_instants();
    t_.jobque = t_.jobque || t_.profile.present;
    bool categories = t_.jobque && options_.categories;
    std::optional<ChainCategories> chain_categories;
    if (categories) name_categories();
    // Without span tables (an index's pass, window's) no span takes a category: the
    // chains' table of them would be built for nothing.
    if (categories && options_.spans) chain_categories.emplace(t_.chains);
    // A lane of more spans than a slice is finished on every thread, a slice each (a caller
    // lane holds a third of a jobque trace's spans: one thread's work while the others
    // waited); then the rest, largest first, a lane a thread.
    std::vector<uint32_t> by_size(t_.lanes.size());
    std::iota(by_size.begin(), by_size.end(), 0u);
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](uint32_t a, uint32_t b) { return t_.lanes[a].spans.size() > t_.lanes[b].spans.size(); });
    // None without span tables: the span times kept for measure_instants take no category.
    const ChainCategories* chains = chain_categories ? &*chain_categories : nullptr;
    std::size_t big = 0;
    for (; big < by_size.size() && threads > 1 && t_.lanes[by_size[big]].spans.size() > kFinishSlice; ++big)
      finish_in_slices(t_.lanes[by_size[big]].spans, chains, threads);
    run_parallel(by_size.size() - big, threads, [&](std::size_t k) {
      SpanTable& spans = t_.lanes[by_size[big + k]].spans;
      sort_by_time(spans);
      if (chains) join_categories(spans, *chains);
    });
    if (options_.instant_activity) measure_instants(t_);
    if (!options_.spans)
      for (Lane& lane : t_.lanes) lane.spans = SpanTable{};  // the times measure_instants read
  }

 private:
  void record(const RawEvent& e) {
    ++t_.events;
    if (e.ph > 0) ++t_.phase_counts[static_cast<unsigned char>(e.ph) & 127];
    if (e.ph == 'M') return metadata(e);
    if (!e.has_ts || e.problems & (kTsNotNumber | kTsOutOfRange | kDurNotNumber | kDurOutOfRange) ||
        !e.pid.present != !e.tid.present) {
      ++t_.malformed;
      return;
    }
    switch (e.ph) {
      case 'X':
        if (!e.has_dur || e.dur_ns < 0 || e.name == Interner::kNone) {
          ++t_.malformed;
          return;
        }
        add_span(e);
        break;
      case 'B':
      case 'E':
        if (e.ph == 'B' && e.name == Interner::kNone) {
          ++t_.malformed;
          return;
        }
        touch(e, 0);
        // Paired without span tables too: the counts of unpaired ones are the model's.
        begin_ends_.of(current_lane_).push_back({e.ts_ns, e.name, e.cat, e.ph == 'B'});
        break;
      case 'i':
      case 'I': add_instant(e); break;
      case 'C': {
        uint32_t lane = lane_of(e);
        touch(e, 0);
        t_.counters.ts.push(e.ts_ns);
        t_.counters.lane.push(lane);
        t_.counters.name.push(e.name == Interner::kNone ? int64_t{-1} : int64_t{e.name});  // not the unsigned kNone
        break;
      }
      default: touch(e, 0); break;
    }
  }

  /// The event's lane: nearly always the previous event's (a tracer writes a lane's
  /// events in runs), checked inline; else looked up, or made, out of line.
  __attribute__((always_inline)) uint32_t lane_of(const RawEvent& e) {
    if (have_last_ && lane_key(e.pid, e.tid) == last_key_) return current_lane_;
    return look_up_lane(e);
  }

  __attribute__((noinline)) uint32_t look_up_lane(const RawEvent& e) {
    last_key_ = lane_key(e.pid, e.tid);
    have_last_ = true;
    current_lane_ = lane_for(e.pid, e.tid);
    current_ = &t_.lanes[current_lane_];  // a deque's elements stay where they are as it grows
    return current_lane_;
  }

  /// The lane (pid, tid), made when it is new.
  uint32_t lane_for(const ProcessId& pid, const ProcessId& tid) {
    auto key_of = [&](uint32_t lane) { return lane_key(t_.lanes[lane].pid, t_.lanes[lane].tid); };
    auto [lane, added] = lane_index_.find_or_add(lane_key(pid, tid), static_cast<uint32_t>(t_.lanes.size()), key_of);
    if (added) {
      t_.lanes.emplace_back();
      t_.lanes.back().pid = pid;
      t_.lanes.back().tid = tid;
      begin_ends_.add_lane();
    }
    return lane;
  }

  /// Counts the event on its lane and widens the lane's and the trace's time range.
  __attribute__((always_inline)) void touch(const RawEvent& e, int64_t dur) {
    lane_of(e);
    Lane& lane = *current_;
    ++lane.events;
    int64_t end = e.ts_ns + dur;
    extend_range(&lane.has_time, &lane.first_ts, &lane.last_end, e.ts_ns, end);
    extend_range(&t_.has_time, &t_.start_ns, &t_.end_ns, e.ts_ns, end);
  }

  static void extend_range(bool* has, int64_t* lo, int64_t* hi, int64_t start, int64_t end) {
    *lo = *has ? std::min(*lo, start) : start;
    *hi = *has ? std::max(*hi, end) : end;
    *has = true;
  }

  void add_span(const RawEvent& e) {
    touch(e, e.dur_ns);
    if (e.has_chain && (e.name == span_names_.publish || e.name == span_names_.chunk)) t_.jobque = true;
    // Chains are noted as the file is read (each part of a parallel read its own, joined
    // in file order): the category join after the pass then needs no scan for publishes.
    if (e.name == span_names_.publish && e.has_chain && (options_.categories || !options_.spans)) note_publish(e.chain, e.stage);
    add_duration(e.dur_ns);  // with or without span tables: an index's skeleton is the same either way
    if (!options_.spans) return keep_time_only(current_->spans, e.ts_ns, e.dur_ns);
    SpanTable& s = current_->spans;
    s.ts.push(e.ts_ns);
    s.dur.push(e.dur_ns);
    s.name.push(e.name);
    s.cat.push(e.cat == Interner::kNone ? 0 : int64_t{e.cat} + 1);
    s.stage.push(e.stage);
    s.arg.push(e.arg);
    s.chain.push(e.chain);
  }

  /// Without span tables, a span's time is kept until the read is done (measure_instants
  /// needs it), then dropped.
  void keep_time_only(SpanTable& s, int64_t ts, int64_t dur) const {
    if (!options_.instant_activity) return;
    s.ts.push(ts);
    s.dur.push(dur);
  }

  void note_publish(int64_t chain_id, int64_t stage) {
    ChainInfo& chain = t_.chains[chain_id];
    chain.nstages = static_cast<uint8_t>(publish_nstages(stage));
    chain.tag = static_cast<int32_t>(publish_tag(stage));
    if (chain.publishes < 255) ++chain.publishes;
  }

  void add_instant(const RawEvent& e) {
    if (e.name == Interner::kNone) {
      ++t_.malformed;
      return;
    }
    touch(e, 0);
    InstantTable& in = t_.instants;
    in.ts.push(e.ts_ns);
    in.lane.push(current_lane_);
    in.name.push(e.name);
    in.arg.push(stored_marker_arg(e.has_arg, e.arg));
    in.scope.push(e.scope ? e.scope : 't');
  }

  void metadata(const RawEvent& e) {
    if (e.name == process_name_) return add_process_name(e.pid, e.arg_name);
    // Thread metadata names (or orders) a lane, which makes it part of the trace.
    if ((e.name == thread_name_ || e.name == thread_sort_index_) && e.pid.present && e.tid.present) {
      Lane& lane = t_.lanes[lane_of(e)];
      ++lane.events;
      // "" too: a later empty name replaces an earlier one, also when a part's lane is joined.
      if (e.name == thread_name_) lane.thread_name = t_.thread_names.intern(e.arg_name);
    }
  }

  /// The last name of each process wins; an index keeps this O(log n) a metadata event
  /// (a scan was quadratic: a million process_name events did not finish).
  /// Keeps the sum of span durations, which bounds every sum an analysis makes.
  void add_duration(int64_t ns) {
    if (__builtin_add_overflow(t_.duration_sum_ns, ns, &t_.duration_sum_ns) || t_.duration_sum_ns > kMaxDurationSumNs)
      t_.duration_sum_ns = kMaxDurationSumNs + 1;  // saturated: too large (see Trace::durations_too_large)
  }

  void add_process_name(const ProcessId& pid, const std::string& name) {
    auto key = std::make_tuple(pid.present, pid.is_string, pid.number, pid.text);
    auto [it, added] = process_index_.try_emplace(key, t_.process_names.size());
    if (!added) {
      t_.process_names[it->second].name = name;
      return;
    }
    t_.process_names.push_back({pid, name});
  }

  /// SPEC §2 (begin_end.h), per lane; an E with nothing open is dropped.
  void pair_begin_ends() {
    for (std::size_t l = 0; l < begin_ends_.lanes(); ++l) {
      std::vector<BeginEnd>* list = begin_ends_.find(l);
      if (!list) continue;
      BeginEndPairing<BeginEnd> pairing;
      SpanTable& s = t_.lanes[l].spans;
      auto emit = [&](const BeginEnd& b, int64_t end) {
        add_duration(std::max<int64_t>(0, end - b.ts));
        if (!options_.spans) return keep_time_only(s, b.ts, std::max<int64_t>(0, end - b.ts));
        s.ts.push(b.ts);
        s.dur.push(std::max<int64_t>(0, end - b.ts));
        s.name.push(b.name);
        s.cat.push(b.cat == Interner::kNone ? 0 : int64_t{b.cat} + 1);
        s.stage.push(0);
        s.arg.push(0);
        s.chain.push(0);
      };
      for (const BeginEnd& be : *list) {
        if (be.begin) pairing.begin(be);
        else if (auto b = pairing.end(be)) emit(*b, be.ts);
      }
      t_.unmatched_ends += pairing.unmatched().size();
      t_.unclosed_begins += pairing.unclosed().size();
      for (const BeginEnd& b : pairing.unclosed()) emit(b, t_.end_ns);
      begin_ends_.release(l);
    }
  }

  /// Stable sort of a table's rows by ts (then, with dur, longer first: a parent before the
  /// children that start with it): a permutation applied to each column in place, so the
  /// extra memory is the order and stable_sort's buffer, not a second table (nor a second
  /// column: a lane of 3 million spans with one out of order peaked 11 MB higher). Sorted
  /// input (the usual jobque lane) costs one scan. (std::sort needs no buffer, but took 1.4
  /// times as long on a lane that was sorted but for one span.)
  static void sort_by_time(const IntColumn& ts, const IntColumn* dur, std::initializer_list<IntColumn*> columns) {
    std::size_t n = ts.size();
    auto before = [&](std::size_t a, std::size_t b) {
      if (ts[a] != ts[b]) return ts[a] < ts[b];
      return dur && (*dur)[a] > (*dur)[b];
    };
    bool sorted = true;
    for (std::size_t i = 1; i < n && sorted; ++i) sorted = !before(i, i - 1);
    if (sorted) return;
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), before);
    for (IntColumn* c : columns)
      if (c->size() == n) c->permute(order);
  }

  static void sort_by_time(SpanTable& s) {
    sort_by_time(s.ts, &s.dur, {&s.ts, &s.dur, &s.name, &s.cat, &s.stage, &s.arg, &s.chain, &s.category});
  }

  void sort_instants() {
    InstantTable& in = t_.instants;
    sort_by_time(in.ts, nullptr, {&in.ts, &in.lane, &in.name, &in.arg, &in.scope});
  }

  uint32_t category_index(const std::string& name) {
    auto [it, added] = category_by_name_.try_emplace(name, static_cast<uint32_t>(t_.categories.size()));
    if (added) t_.categories.push_back({name, category_color(name, t_.profile)});
    return it->second;
  }

  /// SPEC §1.4, after the pass: publishes gave each chain its stage count and tag (as the
  /// file was read); each chain's category is named here, in (stage count, tag) order so
  /// that no table's slot order decides the categories' order.
  void name_categories() {
    for (std::string_view reserved : {kOtherSpans, kWakeGroup, kFifoJobGroup, kUnpublishedChain})
      category_index(std::string(reserved));
    for (const ProfileCategory& c : t_.profile.categories) category_index(c.name);
    // A handful of (stage count, tag) pairs name every chain's category: look each up once,
    // not once a chain (a string and a map lookup each, for hundreds of thousands of chains).
    std::map<std::pair<uint8_t, int32_t>, uint16_t> known;
    bool any_tag = false;
    t_.chains.for_each([&](int64_t, ChainInfo& c) {
      known.try_emplace({c.nstages, c.tag}, uint16_t{0});
      any_tag = any_tag || c.tag != 0;
    });
    t_.attribution = chain_attribution(t_.profile, any_tag);
    // The trace's own names first, then the guesses: a guess that a legacy tag or the
    // profile also names ("classifier" of 1-stage tag-0 chains beside tag-5 chains) is a
    // category of its own, "classifier*", not summed into the trace's (issue 51).
    std::set<std::string> own;  // the names the trace gives: reserved, the profile's, legacy tags'
    for (const Category& c : t_.categories) own.insert(c.name);
    for (auto& [pair, category] : known)
      if (ChainName named = chain_category(pair.first, pair.second, t_.profile, t_.attribution); !named.guessed)
        own.insert(named.name);
    for (auto& [pair, category] : known) {
      ChainName named = chain_category(pair.first, pair.second, t_.profile, t_.attribution);
      if (named.guessed && own.count(named.name)) named.name += "*";
      category = static_cast<uint16_t>(category_index(named.name));
      if (named.guessed) t_.categories[category].guessed = true;
    }
    t_.chains.for_each([&](int64_t, ChainInfo& c) { c.category = known.at({c.nstages, c.tag}); });
  }

  /// Every span of a lane takes its category: publish, chunk and stage_wait their chain's.
  static constexpr std::size_t kFinishSlice = std::size_t{1} << 17;  // spans

  /// sort_by_time and join_categories of one large lane, its slices on the threads: whether
  /// it is sorted, then (sorted) each span's category into an array a slice at a time,
  /// pushed to the column in order.
  void finish_in_slices(SpanTable& s, const ChainCategories* chains, unsigned threads) const {
    std::size_t slices = (s.size() + kFinishSlice - 1) / kFinishSlice;
    std::vector<uint8_t> unsorted(slices, 0);
    run_parallel(slices, threads, [&](std::size_t k) {
      std::size_t end = std::min(s.size(), (k + 1) * kFinishSlice);
      for (std::size_t i = std::max<std::size_t>(1, k * kFinishSlice); i < end && !unsorted[k]; ++i)
        unsorted[k] = s.ts[i] < s.ts[i - 1] || (s.ts[i] == s.ts[i - 1] && s.dur[i] > s.dur[i - 1]);
    });
    if (std::find(unsorted.begin(), unsorted.end(), 1) != unsorted.end()) sort_by_time(s);
    if (!chains) return;
    std::vector<uint16_t> category(s.size());
    run_parallel(slices, threads, [&](std::size_t k) {
      std::size_t end = std::min(s.size(), (k + 1) * kFinishSlice);
      for (std::size_t i = k * kFinishSlice; i < end; ++i)
        category[i] = span_category(span_names_, *chains, s.name[i], s.chain[i]);
    });
    for (uint16_t c : category) s.category.push(c);
  }

  void join_categories(SpanTable& s, const ChainCategories& categories) const {
    for (std::size_t i = 0; i < s.size(); ++i) s.category.push(span_category(span_names_, categories, s.name[i], s.chain[i]));
  }

  Trace& t_;
  LoadOptions options_;
  JobqueNames span_names_;
  uint32_t thread_name_, process_name_, thread_sort_index_;
  LaneIndex lane_index_;
  std::map<std::tuple<bool, bool, int64_t, uint32_t>, std::size_t> process_index_;  ///< into process_names
  LaneKey last_key_{};
  bool have_last_ = false;
  uint32_t current_lane_ = 0;
  Lane* current_ = nullptr;  ///< t_.lanes[current_lane_], valid while have_last_
  BeginEndLists begin_ends_;
  std::map<std::string, uint32_t> category_by_name_;
};

}  // namespace

std::vector<StoppedLane> lanes_stopped_early(const Trace& trace) {
  std::vector<StoppedLane> stopped;
  int64_t stop_ns = 0;
  for (std::size_t l = 0; l < trace.lanes.size(); ++l)
    if (lane_stopped_early(trace, l, &stop_ns)) stopped.push_back({l, stop_ns});
  return stopped;
}

std::size_t caller_lane(const Trace& trace) {
  std::size_t caller = SIZE_MAX;
  for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
    const Lane& lane = trace.lanes[l];
    if (lane.spans.size() == 0 || lane.tid.is_string) continue;
    if (caller == SIZE_MAX || lane.tid.number > trace.lanes[caller].tid.number) caller = l;
  }
  return caller;
}

bool lane_stopped_early(const Trace& trace, std::size_t l, int64_t* stop_ns) {
  if (!trace.jobque || trace.read.status == ReadStatus::truncated || trace.window.present) return false;
  const Lane& lane = trace.lanes[l];
  if (!lane.has_time || !lane_stopped_early(lane.last_end, trace.start_ns, trace.end_ns)) return false;
  *stop_ns = lane.last_end;
  return true;
}

std::size_t SpanTable::bytes() const {
  return ts.bytes() + dur.bytes() + name.bytes() + cat.bytes() + stage.bytes() + arg.bytes() + chain.bytes() +
         category.bytes();
}

std::size_t Trace::memory_bytes() const {
  std::size_t total = chains.bytes();
  for (const Lane& l : lanes) total += l.spans.bytes() + sizeof(Lane);
  total += instants.ts.bytes() + instants.lane.bytes() + instants.name.bytes() + instants.arg.bytes() +
           instants.scope.bytes() + instants.quiet_before.bytes() + instants.quiet_after.bytes() +
           instants.busy_before.bytes() + instants.busy_after.bytes();
  total += counters.ts.bytes() + counters.lane.bytes() + counters.name.bytes();
  return total;
}

std::string Trace::lane_label(std::size_t lane) const {
  return jqtrace::lane_label(lanes[lane].pid, lanes[lane].tid, names);
}

namespace {

/// The reader's container-level problems: to the loader's sink and to the tee's, when it
/// checks them too.
class ContainerDiagnostics final : public DiagnosticSink {
 public:
  ContainerDiagnostics(DiagnosticSink* loader, SplittableSink* tee)
      : loader_(loader), tee_(tee ? tee->container_diagnostics() : nullptr) {}
  void report(Diagnostic d) override {
    if (tee_) tee_->report(d);
    if (loader_) loader_->report(std::move(d));
  }
  /// What read_trace is given: null when nobody listens.
  DiagnosticSink* sink() { return loader_ || tee_ ? this : nullptr; }

 private:
  DiagnosticSink* loader_;
  DiagnosticSink* tee_;
};

/// One part of a file being loaded in parallel: its own names, model and diagnostics.
struct Part {
  std::unique_ptr<Trace> trace = std::make_unique<Trace>();
  std::unique_ptr<TraceBuilder> builder;
  std::unique_ptr<SplittableSink> tee;  ///< this part's share of LoadOptions::tee
  CollectedDiagnostics diags;
};

/// How the parts of a parallel load are read and joined, for file parts and stream parts
/// alike: part k is read into a model of its own, then joined (in order) to part 0's.
class PartLoader {
 public:
  /// Parts are joined on the thread that read the last one a join waited for, while the
  /// other threads read on (see read_parts): a join is one thread's work.
  PartLoader(const LoadOptions& options, DiagnosticSink* diags) : options_(options), diags_(diags) {}

  ReadResult read(std::size_t k, Source& src, const ReadOptions& read) {
    Part& part = fresh(k);
    LoadOptions own = options_;
    if (options_.tee) {
      part.tee = options_.tee->fork();
      own.tee = part.tee.get();
    }
    part.builder = std::make_unique<TraceBuilder>(part.trace.get(), own);
    ContainerDiagnostics diags(&part.diags, own.tee);
    return read_trace(src, *part.builder, part.trace->names, diags.sink(), read);
  }

  /// Joins part k to parts 0..k-1 (k = 0: takes it as they).
  bool join(std::size_t k) {
    Part& part = at(k);
    report_diagnostics(part.diags);
    if (k == 0) {
      if (options_.tee) options_.tee->absorb(*part.tee, identity(part.trace->names.size()));
      return true;
    }
    std::vector<uint32_t> names = first().builder->absorb(*part.builder);
    if (options_.tee) options_.tee->absorb(*part.tee, names);
    part = Part{};  // its memory back before the next one is joined
    return true;
  }

  /// Reads the rest of the input, from a part's start, into the model joined so far.
  ReadResult read_rest(std::size_t, Source& src) {
    Part& into = first();
    std::unique_ptr<SplittableSink> tee = options_.tee ? options_.tee->fork() : nullptr;
    into.builder->set_tee(tee.get());
    CollectedDiagnostics found;
    ContainerDiagnostics diags(&found, tee.get());
    ReadResult r = read_trace(src, *into.builder, into.trace->names, diags.sink(), ReadOptions{});
    report_diagnostics(found);
    if (tee) options_.tee->absorb(*tee, identity(into.trace->names.size()));
    into.builder->set_tee(nullptr);
    return r;
  }

  void drop(std::size_t k) { fresh(k); }

  /// The joined model, finished, into *trace.
  void finish(const ReadResult& r, unsigned threads, Trace* trace) {
    Part& part = first();
    if (r.status != ReadStatus::input_error) part.builder->finish(threads);
    IntColumn::release_kept_buffers();  // the parts' buffers, reused as they were read
    part.trace->read = r;
    *trace = std::move(*part.trace);
  }

 private:
  Part& at(std::size_t k) { return parts_.at(k); }
  Part& fresh(std::size_t k) { return at(k) = Part{}; }
  Part& first() { return at(0); }
  void report_diagnostics(CollectedDiagnostics& found) {
    if (diags_)
      for (Diagnostic& d : found.items) diags_->report(std::move(d));
    found.items.clear();
  }
  static std::vector<uint32_t> identity(std::size_t size) {
    std::vector<uint32_t> same(size);
    std::iota(same.begin(), same.end(), 0u);
    return same;
  }

  const LoadOptions& options_;
  DiagnosticSink* diags_;
  PartSlots<Part> parts_;
};

/// A compressed file or stdin, in parts cut from the decoded stream.
bool load_stream_parallel(StreamInput& in, unsigned threads, Trace* trace, DiagnosticSink* diags,
                          const LoadOptions& options, const ProgressFn& progress, ReadResult* result,
                          uint64_t part_bytes) {
  PartLoader loader(options, diags);
  StreamRead read = read_stream_parts(in, threads, part_bytes, progress, part_work(loader));
  if (read.reads.empty()) return false;  // not reached: the last part always counts
  ReadResult r = joined_result(read.reads, read.reads.size());
  PhaseClock clock("finish", PhaseKind::scales);
  loader.finish(r, threads, trace);
  *result = r;
  return true;
}

}  // namespace

namespace {

/// The parts of plan read on `threads` threads and joined in order as they are read (see
/// load_trace_parallel).
bool load_planned(const PartOpener& open, const PartPlan& plan, unsigned threads, Trace* trace, DiagnosticSink* diags,
                  const LoadOptions& options, const ProgressFn& progress, ReadResult* result) {
  if (plan.starts.size() < 2) return false;
  PartLoader loader(options, diags);
  std::vector<PartRead> reads = read_parts(open, plan, threads, progress, part_work(loader));
  if (reads.empty()) return false;
  ReadResult r = joined_result(reads, reads.size());
  PhaseClock clock("finish", PhaseKind::scales);
  loader.finish(r, threads, trace);
  *result = r;
  return true;
}

}  // namespace

bool load_trace_parallel(const std::shared_ptr<Input>& input, unsigned threads, Trace* trace, DiagnosticSink* diags,
                         const LoadOptions& options, const ProgressFn& progress, ReadResult* result,
                         uint64_t min_part_bytes) {
  if (threads < 2) return false;
  if (auto stream = open_stream_input(*input, options.gzip_points))
    return load_stream_parallel(*stream, threads, trace, diags, options, progress, result, min_part_bytes);
  return load_planned(file_parts(input), plan_file(*input, threads, min_part_bytes), threads, trace, diags, options,
                      progress, result);
}

bool load_text_parallel(std::shared_ptr<const std::string> text, unsigned parts, unsigned threads, Trace* trace,
                        DiagnosticSink* diags, const LoadOptions& options, ReadResult* result,
                        uint64_t min_part_bytes) {
  PartPlan plan = plan_parts(*text, parts, min_part_bytes);
  return load_planned(text_parts(std::move(text)), plan, threads, trace, diags, options, {}, result);
}

bool load_blocks(const std::vector<ByteRange>& blocks, const BlockOpener& open, unsigned threads,
                 const LoadOptions& options, Trace* partial, ReadResult* result) {
  if (blocks.empty()) return false;
  // The tee sees the blocks' events only once every block proved to be where it should.
  std::unique_ptr<SplittableSink> staging = options.tee ? options.tee->fork() : nullptr;
  LoadOptions own = options;
  own.tee = staging.get();
  PartLoader loader(own, nullptr);
  std::vector<PartRead> reads(blocks.size());
  run_parallel(blocks.size(), std::max(threads, 1u), [&](std::size_t k) {
    auto src = open(k);
    if (!src) return;
    reads[k].opened = true;
    ReadOptions read;
    read.stop_at = blocks[k].stop;
    reads[k].result = loader.read(k, *src, read);
  });
  for (std::size_t k = 0; k < reads.size(); ++k) {
    const ReadResult& r = reads[k].result;
    bool last_of_file = blocks[k].stop == UINT64_MAX;
    // Each block must end exactly where the index says the next event starts: anything
    // else means the file is not the one indexed.
    if (!reads[k].opened || r.status == ReadStatus::input_error ||
        (!last_of_file && r.stop != ReadResult::Stop::at_boundary))
      return false;
  }
  for (std::size_t k = 0; k < reads.size(); ++k) loader.join(k);
  ReadResult r = joined_result(reads, reads.size());
  loader.finish(r, threads, partial);
  if (staging) {
    std::vector<uint32_t> same(partial->names.size());
    std::iota(same.begin(), same.end(), 0u);
    options.tee->absorb(*staging, same);
  }
  *result = r;
  return true;
}

namespace {

/// The partial model's chains, each with the category the skeleton's (whole trace's)
/// category table gives it: what a full read's join would have named it.
void adopt_chains(Trace& t, const Trace& partial) {
  std::map<std::string, uint16_t, std::less<>> by_name;
  for (std::size_t i = 0; i < t.categories.size(); ++i) by_name.emplace(t.categories[i].name, static_cast<uint16_t>(i));
  std::map<std::pair<uint8_t, int32_t>, uint16_t> known;  // (stage count, tag) → category
  partial.chains.for_each([&](int64_t id, const ChainInfo& c) {
    ChainInfo& to = t.chains[id];
    to = c;
    to.category = 0;
    if (!t.jobque) return;  // a full read names no category then either
    auto [it, added] = known.try_emplace({c.nstages, c.tag}, uint16_t{kUnpublishedCategory});
    if (added) {
      ChainName name = chain_category(c.nstages, c.tag, t.profile, t.attribution);
      // A guess the trace also names is "NAME*" (name_categories): the guessed one.
      auto starred = name.guessed ? by_name.find(name.name + "*") : by_name.end();
      auto named = starred != by_name.end() && t.categories[starred->second].guessed ? starred : by_name.find(name.name);
      if (named != by_name.end()) it->second = named->second;
    }
    to.category = it->second;
  });
}

}  // namespace

void graft_blocks(Trace* skeleton, Trace& partial, unsigned threads) {
  Trace& t = *skeleton;
  adopt_chains(t, partial);
  std::vector<uint32_t> names = t.names.intern_all(partial.names);
  std::map<LaneKey, uint32_t> lane_of;
  for (uint32_t l = 0; l < t.lanes.size(); ++l) lane_of.emplace(lane_key(t.lanes[l].pid, t.lanes[l].tid), l);
  std::vector<std::pair<uint32_t, uint32_t>> moves;  // (partial lane, skeleton lane)
  for (uint32_t l = 0; l < partial.lanes.size(); ++l) {
    const Lane& from = partial.lanes[l];
    auto it = lane_of.find(lane_key(reinterned(from.pid, names), reinterned(from.tid, names)));
    if (it != lane_of.end() && from.spans.size()) moves.emplace_back(l, it->second);
  }
  bool categories = t.jobque;
  std::optional<ChainCategories> chain_categories;
  if (categories) chain_categories.emplace(t.chains);
  JobqueNames span_names = JobqueNames::found(t.names);
  run_parallel(moves.size(), std::max(threads, 1u), [&](std::size_t m) {
    SpanTable& from = partial.lanes[moves[m].first].spans;
    SpanTable& to = t.lanes[moves[m].second].spans;
    auto name = [&](int64_t id) { return renamed(names, id); };
    auto cat = [&](int64_t c) { return renamed_cat(names, c); };
    to.ts = std::move(from.ts);
    to.dur = std::move(from.dur);
    to.name.append_mapped(from.name, name);
    to.cat.append_mapped(from.cat, cat);
    to.stage = std::move(from.stage);
    to.arg = std::move(from.arg);
    to.chain = std::move(from.chain);
    if (categories)
      for (std::size_t i = 0; i < to.size(); ++i)
        to.category.push(span_category(span_names, *chain_categories, to.name[i], to.chain[i]));
    from = SpanTable{};
  });
}

ReadResult load_trace(Source& source, Trace* trace, DiagnosticSink* diags, const LoadOptions& options) {
  TraceBuilder builder(trace, options);
  ContainerDiagnostics both(diags, options.tee);
  ReadResult r;
  {
    PhaseClock clock("parse", PhaseKind::scales);  // one part: the path -j 1 takes
    r = read_trace(source, builder, trace->names, both.sink());
  }
  PhaseClock clock("finish", PhaseKind::scales);
  if (r.status != ReadStatus::input_error) builder.finish();
  IntColumn::release_kept_buffers();  // those widened columns gave back
  trace->read = r;
  return r;
}

}  // namespace jqtrace
