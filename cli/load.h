#pragma once
// The first steps every analysis command shares: open the input, build the trace model,
// and say on stderr what was lost on the way (a cut-off file, malformed events).
#include <string>

#include "common.h"
#include "trace.h"

namespace jqtrace::cli {

/// Loads path into *trace. Returns kOk, or kInput after printing why (with file:line:col).
int load_for_analysis(const std::string& path, const CommonOptions& opts, Trace* trace,
                      const LoadOptions& load = {});

/// How the input is named in messages and outputs ("<stdin>" for "-").
std::string display_name(const std::string& path);

}  // namespace jqtrace::cli
