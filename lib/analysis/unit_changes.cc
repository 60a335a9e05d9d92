#include "unit_changes.h"

#include <algorithm>

#include "markers.h"

namespace jqtrace {
namespace {

/// A group's per-unit busy time on a side: its vector, or every unit at 0.
std::vector<int64_t> busy_of(const KindSamples& k, const std::string& group) {
  auto it = k.busy_ns.find(group);
  return it == k.busy_ns.end() ? std::vector<int64_t>(k.dur_ns.size(), 0) : it->second;
}

int64_t total(const std::vector<int64_t>& v) {
  int64_t sum = 0;
  for (int64_t x : v) sum = __builtin_add_overflow(sum, x, &sum) ? INT64_MAX : sum;
  return sum;
}

}  // namespace

void add_unit_samples(const Trace& trace, const SpanIndex& index, const UnitRequest& unit_at, unsigned threads,
                      std::vector<KindSamples>* pooled) {
  // One pass sorts the instants by kind, and the pooled kinds are found by name: a trace
  // can have a kind an instant, and a pass (or a search of the pooled kinds) a kind would
  // make that quadratic.
  std::map<std::string, std::size_t> pooled_at;
  for (std::size_t i = 0; i < pooled->size(); ++i) pooled_at.emplace((*pooled)[i].kind, i);
  UnitPlanner planner(trace, unit_at);
  std::vector<std::string> kinds = marker_kinds(trace);
  for_each_kind_markers(trace, kinds, [&](std::size_t kind_index, const Markers& markers) {
    if (markers.ts.empty()) return;  // a registered kind with no marker here
    const std::string& kind = kinds[kind_index];
    auto [at, added] = pooled_at.try_emplace(kind, pooled->size());
    if (added) pooled->push_back({kind, false, {}, {}});
    KindSamples& k = (*pooled)[at->second];
    KindUnits plan = planner.plan(kind, markers);
    k.ambiguous = k.ambiguous || plan.rule.ambiguous;
    // A block of units at a time, as for_each_unit_row measures them: a unit's stats are
    // ~300 bytes a category, and a kind can have tens of thousands of units.
    std::vector<Unit> units = cut_units(markers, plan);
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
  });
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
    rows.push_back({ka.kind, kUnitRow, compare_samples(ka.dur_ns, kb->dur_ns), 1, false, ambiguous});
    // Groups with busy time in some unit of either side, the busiest (both sides) first.
    std::map<std::string, int64_t> busiest;
    for (const KindSamples* k : {&ka, kb})
      for (const auto& [group, busy] : k->busy_ns) busiest[group] += total(busy);
    std::vector<std::pair<std::string, int64_t>> groups;
    for (const auto& [group, busy] : busiest)
      if (busy > 0) groups.emplace_back(group, busy);
    std::stable_sort(groups.begin(), groups.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    for (const auto& [group, busy] : groups)
      rows.push_back({ka.kind, group, compare_samples(busy_of(ka, group), busy_of(*kb, group)), 1, false, ambiguous});
  }
  std::vector<double> p;
  for (const ChangeRow& r : rows)
    if (r.test.tested) p.push_back(r.test.p);
  std::vector<double> adjusted = holm_adjust(p);
  std::size_t next = 0;
  for (ChangeRow& r : rows) {
    if (!r.test.tested) continue;
    r.p_adj = adjusted[next++];
    r.significant = r.p_adj < alpha && !r.ambiguous;
  }
  return rows;
}

}  // namespace jqtrace
