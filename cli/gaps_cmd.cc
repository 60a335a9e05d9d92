// jqtrace gaps FILE: load → scope → compute_gaps → render (old scripts' text, csv, tsv, json).
#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "gaps.h"
#include "load.h"
#include "numbers.h"
#include "gaps_schema.h"
#include "scope_options.h"

namespace jqtrace::cli {
namespace {

struct GapsCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::string by;  ///< empty: category when chains are tagged, else nstages
  std::string fat_us = "5";
  std::string quantiles;
  std::string file;
};

int run_gaps(const GapsCommandOptions& o) {
  GapsOptions options;
  if (parse_us_to_ns(o.fat_us, &options.fat_ns) != NumberStatus::ok || options.fat_ns < 0) {
    print_error(fmt::format("--fat-us: '{}' is not a duration in microseconds", o.fat_us));
    return kUsage;
  }
  options.threads = worker_threads(o.common);
  options.quantiles = quantile_method(o.quantiles);
  Trace& trace = trace_for_process();
  LoadOptions load;
  load.categories = false;
  if (int status = load_for_analysis(o.file, o.common, &trace, load)) return status;
  if (!trace.jobque) {
    print_error(fmt::format("{}: not a jobque trace (no jobqueProfile, no publish or chunk spans): gaps has "
                            "nothing to measure; stats works on any trace",
                            display_name(o.file)));
    return kInput;
  }
  Scope scope;
  if (!resolve_scope_options(o.scope, trace, o.common, &scope)) return kUsage;
  options.by = o.by.empty() ? ClassBy::automatic : (o.by == "category" ? ClassBy::category : ClassBy::nstages);
  GapsReport report;
  std::string error;
  if (!compute_gaps(trace, scope.range, options, &report, &error)) {
    print_error(fmt::format("{}: {}", display_name(o.file), error));
    return kInput;
  }
  return write_document(result::gaps_document(report, display_name(o.file), scope, options.quantiles, result::trace_facts(trace)), o.common,
                        "gaps");
}

}  // namespace

void setup_gaps(CLI::App& app) {
  auto opts = std::make_shared<GapsCommandOptions>();
  CLI::App* cmd = app.add_subcommand("gaps", "Chain, tail, publish and lane-gap metrics (the old trace_* scripts)");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_index_options(*cmd, opts->common, false);
  add_scope_options(*cmd, opts->scope);
  cmd->add_option("--by", opts->by, "Classes of chains: nstages or category (default: category if chains are tagged)")
      ->check(CLI::IsMember({"nstages", "category"}))
      ->option_text("CLASSES");
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  cmd->add_option("--fat-us", opts->fat_us, "Publishes longer than this are fat (default 5)")->option_text("US");
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace gaps trace.json.gz\n  jqtrace gaps --by nstages --marker token 5..9 trace.json\n  jqtrace gaps --format json trace.json | jq '.classes[].name'");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "gaps")) throw CommandDone{kUsage};
    throw CommandDone{run_gaps(*opts)};
  });
}

}  // namespace jqtrace::cli
