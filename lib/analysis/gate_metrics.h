#pragma once
// What gates on `stats` and `markers` can name, and the share comparison against a
// baseline (a trace, or a saved `stats --format json`).
//
// Metrics (µs for times, percent for shares and idle):
//   share(G) busy(G) events(G) p50(G) p90(G) p95(G) p99(G) max(G)   G: a group of the --by grouping
//   idle parallelism publishes events busy wait
//   unit_p50(K) unit_p90(K) unit_p95(K) unit_max(K) units(K)              K: a marker kind
#include <string>
#include <string_view>
#include <vector>

#include "gate.h"
#include "markers.h"
#include "stats.h"

namespace jqtrace {

MetricSet stats_metrics(const RangeStats& stats, const std::vector<KindSummary>& kinds);

/// A group's share in a baseline.
struct GroupShare {
  std::string name;
  double share_pct = 0;
};

/// The shares a baseline gives, and the grouping they were computed with.
struct BaselineShares {
  std::string by;  ///< "category", "cat", "name", "lane" or "kind"
  std::string scope;  ///< Scope::label; empty in a saved JSON from before scopes were recorded
  std::vector<GroupShare> groups;
};

BaselineShares baseline_shares(const RangeStats& stats);

struct ShareDelta {
  std::string name;
  double share_pct = 0;           ///< now (0 when the group is gone)
  double baseline_share_pct = 0;  ///< in the baseline (0 when the group is new)
  double delta_pp = 0;            ///< now - baseline, percentage points
  bool tripped = false;           ///< |delta| > the limit
};

/// Every group of either side (now's order, then groups only the baseline has).
std::vector<ShareDelta> compare_shares(const RangeStats& now, const BaselineShares& baseline, double max_delta_pp);
/// The same for shares of any kind (latency's classes and groups).
std::vector<ShareDelta> compare_shares(const std::vector<GroupShare>& now, const BaselineShares& baseline,
                                       double max_delta_pp);

}  // namespace jqtrace
