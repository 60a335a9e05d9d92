#pragma once
// --marker KIND N[..M], --ms LO HI, --us LO HI: the scope options of stats, markers, gaps
// and window (SPEC §3), parsed into a ScopeRequest and resolved against a trace.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "scope.h"
#include "trace.h"

namespace jqtrace::cli {

struct ScopeOptions {
  std::vector<std::string> marker;  ///< KIND, N[..M]
  std::vector<std::string> ms;      ///< LO, HI
  std::vector<std::string> us;      ///< LO, HI
};

void add_scope_options(CLI::App& cmd, ScopeOptions& opts);

/// The range the options ask for; false after printing a usage error (exit 2).
bool resolve_scope_options(const ScopeOptions& opts, const Trace& trace, Range* range);

}  // namespace jqtrace::cli
