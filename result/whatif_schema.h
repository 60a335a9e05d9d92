#pragma once
// The "jqtrace/whatif/1" schema: the trace's length and each marker kind's unit durations,
// measured and predicted by the replay (SPEC §2 "What-if"), with the replay's own error.
#include <string>
#include <vector>

#include "common_fields.h"
#include "model.h"
#include "whatif.h"

namespace jqtrace::result {

struct WhatIfContext {
  std::string file;
  std::string scope = "whole trace";  ///< the scope's label
  std::string changes;   ///< what was changed, as people read it ("ffn chain x0.5")
  double work_cap = 3;
  std::string per_unit;  ///< --per-unit KIND: a row per unit of it ("" none)
  TraceFacts facts;
  /// With per_unit: each unit's work and span, and the lanes the trace ran on (P).
  const std::vector<WorkSpan>* work_span = nullptr;
  std::size_t lanes = 0;
};

Document whatif_document(const WhatIfResult& r, const WhatIfContext& c);
/// --rank: a row per (group, speedup), largest saving first.
Document whatif_rank_document(const WhatIfRank& rank, const ReplayAnomalies& anomalies, const WhatIfContext& c);

}  // namespace jqtrace::result
