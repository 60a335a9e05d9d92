#include "unit_changes.h"

#include <algorithm>

#include "markers.h"

namespace jqtrace {
namespace {

KindSamples& samples_of(std::vector<KindSamples>* pooled, const std::string& kind) {
  for (KindSamples& k : *pooled)
    if (k.kind == kind) return k;
  pooled->push_back({});
  pooled->back().kind = kind;
  return pooled->back();
}

const KindSamples* find_kind(const std::vector<KindSamples>& side, const std::string& kind) {
  for (const KindSamples& k : side)
    if (k.kind == kind) return &k;
  return nullptr;
}

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

void add_unit_samples(const Trace& trace, const SpanIndex& index, UnitAtRequest unit_at, unsigned threads,
                      std::vector<KindSamples>* pooled) {
  std::vector<std::string> kinds = marker_kinds(trace);
  for (const std::string& kind : kinds) {
    UnitRule rule = unit_rule(trace, kind, unit_at);
    KindSamples& k = samples_of(pooled, kind);
    k.ambiguous = k.ambiguous || rule.ambiguous;
    std::size_t first = k.dur_ns.size();
    for_each_unit_row(trace, index, kind, rule.at, threads, [&](const UnitRow& row) {
      std::size_t unit = k.dur_ns.size();
      k.dur_ns.push_back(row.unit.range.length());
      for (const GroupStats& g : row.stats.groups) {
        if (g.busy_ns == 0) continue;
        std::vector<int64_t>& busy = k.busy_ns[g.name];
        busy.resize(unit + 1, 0);  // 0 in the units (of every run) that had none of it
        busy[unit] = g.busy_ns;
      }
    });
    for (auto& [group, busy] : k.busy_ns) busy.resize(k.dur_ns.size(), 0);
    if (k.dur_ns.size() == first && k.busy_ns.empty() && first == 0) pooled->pop_back();  // a kind with no units here
  }
}

std::vector<ChangeRow> unit_changes(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b, double alpha) {
  std::vector<ChangeRow> rows;
  for (const KindSamples& ka : a) {
    const KindSamples* kb = find_kind(b, ka.kind);
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
