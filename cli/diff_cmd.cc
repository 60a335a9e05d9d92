// jqtrace diff A B: load both → same scope and grouping → stats side by side → render.
#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "diff.h"
#include "diff_schema.h"
#include "grouping.h"
#include "load.h"
#include "scope_options.h"

namespace jqtrace::cli {
namespace {

struct DiffCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::string by;
  std::string quantiles;
  std::string a, b;
};

/// One side: the trace's stats over the scope and its marker kinds.
struct Side {
  std::string name;
  Scope scope;
  RangeStats stats;
  std::vector<KindSummary> kinds;
  result::TraceFacts facts;
};

int analyse(const DiffCommandOptions& o, const std::string& path, const GroupBy* by, Side* side) {
  Trace trace;  // freed before the second trace is read
  if (int status = load_for_analysis(path, o.common, &trace)) return status;
  if (!resolve_scope_options(o.scope, trace, o.common, &side->scope)) {
    print_error(fmt::format("{}: the scope above is not in this trace", display_name(path)));
    return kUsage;
  }
  StatsOptions options;
  if (by) options.by = *by;
  else if (!choose_grouping(o.by, trace, &options.by)) return kUsage;
  options.distributions = false;
  options.quantiles = quantile_method(o.quantiles);
  SpanIndex index(trace);
  side->name = display_name(path);
  side->stats = compute_stats(trace, index, side->scope.range, options);
  side->kinds = summarize_kinds(trace, unit_at_request(o.scope.unit_at), options.quantiles);
  side->facts = result::trace_facts(trace);
  return kOk;
}

int run_diff(const DiffCommandOptions& o) {
  if (o.a == "-" && o.b == "-") {
    print_error("diff: A and B cannot both be standard input");
    return kUsage;
  }
  Side a, b;
  if (int status = analyse(o, o.a, nullptr, &a)) return status;
  if (int status = analyse(o, o.b, &a.stats.by, &b)) return status;  // B is grouped as A is
  TraceDiff d = diff_stats(a.stats, b.stats, a.kinds, b.kinds);
  return write_document(result::diff_document({a.name, a.scope, &a.stats, a.facts}, {b.name, b.scope, &b.stats, b.facts}, d,
                                             quantile_method(o.quantiles)),
                        o.common, "diff");
}

}  // namespace

void setup_diff(CLI::App& app) {
  auto opts = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand("diff", "Two traces side by side: busy and share per group, idle, units");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_scope_options(*cmd, opts->scope);
  add_grouping_option(*cmd, opts->by);
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  cmd->add_option("A", opts->a, "The first (reference) trace")->required();
  cmd->add_option("B", opts->b, "The second trace")->required();
  cmd->footer("Examples:\n  jqtrace diff main.trace.json branch.trace.json\n  jqtrace diff --marker token 3 --by name a.json b.json");
  cmd->callback([opts]() { throw CommandDone{run_diff(*opts)}; });
}

}  // namespace jqtrace::cli
