#include "unit_changes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <utility>

#include "latency.h"
#include "markers.h"
#include "stats.h"

namespace jqtrace {
namespace {

int64_t total(const std::vector<int64_t>& v) {
  int64_t sum = 0;
  for (int64_t x : v) sum = __builtin_add_overflow(sum, x, &sum) ? INT64_MAX : sum;
  return sum;
}

/// Each unit's latency parts, by class and by group, into k.latency_ns (units from
/// `first` on: k.dur_ns's, this run's).
void add_latency_samples(const LatencyAnalysis& a, const std::vector<Unit>& units, std::size_t first, KindSamples* k) {
  for (std::size_t u = 0; u < units.size(); ++u) {
    LatencyParts p = a.measure(units[u].range, 0);
    auto put = [&](const std::string& label, int64_t ns) {
      if (ns == 0) return;
      std::vector<int64_t>& v = k->latency_ns[latency_row_label(label)];
      v.resize(first + u + 1, 0);
      v[first + u] = ns;
    };
    for (std::size_t c = 0; c < kLatencyClasses; ++c)
      put(latency_class_name(static_cast<LatencyClass>(c)), p.of_class(static_cast<LatencyClass>(c)));
    for (std::size_t g = 0; g < a.outside_group(); ++g) put(a.groups()[g].name, p.of_group(g));
  }
}

/// A unit to measure: its kind (an index of the pooled kinds), its index in the kind's
/// samples, and its time range.
struct PendingUnit {
  std::size_t kind, unit;
  Range range;
};

/// A group's busy time in a unit: the group's name (as RangeStats names it) and its ns.
using GroupBusy = std::pair<const std::string*, int64_t>;

/// The busy time of each group in the pieces the units' edges cut the trace into (piece p:
/// between the p-th and the next of the edges, sorted and without repeats), kept so that
/// a run of pieces is summed without walking it: per group, its pieces with time and the
/// running sum after each.
class PieceBusy {
 public:
  PieceBusy(const Trace& trace, const SpanIndex& index, std::vector<int64_t> edges, unsigned threads)
      : edges_(std::move(edges)) {
    StatsOptions options = unit_stats_options(trace, threads);
    constexpr std::size_t kBlock = 4096;  // a piece's stats are ~300 bytes a group: a block at a time
    std::size_t pieces = edges_.size() > 1 ? edges_.size() - 1 : 0;
    by_piece_from_.push_back(0);
    for (std::size_t from = 0; from < pieces; from += kBlock) {
      std::vector<Range> ranges;
      for (std::size_t p = from; p < std::min(pieces, from + kBlock); ++p) ranges.push_back({edges_[p], edges_[p + 1]});
      std::vector<RangeStats> stats = compute_stats_of_ranges(trace, index, ranges, options);
      for (std::size_t k = 0; k < stats.size(); ++k) add_piece(from + k, stats[k]);
    }
  }

  /// The pieces [first, last) of a unit [lo, hi].
  std::pair<std::size_t, std::size_t> pieces_of(Range r) const {
    auto at = [&](int64_t t) {
      return static_cast<std::size_t>(std::lower_bound(edges_.begin(), edges_.end(), t) - edges_.begin());
    };
    return {at(r.lo), std::max(at(r.lo), at(r.hi))};
  }

  /// Each group's busy time over the pieces [first, last), those above 0, into out: by
  /// the pieces when they are fewer than the groups, else by each group's running sums
  /// (a unit over most of the trace costs a binary search a group, not a step a piece).
  void busy_over(std::size_t first, std::size_t last, std::vector<GroupBusy>* out) {
    out->clear();
    if (last - first <= names_.size()) {
      for (std::size_t p = first; p < last; ++p)
        for (std::size_t k = by_piece_from_[p]; k < by_piece_from_[p + 1]; ++k) {
          auto [group, ns] = by_piece_[k];
          if (sum_[group] == 0) touched_.push_back(group);
          sum_[group] += ns;
        }
      for (std::size_t group : touched_) {
        out->emplace_back(names_[group], sum_[group]);
        sum_[group] = 0;
      }
      touched_.clear();
      return;
    }
    for (std::size_t group = 0; group < names_.size(); ++group)
      if (int64_t ns = running_(group, last) - running_(group, first); ns > 0) out->emplace_back(names_[group], ns);
  }

