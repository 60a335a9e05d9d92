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

/// How one marker kind's units were cut for the changes table, on each side (the rule of
/// each side's first run holding the kind; one rule when the sides agree).
struct KindRules {
  std::string kind;
  UnitRule a, b;
  bool joint = false;      ///< auto decided on the evidence of both sides' runs together
  std::size_t recut = 0;   ///< runs read again to cut their units by the joint rule
};

struct DiffContext {
  double alpha = 0.05;
  std::vector<KindRules> rules;  ///< a kind both sides have
  /// The kinds both sides have with too few units a side for rows: the first few ("token
  /// 3 and 3, step 1 and 1, 2 more kinds") and how many.
  std::string untested;
  std::size_t untested_count = 0;
  QuantileMethod quantiles = QuantileMethod::inclusive;
  const std::vector<GateResult>* gates = nullptr;  ///< when gates were checked
};

/// changes: unit_changes() of the two sides' pooled runs (the "changes" table: `~` for
/// people where a change is not significant, as benchstat prints it).
Document diff_document(const DiffSide& a, const DiffSide& b, const TraceDiff& d, const std::vector<ChangeRow>& changes,
                       const DiffContext& context);

}  // namespace jqtrace::result
