#include "gate_metrics.h"

#include <cmath>

namespace jqtrace {
namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

MetricSet stats_metrics(const RangeStats& s, const std::vector<KindSummary>& kinds) {
  MetricSet m;
  m.set("idle", s.idle_pct);
  m.set("parallelism", s.parallelism);
  m.set("publishes", static_cast<double>(s.publishes));
  m.set("events", static_cast<double>(s.events));
  m.set("busy", us(s.busy_ns));
  m.set("wait", us(s.wait_ns));
  for (const char* metric : {"share", "busy", "events", "p50", "p90", "p95", "p99", "max"}) m.declare(metric, "group");
  for (const GroupStats& g : s.groups) {
    m.set("share", g.name, g.share_pct);
    m.set("busy", g.name, us(g.busy_ns));
    m.set("events", g.name, static_cast<double>(g.events));
    m.set("p50", g.name, g.dur.p50 / 1000.0);
    m.set("p90", g.name, g.dur.p90 / 1000.0);
    m.set("p95", g.name, g.dur.p95 / 1000.0);
    m.set("p99", g.name, g.dur.p99 / 1000.0);
    m.set("max", g.name, g.dur.max / 1000.0);
  }
  for (const char* metric : {"unit_p50", "unit_p90", "unit_p95", "unit_max", "units"}) m.declare(metric, "marker kind");
  for (const KindSummary& k : kinds) {
    m.set("unit_p50", k.kind, k.unit.p50 / 1000.0);
    m.set("unit_p90", k.kind, k.unit.p90 / 1000.0);
    m.set("unit_p95", k.kind, k.unit.p95 / 1000.0);
    m.set("unit_max", k.kind, k.unit.max / 1000.0);
    m.set("units", k.kind, static_cast<double>(k.count));
    if (k.rule.ambiguous)  // the units' count stands whatever the rule; their lengths do not
      for (const char* metric : {"unit_p50", "unit_p90", "unit_p95", "unit_max"})
        m.withhold(metric, k.kind, ambiguous_units_text(k.kind, k.rule));
  }
  return m;
}

BaselineShares baseline_shares(const RangeStats& stats) {
  BaselineShares b;
  b.by = group_by_name(stats.by);
  for (const GroupStats& g : stats.groups) b.groups.push_back({g.name, g.share_pct});
  return b;
}

std::vector<ShareDelta> compare_shares(const RangeStats& now, const BaselineShares& baseline, double max_delta_pp) {
  return compare_shares(baseline_shares(now).groups, baseline, max_delta_pp);
}

std::vector<ShareDelta> compare_shares(const std::vector<GroupShare>& now, const BaselineShares& baseline,
                                       double max_delta_pp) {
  std::vector<ShareDelta> out;
  auto in_baseline = [&](const std::string& name) -> const GroupShare* {
    for (const GroupShare& g : baseline.groups)
      if (g.name == name) return &g;
    return nullptr;
  };
  for (const GroupShare& g : now) {
    const GroupShare* b = in_baseline(g.name);
    out.push_back({g.name, g.share_pct, b ? b->share_pct : 0.0, 0, false});
  }
  for (const GroupShare& b : baseline.groups) {
    bool seen = false;
    for (const GroupShare& g : now) seen = seen || g.name == b.name;
    if (!seen) out.push_back({b.name, 0.0, b.share_pct, 0, false});
  }
  for (ShareDelta& d : out) {
    d.delta_pp = d.share_pct - d.baseline_share_pct;
    d.tripped = std::fabs(d.delta_pp) > max_delta_pp;
  }
  return out;
}

}  // namespace jqtrace
