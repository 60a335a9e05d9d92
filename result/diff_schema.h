#pragma once
// The "jqtrace/diff/1" schema: two traces' range stats side by side.
#include <string>

#include "common_fields.h"
#include "diff.h"
#include "model.h"
#include "scope.h"
#include "stats.h"

namespace jqtrace::result {

/// One side of a diff as the command analysed it.
struct DiffSide {
  std::string file;  ///< as shown
  Scope scope;
  const RangeStats* stats = nullptr;
  TraceFacts facts;  ///< attribution, truncation, lanes that stopped early
};

Document diff_document(const DiffSide& a, const DiffSide& b, const TraceDiff& d, QuantileMethod quantiles);

}  // namespace jqtrace::result
