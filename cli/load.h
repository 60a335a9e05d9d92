#pragma once
// The first steps every analysis command shares: open the input, build the trace model,
// and say on stderr what was lost on the way (a cut-off file, malformed events).
#include <string>

#include "common.h"
#include "trace.h"

namespace jqtrace::cli {

/// Loads path into *trace. Returns kOk, or kInput after printing why (with file:line:col).
int load_for_analysis(const std::string& path, const CommonOptions& opts, Trace* trace,
                      const LoadOptions& load = {}, const std::string& shown_as = {});

/// A trace model that lives until the process ends and is never freed: a model is
/// hundreds of MB in many columns, giving it back piece by piece took 15 ms after the
/// output was written (2% of stats -j 2 on the bench trace), and the kernel takes the
/// pages back at once when the command returns and the process exits.
Trace& trace_for_process();

/// How the input is named in messages and outputs ("<stdin>" for "-").
std::string display_name(const std::string& path);

/// "FILE: truncated at byte N" (and that a gzip stream ended early): where a read was cut.
std::string truncation_text(const std::string& path, const ReadResult& read);

}  // namespace jqtrace::cli
