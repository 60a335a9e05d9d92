#pragma once
// The "jqtrace/stats/1" schema: the stats document (every format of `stats` renders it)
// and the reader of a saved `stats --format json` used as a baseline, side by side so the
// two cannot disagree on a key.
#include <string>
#include <string_view>
#include <vector>

#include "gate.h"
#include "gate_metrics.h"
#include "model.h"
#include "quantile.h"
#include "scope.h"
#include "stats.h"

namespace jqtrace::result {

inline constexpr std::string_view kStatsSchema = "jqtrace/stats/1";

/// What stats says besides the numbers: where they come from and what was checked.
struct StatsContext {
  std::string file;                               ///< as shown ("<stdin>" for -)
  Scope scope;
  QuantileMethod quantiles = QuantileMethod::inclusive;
  bool hist = false;                              ///< --hist: CSV/TSV write the histograms
  const std::vector<GateResult>* gates = nullptr; ///< when gates were checked
  const Trace* trace = nullptr;                   ///< the lanes of lanes_detail (their labels and names)
  const std::vector<ShareDelta>* baseline = nullptr;
  std::string baseline_file;
  double max_share_delta_pp = 0;
};

/// The document reads s.lanes_detail and context.trace as it is written (a row a lane is
/// made then): both must outlive it.
Document stats_document(const RangeStats& s, const StatsContext& context);

/// True when text starts like a saved `stats --format json` (its schema is the first key).
bool looks_like_stats_json(std::string_view head);
/// Reads a saved `stats --format json`; false with a reason when it is not one.
bool read_stats_json(std::string_view text, BaselineShares* out, std::string* error);

}  // namespace jqtrace::result
