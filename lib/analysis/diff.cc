#include "diff.h"

namespace jqtrace {
namespace {

GroupSide side_of(const RangeStats& s, const std::string& name) {
  for (const GroupStats& g : s.groups)
    if (g.name == name) return {true, g.guessed, g.busy_ns, g.share_pct, g.events};
  return {};
}

KindSide side_of(const std::vector<KindSummary>& kinds, const std::string& kind) {
  for (const KindSummary& k : kinds)
    if (k.kind == kind) return {true, k.count, k.unit.p50};
  return {};
}

/// Names of A, then those only B has.
template <typename T, typename Name>
std::vector<std::string> union_of(const std::vector<T>& a, const std::vector<T>& b, Name name) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    for (const std::string& have : names)
      if (have == n) return;
    names.push_back(n);
  };
  for (const T& x : a) add(name(x));
  for (const T& x : b) add(name(x));
  return names;
}

}  // namespace

TraceDiff diff_stats(const RangeStats& a, const RangeStats& b, const std::vector<KindSummary>& kinds_a,
                     const std::vector<KindSummary>& kinds_b) {
  TraceDiff d;
  for (const std::string& name : union_of(a.groups, b.groups, [](const GroupStats& g) { return g.name; })) {
    GroupDiff g;
    g.name = name;
    g.a = side_of(a, name);
    g.b = side_of(b, name);
    g.share_delta_pp = g.b.share_pct - g.a.share_pct;
    g.has_ratio = g.a.busy_ns > 0;
    if (g.has_ratio) g.busy_ratio = static_cast<double>(g.b.busy_ns) / static_cast<double>(g.a.busy_ns);
    d.groups.push_back(std::move(g));
  }
  for (const std::string& kind : union_of(kinds_a, kinds_b, [](const KindSummary& k) { return k.kind; }))
    d.kinds.push_back({kind, side_of(kinds_a, kind), side_of(kinds_b, kind)});
  return d;
}

}  // namespace jqtrace
