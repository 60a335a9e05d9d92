#pragma once
// The "jqtrace/gaps/1" schema: chain classes and their stages, the tail of each stage,
// publishes, and each lane's idle gaps. gaps' distributions are µs (or plain numbers)
// already.
#include <string>

#include "gaps.h"
#include "model.h"
#include "scope.h"

namespace jqtrace::result {

Document gaps_document(const GapsReport& g, const std::string& file, const Scope& scope, QuantileMethod quantiles);

}  // namespace jqtrace::result
