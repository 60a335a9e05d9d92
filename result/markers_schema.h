#pragma once
// The "jqtrace/markers/1" schema: every marker kind with its units' durations, and with
// --kind K one row per unit of K with its range stats and each category's share.
#include <string>
#include <vector>

#include "gate.h"
#include "markers.h"
#include "model.h"

namespace jqtrace::result {

struct MarkersContext {
  std::string file;  ///< as shown
  QuantileMethod quantiles = QuantileMethod::inclusive;
  std::string kind;  ///< --kind; empty: the kinds only
  /// The order of the per-category share columns: the trace's categories (profile id
  /// order, then the legacy ones); empty for generic traces (then by name), so a
  /// spreadsheet's columns do not move from trace to trace.
  std::vector<std::string> categories;
  const std::vector<GateResult>* gates = nullptr;
};

Document markers_document(const std::vector<KindSummary>& kinds, const std::vector<UnitRow>& units,
                          const MarkersContext& context);

}  // namespace jqtrace::result
