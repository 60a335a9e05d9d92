// jqtrace stats FILE: load → scope → compute_stats → stats document → render.
#include <fmt/core.h>

#include "baseline.h"
#include "commands.h"
#include "common.h"
#include "gates.h"
#include "load.h"
#include "markers.h"
#include "numbers.h"
#include "scope_options.h"
#include "grouping.h"
#include "stats.h"
#include "stats_schema.h"

namespace jqtrace::cli {
namespace {

struct StatsCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::string by;  ///< empty: category for jobque traces, cat for generic ones
  bool hist = false;
  std::string quantiles;
  GateOptions gates;
  BaselineOptions baseline;
  std::string file;
};

/// What --fail-if, --gate-file and --baseline found.
struct Checks {
  bool cut_off = false;  ///< the trace is truncated: nothing was checked, the run fails
  bool gated = false;
  std::vector<GateResult> gates;
  const BaselineOptions* baseline = nullptr;
  std::vector<ShareDelta> shares;

  bool failed() const {
    if (cut_off) return true;
    for (const ShareDelta& d : shares)
      if (d.tripped) return true;
    return any_tripped(gates);
  }
};

result::StatsContext context(const StatsCommandOptions& o, const Scope& scope, const StatsOptions& options,
                             const Checks& checks, const Trace& trace) {
  result::StatsContext c;
  c.trace = &trace;
  c.file = display_name(o.file);
  c.scope = scope;
  c.quantiles = options.quantiles;
  c.hist = o.hist;
  if (checks.gated) c.gates = &checks.gates;
  if (checks.baseline) {
    c.baseline = &checks.shares;
    c.baseline_file = o.baseline.file;
    c.max_share_delta_pp = o.baseline.max_share_delta_pp;
  }
  return c;
}

/// Evaluates the gates and the baseline comparison; kOk or the exit status of a problem.
int run_checks(const StatsCommandOptions& o, const std::vector<GateSource>& gates, const Trace& trace,
               const Scope& scope, const RangeStats& stats, const StatsOptions& options, Checks* checks) {
  if (gates.empty() && !o.baseline.any()) return kOk;
  if (!complete_enough_to_check(trace, o.file, o.gates)) {
    checks->cut_off = true;
    return kOk;
  }
  if (!scope_checkable(scope, o.file)) return kUsage;
  if (!gates.empty()) {
    checks->gated = true;
    auto kinds = summarize_kinds(trace, unit_at_request(o.scope.unit_at), options.quantiles);
    if (!evaluate_gates(gates, stats_metrics(stats, kinds), &checks->gates)) return kUsage;
  }
  if (o.baseline.any()) {
    BaselineShares baseline;
    if (int status = load_baseline(o.baseline, o.common, o.scope, scope, options, o.gates, &baseline)) return status;
    checks->baseline = &o.baseline;
    checks->shares = compare_shares(stats, baseline, o.baseline.max_share_delta_pp);
    report_share_moves(checks->shares, o.baseline);
  }
  return kOk;
}

int run_stats(const StatsCommandOptions& o) {
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, o.common.output, &gates)) return kUsage;
  Trace& trace = trace_for_process();
  Scope scope;
  auto input = open_trace(o.file);
  if (!input) return kInput;
  if (int status = load_scoped(input, o.common, o.scope, &trace, &scope)) return status;
  StatsOptions options;
  if (!choose_grouping(o.by, trace, &options.by)) return kUsage;
  options.hist = o.hist;
  options.threads = worker_threads(o.common);
  options.quantiles = quantile_method(o.quantiles);
  RangeStats stats;
  {
    SpanIndex index(trace, options.threads);  // freed before the document is written (16 bytes a lane and more)
    stats = compute_stats(trace, index, scope.range, options);
  }
  Checks checks;
  if (int status = run_checks(o, gates, trace, scope, stats, options, &checks)) return status;
  if (int status = write_junit(o.gates, "stats", gates, checks.cut_off ? nullptr : &checks.gates))
    return status;
  // The lanes' rows are made from stats and the trace as they are written.
  result::Document document = stats_document(stats, context(o, scope, options, checks, trace));
  if (int status = write_document(document, o.common, "stats")) return status;
  return checks.failed() ? kCheckFailed : kOk;
}

}  // namespace

void setup_stats(CLI::App& app) {
  auto opts = std::make_shared<StatsCommandOptions>();
  CLI::App* cmd = app.add_subcommand("stats", "Range stats: busy, wait, idle, parallelism, per group and lane");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_scope_options(*cmd, opts->scope);
  add_index_options(*cmd, opts->common, true);
  add_grouping_option(*cmd, opts->by);
  cmd->add_flag("--hist", opts->hist, "Add log2 duration histograms per group");
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  add_gate_options(*cmd, opts->gates);
  add_baseline_options(*cmd, opts->baseline);
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace stats --marker token 3 trace.json.gz\n  jqtrace stats --by name --format csv trace.json > groups.csv\n  jqtrace stats -q --fail-if 'share(moe experts) > 40' trace.json");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "stats")) throw CommandDone{kUsage};
    throw CommandDone{run_stats(*opts)};
  });
}

}  // namespace jqtrace::cli
