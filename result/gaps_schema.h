#pragma once
// The "jqtrace/gaps/1" schema: chain classes and their stages, the tail of each stage,
// publishes, and each lane's idle gaps. gaps' distributions are µs (or plain numbers)
// already.
#include <string>

#include "gaps.h"
#include "common_fields.h"
#include "model.h"
#include "scope.h"

namespace jqtrace::result {

/// facts: the trace's (trace_facts), its attribution gaps' own (gaps names chains itself).
Document gaps_document(const GapsReport& g, const std::string& file, const Scope& scope, QuantileMethod quantiles,
                       const TraceFacts& facts);

}  // namespace jqtrace::result
