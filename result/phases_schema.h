#pragma once
// The "jqtrace/phases/1" schema: per tag, its bursts and rounds, and per phase its total,
// share and per-round distribution (ms).
#include <vector>

#include "gate.h"
#include "model.h"
#include "phases.h"

namespace jqtrace::result {

Document phases_document(const std::vector<TagStats>& tags, QuantileMethod quantiles,
                         const std::vector<GateResult>* gates);

}  // namespace jqtrace::result
