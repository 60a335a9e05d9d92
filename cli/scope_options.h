#pragma once
// --marker KIND N[..M], --unit-at start|end|auto, --ms LO HI, --us LO HI: the scope options
// of stats, markers, gaps, diff and window (SPEC §3), parsed into a ScopeRequest and
// resolved against a trace. Also --quantiles, which every analysis with percentiles takes.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common.h"
#include "markers.h"
#include "quantile.h"
#include "scope.h"
#include "trace.h"

namespace jqtrace::cli {

struct ScopeOptions {
  std::vector<std::string> marker;  ///< KIND, N[..M]
  std::vector<std::string> ms;      ///< LO, HI
  std::vector<std::string> us;      ///< LO, HI
  std::string unit_at = "auto";     ///< start, end or auto, or KIND=RULE,...
};

void add_scope_options(CLI::App& cmd, ScopeOptions& opts);

/// --unit-at alone (markers, which has no range options).
void add_unit_at_option(CLI::App& cmd, std::string& unit_at);
UnitRequest unit_at_request(const std::string& unit_at);

/// --quantiles inclusive|exclusive, defaulting to `fallback`.
void add_quantiles_option(CLI::App& cmd, std::string& text, QuantileMethod fallback);
QuantileMethod quantile_method(const std::string& text);

/// The scope the options ask for; false after printing a usage error (exit 2). When auto
/// chose how a marker kind's units are cut, says so on stderr (once per kind, unless -q).
bool resolve_scope_options(const ScopeOptions& opts, const Trace& trace, const CommonOptions& common, Scope* scope);

/// "jqtrace: units of 'token' end at their markers (--unit-at auto: head 1.21 gaps, tail
/// 0.05; ...)" once per kind and rule, when auto chose it and -q is not given; a warning
/// with the evidence when auto found it ambiguous.
void note_unit_rule(const std::string& kind, const UnitRule& rule, const CommonOptions& common);

/// The same warning for each kind auto found ambiguous (commands that cut every kind).
void warn_ambiguous_kinds(const std::vector<KindSummary>& kinds, const CommonOptions& common);

}  // namespace jqtrace::cli