 private:
  void add_piece(std::size_t p, const RangeStats& stats) {
    for (const GroupStats& g : stats.groups) {
      if (g.busy_ns <= 0) continue;
      auto [at, added] = group_of_.try_emplace(g.name, names_.size());
      if (added) {
        names_.push_back(&at->first);
        sum_.push_back(0);
        runs_.emplace_back();
      }
      std::size_t group = at->second;
      by_piece_.emplace_back(group, g.busy_ns);
      int64_t before = runs_[group].empty() ? 0 : runs_[group].back().second;
      runs_[group].emplace_back(p, before + g.busy_ns);
    }
    by_piece_from_.push_back(by_piece_.size());
  }

  /// The group's busy time in the pieces before p.
  int64_t running_(std::size_t group, std::size_t p) const {
    const auto& run = runs_[group];
    auto after = std::lower_bound(run.begin(), run.end(), p, [](const auto& e, std::size_t x) { return e.first < x; });
    return after == run.begin() ? 0 : std::prev(after)->second;
  }

  std::vector<int64_t> edges_;
  std::map<std::string, std::size_t> group_of_;   ///< name -> group (names_ points into its keys)
  std::vector<const std::string*> names_;
  std::vector<std::pair<std::size_t, int64_t>> by_piece_;  ///< (group, ns) of every piece, in piece order
  std::vector<std::size_t> by_piece_from_;                 ///< piece p's are by_piece_[from[p], from[p + 1])
  std::vector<std::vector<std::pair<std::size_t, int64_t>>> runs_;  ///< by group: (piece, running sum)
  std::vector<int64_t> sum_;          ///< by group: busy_over's sums (0 between calls)
  std::vector<std::size_t> touched_;  ///< the groups busy_over summed
};

/// Measures every unit given (of every kind at once) and hands each its busy time by group.
/// The units' edges cut the trace into pieces, measured once by one walk over the spans
/// (RangesSweep: the pieces rise in start and end), and a unit's busy time in a group is
/// its pieces' sum: busy time (spans clipped to the range, or their self time) adds up
/// exactly over adjacent ranges. Walking each unit's spans instead cost a span once for
/// every unit over it: the units of 20,000 kinds that each overlapped the others' spans
/// took 3.5 times as long as 10,000 (pooled diff, issue 66).
void measure_units(const Trace& trace, const SpanIndex& index, std::vector<PendingUnit> units, unsigned threads,
                   const std::function<void(const PendingUnit&, const std::vector<GroupBusy>&)>& take) {
  std::vector<int64_t> edges;
  edges.reserve(2 * units.size());
  for (const PendingUnit& u : units) {
    edges.push_back(u.range.lo);
    edges.push_back(std::max(u.range.lo, u.range.hi));
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  PieceBusy pieces(trace, index, std::move(edges), threads);
  std::vector<GroupBusy> busy;
  for (const PendingUnit& u : units) {
    auto [first, last] = pieces.pieces_of(u.range);
    pieces.busy_over(first, last, &busy);
    take(u, busy);
  }
}

/// Per-unit values with each unit's marker arg.
struct ArgValues {
  std::vector<int64_t> values, args;
};

/// The values of v above 0 with their units' args: the units in which a group or part has time.
ArgValues present(const std::vector<int64_t>& v, const std::vector<int64_t>& args) {
  ArgValues kept;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] > 0) {
      kept.values.push_back(v[i]);
      kept.args.push_back(i < args.size() ? args[i] : 0);
    }
  return kept;
}

/// A kind nested in a coarser one (layers in tokens) in every run, with an arg a unit: its
/// args may name the unit's place in the enclosing unit (layer 0..L-1 in every token), a
/// layer's type (attention, MoE, dense FFN) with it.
bool nested_with_args(const KindSamples& k) {
  return !k.rules.empty() && k.args.size() == k.dur_ns.size() &&
         std::all_of(k.rules.begin(), k.rules.end(), [&](const UnitRule& r) {
           return !r.nested_in.empty() && r.nested_in == k.rules.front().nested_in;
         });
}

/// B's values against A's, like with like (SPEC §2 "Strata"): with by_arg, when the args
/// repeat (at least two of them) and every arg has kMinStratumValues units of positive
/// value on each side, within strata of the args (van Elteren); else the plain test.
ShiftTest compare_by_arg(ArgValues a, ArgValues b, bool by_arg) {
  if (by_arg) {
    std::map<int64_t, Stratum> strata;
    for (std::size_t i = 0; i < a.values.size(); ++i)
      if (a.values[i] > 0) strata[a.args[i]].a.push_back(a.values[i]);
    for (std::size_t i = 0; i < b.values.size(); ++i)
      if (b.values[i] > 0) strata[b.args[i]].b.push_back(b.values[i]);
    bool like_with_like = strata.size() >= 2 && std::all_of(strata.begin(), strata.end(), [](const auto& s) {
      return s.second.a.size() >= kMinStratumValues && s.second.b.size() >= kMinStratumValues;
    });
    if (like_with_like) {
      std::vector<Stratum> by_stratum;
      for (auto& [arg, stratum] : strata) by_stratum.push_back(std::move(stratum));
      ShiftTest t = compare_strata(std::move(by_stratum));
      // Units of 0 us are no stratum's: counted as left out, as the plain test counts them.
      for (int64_t v : a.values) t.left_out_a += v <= 0;
      for (int64_t v : b.values) t.left_out_b += v <= 0;
      return t;
    }
  }
  return compare_samples(std::move(a.values), std::move(b.values));
}

/// Rows of the samples in `samples` of both sides with time in either, the most time first,
/// each over the units in which it has time (a unit without it is not a sample of its time:
/// a layer that runs no ffn chain would pull its shift toward 0); with share_rows, a row of
/// the share of units a label runs in after its own when the share moves by more than
/// kShareRowPoints; by_arg: the kind may be compared arg by arg (compare_by_arg).
void add_rows(const KindSamples& ka, const KindSamples& kb, bool ambiguous, bool by_arg,
              std::map<std::string, std::vector<int64_t>> KindSamples::*samples, bool share_rows,
              std::vector<ChangeRow>* rows) {
  auto of = [&](const KindSamples& k, const std::string& label) {
    auto it = (k.*samples).find(label);
    return it == (k.*samples).end() ? ArgValues() : present(it->second, k.args);
  };
  std::map<std::string, int64_t> busiest;
  for (const KindSamples* k : {&ka, &kb})
    for (const auto& [label, v] : k->*samples) busiest[label] += total(v);
  std::vector<std::pair<std::string, int64_t>> labels;
  for (const auto& [label, sum] : busiest)
    if (sum > 0) labels.emplace_back(label, sum);
  std::stable_sort(labels.begin(), labels.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  for (const auto& [label, sum] : labels) {
    ArgValues a = of(ka, label), b = of(kb, label);
    ProportionTest runs = compare_proportions(a.values.size(), ka.dur_ns.size(), b.values.size(), kb.dur_ns.size());
    rows->push_back({ka.kind, label, ChangeRow::Of::time, compare_by_arg(std::move(a), std::move(b), by_arg), runs, 1,
                     false, ambiguous});
    if (share_rows && std::fabs(runs.delta_pp) > kShareRowPoints)
      rows->push_back({ka.kind, units_row_label(label), ChangeRow::Of::units_share, {}, runs, 1, false, ambiguous});
  }
}

/// A share-of-units row's sample, as a key (its four counts) for holm_adjust_distinct (a
/// 64-bit hash: equal to a time row's digest only by a 2^-64 accident).
uint64_t share_key(const ProportionTest& t) {
  uint64_t key = 1469598103934665603ULL;
  for (std::size_t v : {t.hits_a, t.n_a, t.hits_b, t.n_b}) key = (key ^ v) * 1099511628211ULL;
  return key;
}

}  // namespace

std::string latency_row_label(const std::string& class_or_group) { return "latency: " + class_or_group; }
std::string units_row_label(const std::string& group) { return "with " + group; }

void add_unit_samples(const Trace& trace, const SpanIndex& index, const UnitRequest& unit_at, unsigned threads,
                      std::vector<KindSamples>* pooled, bool latency, const MeasurePolicy& policy) {
  // One pass sorts the instants by kind, and the pooled kinds are found by name: a trace
  // can have a kind an instant, and a pass (or a search of the pooled kinds) a kind would
  // make that quadratic.
  std::map<std::string, std::size_t> pooled_at;
  for (std::size_t i = 0; i < pooled->size(); ++i) pooled_at.emplace((*pooled)[i].kind, i);
  UnitPlanner planner(trace, unit_at);
  std::vector<std::string> kinds = marker_kinds(trace);
  LatencyByLane analyses(trace, index);
  std::vector<PendingUnit> pending;  // every kind's units, measured together below
  std::size_t min_units = policy.pooled && kinds.size() <= kMaxKindsForNesting ? 0 : kMinTestedValues;
  for_each_kind_markers(trace, kinds, [&](std::size_t kind_index, const Markers& markers) {
    if (markers.ts.empty()) return;  // a registered kind with no marker here
    const std::string& kind = kinds[kind_index];
    auto [at, added] = pooled_at.try_emplace(kind, pooled->size());
    if (added) pooled->push_back({kind, false, {}, {}, {}, {}, {}, 0});
    KindSamples& k = (*pooled)[at->second];
    KindUnits plan = planner.plan(kind, markers);
    k.ambiguous = k.ambiguous || plan.rule.ambiguous;
    k.rules.push_back(plan.rule);
    std::vector<Unit> units = cut_units(markers, plan);
    std::size_t first_unit = k.dur_ns.size();
    bool measured = units.size() >= min_units || policy.also.count(kind) > 0;
    for (const Unit& u : units) {
      if (measured) pending.push_back({at->second, k.dur_ns.size(), u.range});
      k.dur_ns.push_back(u.range.length());
      k.args.push_back(u.arg);
    }
    if (!measured) ++k.unmeasured_runs;
    const LatencyAnalysis* a = latency && measured ? analyses.of(latency_lane(markers)) : nullptr;
    if (a) add_latency_samples(*a, units, first_unit, &k);
    for (auto& [label, v] : k.latency_ns) v.resize(k.dur_ns.size(), 0);
  });
  for (KindSamples& k : *pooled)
    for (auto& [group, busy] : k.busy_ns) busy.resize(k.dur_ns.size(), 0);  // this run's units: 0 until measured
  measure_units(trace, index, std::move(pending), threads, [&](const PendingUnit& u, const std::vector<GroupBusy>& groups) {
    KindSamples& k = (*pooled)[u.kind];
    for (const auto& [name, ns] : groups) {
      std::vector<int64_t>& busy = k.busy_ns[*name];
      busy.resize(k.dur_ns.size(), 0);  // 0 in the units (of every run) that had none of it
      busy[u.unit] = ns;
    }
  });
}

void pool_unit_samples(std::vector<KindSamples> run, std::vector<KindSamples>* pooled) {
  if (pooled->empty()) {  // a side's first run: taken whole (a kind an instant: no regrowth)
    *pooled = std::move(run);
    return;
  }
  std::map<std::string, std::size_t> pooled_at;
  for (std::size_t i = 0; i < pooled->size(); ++i) pooled_at.emplace((*pooled)[i].kind, i);
  for (KindSamples& r : run) {
    auto [at, added] = pooled_at.try_emplace(r.kind, pooled->size());
    if (added) {
      pooled->push_back(std::move(r));
      continue;
    }
    KindSamples& k = (*pooled)[at->second];
    std::size_t before = k.dur_ns.size();
    k.dur_ns.insert(k.dur_ns.end(), r.dur_ns.begin(), r.dur_ns.end());
    k.args.insert(k.args.end(), r.args.begin(), r.args.end());
    // Each group's (and part's) values line up with dur_ns: 0 in the units of a run without it.
    for (auto samples : {&KindSamples::busy_ns, &KindSamples::latency_ns}) {
      for (auto& [label, v] : r.*samples) {
        std::vector<int64_t>& into = (k.*samples)[label];
        into.resize(before, 0);
        into.insert(into.end(), v.begin(), v.end());
      }
      for (auto& [label, v] : k.*samples) v.resize(k.dur_ns.size(), 0);
    }
    k.ambiguous = k.ambiguous || r.ambiguous;
    k.rules.insert(k.rules.end(), r.rules.begin(), r.rules.end());
    k.unmeasured_runs += r.unmeasured_runs;
  }
}

bool can_test(const KindSamples& a, const KindSamples& b) {
  return a.dur_ns.size() >= kMinTestedValues && b.dur_ns.size() >= kMinTestedValues;
}

std::vector<UntestedKind> untested_kinds(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b) {
  std::vector<UntestedKind> untested;
  for_each_common_kind(a, b, [&](const KindSamples& ka, const KindSamples& kb) {
    if (!can_test(ka, kb)) untested.push_back({ka.kind, ka.dur_ns.size(), kb.dur_ns.size()});
  });
  return untested;
}

std::vector<ChangeRow> unit_changes(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b, double alpha) {
  std::vector<ChangeRow> rows;
  for_each_common_kind(a, b, [&](const KindSamples& ka, const KindSamples& kb) {
    if (!can_test(ka, kb)) return;
    bool ambiguous = ka.ambiguous || kb.ambiguous;
    std::size_t units_a = ka.dur_ns.size(), units_b = kb.dur_ns.size();
    bool by_arg = nested_with_args(ka) && nested_with_args(kb);
    rows.push_back({ka.kind, kUnitRow, ChangeRow::Of::durations,
                    compare_by_arg({ka.dur_ns, ka.args}, {kb.dur_ns, kb.args}, by_arg),
                    compare_proportions(units_a, units_a, units_b, units_b), 1, false, ambiguous});
    if (ka.unmeasured_runs + kb.unmeasured_runs > 0) return;  // no busy time to compare (diff reads such runs again)
    // Groups with busy time in some unit of either side, the busiest (both sides) first.
    add_rows(ka, kb, ambiguous, by_arg, &KindSamples::busy_ns, true, &rows);
    add_rows(ka, kb, ambiguous, by_arg, &KindSamples::latency_ns, false, &rows);
  });
  // Holm's family is the rows that are tests: too few units and units cut by a guess are
  // never significant, and counted in m they only raised every other row's p_adj. Rows of
  // identical samples (classifier per token and per layer, a token holding one classifier
  // layer) are one test.
  auto in_family = [](const ChangeRow& r) { return r.tested() && !r.ambiguous; };
  std::vector<double> p;
  std::vector<uint64_t> keys;
  for (const ChangeRow& r : rows) {
    if (!in_family(r)) continue;
    p.push_back(r.p());
    keys.push_back(r.of == ChangeRow::Of::units_share ? share_key(r.runs) : r.test.digest);
  }
  std::vector<double> adjusted = holm_adjust_distinct(p, keys);
  std::size_t next = 0;
  for (ChangeRow& r : rows) {
    if (!in_family(r)) continue;
    r.p_adj = adjusted[next++];
    r.significant = r.p_adj < alpha;
  }
  return rows;
}

}  // namespace jqtrace
