#pragma once
// The "jqtrace/diff/1" schema: two traces' range stats side by side.
#include <string>

#include "common_fields.h"
#include "diff.h"
#include "model.h"
#include "scope.h"
#include "stats.h"
#include "unit_changes.h"

namespace jqtrace::result {

/// One side of a diff as the command analysed it.
struct DiffSide {
  std::vector<std::string> runs;  ///< its traces, as shown (the first gives the side-by-side tables)
  Scope scope;
  const RangeStats* stats = nullptr;
  TraceFacts facts;  ///< attribution, truncation, lanes that stopped early
};

struct DiffContext {
  double alpha = 0.05;
  QuantileMethod quantiles = QuantileMethod::inclusive;
  const std::vector<GateResult>* gates = nullptr;  ///< when gates were checked
};

/// changes: unit_changes() of the two sides' pooled runs (the "changes" table: `~` for
/// people where a change is not significant, as benchstat prints it).
Document diff_document(const DiffSide& a, const DiffSide& b, const TraceDiff& d, const std::vector<ChangeRow>& changes,
                       const DiffContext& context);

}  // namespace jqtrace::result
