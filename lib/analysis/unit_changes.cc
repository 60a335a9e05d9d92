#include "unit_changes.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "latency.h"
#include "markers.h"

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

/// The values of v above 0: the units in which a group or part has time.
std::vector<int64_t> nonzero(const std::vector<int64_t>& v) {
  std::vector<int64_t> kept;
  std::copy_if(v.begin(), v.end(), std::back_inserter(kept), [](int64_t x) { return x > 0; });
  return kept;
}

/// Rows of the samples in `samples` of both sides with time in either, the most time first,
/// each over the units in which it has time (a unit without it is not a sample of its time:
/// a layer that runs no ffn chain would pull its shift toward 0); with share_rows, a row of
/// the share of units a label runs in after its own when the share moves by more than
/// kShareRowPoints.
void add_rows(const KindSamples& ka, const KindSamples& kb, bool ambiguous,
              std::map<std::string, std::vector<int64_t>> KindSamples::*samples, bool share_rows,
              std::vector<ChangeRow>* rows) {
  auto of = [&](const KindSamples& k, const std::string& label) {
    auto it = (k.*samples).find(label);
    return it == (k.*samples).end() ? std::vector<int64_t>() : nonzero(it->second);
  };
  std::map<std::string, int64_t> busiest;
  for (const KindSamples* k : {&ka, &kb})
    for (const auto& [label, v] : k->*samples) busiest[label] += total(v);
  std::vector<std::pair<std::string, int64_t>> labels;
  for (const auto& [label, sum] : busiest)
    if (sum > 0) labels.emplace_back(label, sum);
  std::stable_sort(labels.begin(), labels.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  for (const auto& [label, sum] : labels) {
    std::vector<int64_t> a = of(ka, label), b = of(kb, label);
    ProportionTest runs = compare_proportions(a.size(), ka.dur_ns.size(), b.size(), kb.dur_ns.size());
    rows->push_back({ka.kind, label, ChangeRow::Of::time, compare_samples(std::move(a), std::move(b)), runs, 1, false,
                     ambiguous});
    if (share_rows && std::fabs(runs.delta_pp) > kShareRowPoints)
      rows->push_back({ka.kind, units_row_label(label), ChangeRow::Of::units_share, {}, runs, 1, false, ambiguous});
  }
}

}  // namespace

std::string latency_row_label(const std::string& class_or_group) { return "latency: " + class_or_group; }
std::string units_row_label(const std::string& group) { return "with " + group; }

void add_unit_samples(const Trace& trace, const SpanIndex& index, const UnitRequest& unit_at, unsigned threads,
                      std::vector<KindSamples>* pooled, bool latency) {
  // One pass sorts the instants by kind, and the pooled kinds are found by name: a trace
  // can have a kind an instant, and a pass (or a search of the pooled kinds) a kind would
  // make that quadratic.
  std::map<std::string, std::size_t> pooled_at;
  for (std::size_t i = 0; i < pooled->size(); ++i) pooled_at.emplace((*pooled)[i].kind, i);
  UnitPlanner planner(trace, unit_at);
  std::vector<std::string> kinds = marker_kinds(trace);
  LatencyByLane analyses(trace, index);
  for_each_kind_markers(trace, kinds, [&](std::size_t kind_index, const Markers& markers) {
    if (markers.ts.empty()) return;  // a registered kind with no marker here
    const std::string& kind = kinds[kind_index];
    auto [at, added] = pooled_at.try_emplace(kind, pooled->size());
    if (added) pooled->push_back({kind, false, {}, {}, {}, {}});
    KindSamples& k = (*pooled)[at->second];
    KindUnits plan = planner.plan(kind, markers);
    k.ambiguous = k.ambiguous || plan.rule.ambiguous;
    k.rules.push_back(plan.rule);
    // A block of units at a time, as for_each_unit_row measures them: a unit's stats are
    // ~300 bytes a category, and a kind can have tens of thousands of units.
    std::vector<Unit> units = cut_units(markers, plan);
    std::size_t first_unit = k.dur_ns.size();
    constexpr std::size_t kBlock = 1024;
    for (std::size_t from = 0; from < units.size(); from += kBlock) {
      auto first = units.begin() + static_cast<std::ptrdiff_t>(from);
      std::vector<Unit> block(first, first + static_cast<std::ptrdiff_t>(std::min(kBlock, units.size() - from)));
      for (const UnitRow& row : unit_rows_of(trace, index, std::move(block), threads)) {
        std::size_t unit = k.dur_ns.size();
        k.dur_ns.push_back(row.unit.range.length());
        for (const GroupStats& g : row.stats.groups) {
          if (g.busy_ns == 0) continue;
          std::vector<int64_t>& busy = k.busy_ns[g.name];
          busy.resize(unit + 1, 0);  // 0 in the units (of every run) that had none of it
          busy[unit] = g.busy_ns;
        }
      }
    }
    for (auto& [group, busy] : k.busy_ns) busy.resize(k.dur_ns.size(), 0);
    if (const LatencyAnalysis* a = latency ? analyses.of(latency_lane(markers)) : nullptr)
      add_latency_samples(*a, units, first_unit, &k);
    for (auto& [label, v] : k.latency_ns) v.resize(k.dur_ns.size(), 0);
  });
}

void pool_unit_samples(std::vector<KindSamples> run, std::vector<KindSamples>* pooled) {
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
  }
}

std::vector<ChangeRow> unit_changes(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b, double alpha) {
  std::vector<ChangeRow> rows;
  std::map<std::string, const KindSamples*> b_kinds;  // by name: one lookup a kind of A
  for (const KindSamples& k : b) b_kinds.emplace(k.kind, &k);
  for (const KindSamples& ka : a) {
    auto found = b_kinds.find(ka.kind);
    const KindSamples* kb = found == b_kinds.end() ? nullptr : found->second;
    if (!kb || ka.dur_ns.empty() || kb->dur_ns.empty()) continue;
    bool ambiguous = ka.ambiguous || kb->ambiguous;
    std::size_t units_a = ka.dur_ns.size(), units_b = kb->dur_ns.size();
    rows.push_back({ka.kind, kUnitRow, ChangeRow::Of::durations, compare_samples(ka.dur_ns, kb->dur_ns),
                    compare_proportions(units_a, units_a, units_b, units_b), 1, false, ambiguous});
    // Groups with busy time in some unit of either side, the busiest (both sides) first.
    add_rows(ka, *kb, ambiguous, &KindSamples::busy_ns, true, &rows);
    add_rows(ka, *kb, ambiguous, &KindSamples::latency_ns, false, &rows);
  }
  // Holm's family is the rows that are tests: too few units and units cut by a guess are
  // never significant, and counted in m they only raised every other row's p_adj.
  auto in_family = [](const ChangeRow& r) { return r.tested() && !r.ambiguous; };
  std::vector<double> p;
  for (const ChangeRow& r : rows)
    if (in_family(r)) p.push_back(r.p());
  std::vector<double> adjusted = holm_adjust(p);
  std::size_t next = 0;
  for (ChangeRow& r : rows) {
    if (!in_family(r)) continue;
    r.p_adj = adjusted[next++];
    r.significant = r.p_adj < alpha;
  }
  return rows;
}

}  // namespace jqtrace
