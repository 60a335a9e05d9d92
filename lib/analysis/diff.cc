#include "diff.h"

#include <string_view>
#include <unordered_map>

namespace jqtrace {
namespace {

/// Where each name is in a list: every lookup of a diff is O(1), so a diff of traces with
/// 100,000 names (or marker kinds) is linear, not quadratic (107 s before, issue 52).
template <typename T, typename Name>
std::unordered_map<std::string_view, const T*> by_name(const std::vector<T>& items, Name name) {
  std::unordered_map<std::string_view, const T*> map;
  map.reserve(items.size());
  for (const T& x : items) map.emplace(name(x), &x);  // the first of a name, as a scan finds it
  return map;
}

template <typename T>
const T* find(const std::unordered_map<std::string_view, const T*>& map, const std::string& name) {
  auto it = map.find(name);
  return it == map.end() ? nullptr : it->second;
}

GroupSide side_of(const GroupStats* g) {
  if (!g) return {};
  return {true, g->guessed, g->busy_ns, g->share_pct, g->events};
}

KindSide side_of(const KindSummary* k) {
  if (!k) return {};
  return {true, k->count, k->unit.p50};
}

/// Names of A, then those only B has, each once.
template <typename T, typename Name>
std::vector<std::string> union_of(const std::vector<T>& a, const std::vector<T>& b, Name name) {
  std::vector<std::string> names;
  std::unordered_map<std::string_view, bool> seen;
  seen.reserve(a.size() + b.size());
  for (const auto* side : {&a, &b})
    for (const T& x : *side)
      if (seen.emplace(name(x), true).second) names.push_back(name(x));
  return names;
}

}  // namespace

TraceDiff diff_stats(const RangeStats& a, const RangeStats& b, const std::vector<KindSummary>& kinds_a,
                     const std::vector<KindSummary>& kinds_b) {
  TraceDiff d;
  auto group_name = [](const GroupStats& g) -> const std::string& { return g.name; };
  auto groups_a = by_name(a.groups, group_name), groups_b = by_name(b.groups, group_name);
  for (const std::string& name : union_of(a.groups, b.groups, group_name)) {
    GroupDiff g;
    g.name = name;
    g.a = side_of(find(groups_a, name));
    g.b = side_of(find(groups_b, name));
    g.share_delta_pp = g.b.share_pct - g.a.share_pct;
    g.has_ratio = g.a.busy_ns > 0;
    if (g.has_ratio) g.busy_ratio = static_cast<double>(g.b.busy_ns) / static_cast<double>(g.a.busy_ns);
    d.groups.push_back(std::move(g));
  }
  auto kind_name = [](const KindSummary& k) -> const std::string& { return k.kind; };
  auto kinds_by_a = by_name(kinds_a, kind_name), kinds_by_b = by_name(kinds_b, kind_name);
  for (const std::string& kind : union_of(kinds_a, kinds_b, kind_name))
    d.kinds.push_back({kind, side_of(find(kinds_by_a, kind)), side_of(find(kinds_by_b, kind))});
  return d;
}

}  // namespace jqtrace
