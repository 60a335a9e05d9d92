#pragma once
// --fail-if EXPR (repeatable) and --gate-file F, shared by stats, markers and phases:
// parsed before any input is read (a typo fails fast with exit 2), evaluated against the
// command's MetricSet afterwards; each tripped gate prints one line on stderr.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gate.h"
#include "scope.h"
#include "trace.h"

namespace jqtrace::cli {

struct GateOptions {
  std::vector<std::string> fail_if;
  std::string gate_file;
  bool allow_truncated = false;  ///< check gates on a cut-off trace anyway
  std::string junit;             ///< --junit FILE: the gates as JUnit XML for a CI's test view
  /// --inconclusive pass|fail (diff): what a gate that cannot judge counts as; "" exits 2.
  std::string inconclusive;
  bool any() const { return !fail_if.empty() || !gate_file.empty(); }
};

/// on_traces: also --allow-truncated (phases reads logs, not traces).
void add_gate_options(CLI::App& cmd, GateOptions& opts, bool on_traces = true);

/// Every gate of --fail-if and --gate-file, in that order; false after printing where
/// the first malformed one is wrong, or when --junit - would share standard output with
/// the data (data_output: the command's -o, empty or "-" for standard output).
bool parse_gate_options(const GateOptions& opts, const std::string& data_output, std::vector<GateSource>* gates);

/// Evaluates every gate. Unknown metrics or names: false after printing where (exit 2).
/// Tripped gates: "jqtrace: gate failed: share(ffn chain) = 41.7 > 40" each, on stderr.
/// A gate on a metric known within an interval (diff) may also cannot judge: "jqtrace: gate
/// cannot judge: ..." with the interval and what would help, unless opts.inconclusive
/// makes it a pass or a failure (said as a warning, or as a failure).
bool evaluate_gates(const std::vector<GateSource>& gates, const MetricSet& metrics, std::vector<GateResult>* results,
                    const GateOptions* opts = nullptr);

bool any_tripped(const std::vector<GateResult>& results);

/// The gates' exit status: kCheckFailed when one failed, else kUsage when one could not
/// judge, else kOk.
int gates_status(const std::vector<GateResult>& results);

/// --inconclusive pass|fail, for commands whose gates can be undecided (diff).
void add_inconclusive_option(CLI::App& cmd, GateOptions& opts);

/// --junit FILE: a JUnit XML testsuite "jqtrace COMMAND" with a testcase a gate, a
/// <failure> for each tripped one (its line and what the value stands on); with results
/// null (a cut-off trace: the gates were not checked), an <error> each saying so. Nothing
/// without --junit or gates. Written as -o is (Output); kOk, or its failure status: kUsage
/// for a trace being read, kInput when the file cannot be written.
int write_junit(const GateOptions& opts, std::string_view command, const std::vector<GateSource>& gates,
                const std::vector<GateResult>* results);

/// Gates and baselines are not checked on a cut-off trace (SPEC §3: its categories and
/// lanes may be wrong, so a pass would mean nothing): false after printing where it was
/// cut and what is missing (the caller then exits 1). With --allow-truncated, true after
/// the truncation warning, which then shows even with -q since it qualifies the answer.
bool complete_enough_to_check(const Trace& trace, const std::string& path, const GateOptions& opts);

/// Gates and baselines are not checked in units whose rule auto could not decide (SPEC §2
/// "Units"): a pass or a failure would depend on a guess. False after saying so (exit 2).
bool scope_checkable(const Scope& scope, const std::string& path);



}  // namespace jqtrace::cli
