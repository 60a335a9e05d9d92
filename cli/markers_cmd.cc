// jqtrace markers FILE: load → marker kinds (or the units of one kind) → render.
#include <algorithm>
#include <memory>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "gate_metrics.h"
#include "gates.h"
#include "load.h"
#include "markers.h"
#include "markers_schema.h"
#include "scope_options.h"

namespace jqtrace::cli {
namespace {

struct MarkersCommandOptions {
  CommonOptions common;
  std::string kind;  ///< --kind: one row per unit of this kind
  std::string unit_at = "auto";
  std::string sort = "index";  ///< --sort: the units in time order, or the slowest first (dur)
  std::string quantiles;
  GateOptions gates;
  std::string file;
};

const KindSummary* find_kind(const std::vector<KindSummary>& kinds, const std::string& kind) {
  for (const KindSummary& k : kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

/// Gates see the marker kinds' unit metrics and the whole trace's stats, grouped the
/// default way (category for jobque traces, cat for others).
bool evaluate_marker_gates(const std::vector<GateSource>& gates, const Trace& trace,
                           const std::vector<KindSummary>& kinds, QuantileMethod quantiles,
                           std::vector<GateResult>* results) {
  StatsOptions options;
  options.by = trace.jobque ? GroupBy::category : GroupBy::cat;
  options.quantiles = quantiles;
  SpanIndex index(trace);
  RangeStats stats = compute_stats(trace, index, whole_trace(trace), options);
  return evaluate_gates(gates, stats_metrics(stats, kinds), results);
}

int run_markers(const MarkersCommandOptions& o) {
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, o.common.output, &gates)) return kUsage;
  Trace& trace = trace_for_process();
  // Kinds and their unit durations need no span: a fresh index answers them alone.
  bool spans_needed = !o.kind.empty() || !gates.empty();
  auto input = open_trace(o.file);
  if (!input) return kInput;
  if (int status = spans_needed ? load_for_analysis(input, o.common, &trace) : load_skeleton(input, o.common, &trace))
    return status;
  QuantileMethod quantiles = quantile_method(o.quantiles);
  std::vector<KindSummary> kinds = summarize_kinds(trace, unit_at_request(o.unit_at), quantiles);
  if (o.kind.empty()) warn_ambiguous_kinds(kinds, o.common);  // with --kind, note_unit_rule speaks for that kind
  result::MarkersContext context;
  context.file = display_name(o.file);
  context.quantiles = quantiles;
  context.kind = o.kind;
  context.facts = result::trace_facts(trace);
  if (trace.jobque)
    for (const Category& c : trace.categories) context.categories.push_back(c.name);
  result::UnitsTable units(context.categories);
  std::vector<Unit> all_units;       // --kind's, in the table's order
  std::unique_ptr<SpanIndex> index;  // the spans the units' rows are measured from
  unsigned threads = 1;
  if (!o.kind.empty()) {
    std::string error;
    if (!check_marker_kind(trace, o.kind, &error)) {
      print_error(error);
      return kUsage;
    }
    UnitRule rule = find_kind(kinds, o.kind)->rule;
    note_unit_rule(o.kind, rule, o.common);
    threads = worker_threads(o.common);
    index = std::make_unique<SpanIndex>(trace, threads);
    // The rows are measured a block at a time as they are written, never all held: only
    // the units themselves (32 bytes each), in the order the table lists them.
    all_units = units_of(trace, o.kind, unit_at_request(o.unit_at));
    if (o.sort == "dur")
      std::stable_sort(all_units.begin(), all_units.end(),
                       [](const Unit& a, const Unit& b) { return a.range.length() > b.range.length(); });
    units.stream(all_units.size(), [&](std::size_t from, std::size_t count, const auto& add) {
      for_each_unit_row(trace, *index, all_units, from, count, threads, add);
    });
  }
  std::vector<GateResult> results;
  bool cut_off = !gates.empty() && !complete_enough_to_check(trace, o.file, o.gates);
  if (!gates.empty() && !cut_off && !evaluate_marker_gates(gates, trace, kinds, quantiles, &results)) return kUsage;
  const std::vector<GateResult>* gated = gates.empty() || cut_off ? nullptr : &results;
  if (int status = write_junit(o.gates, "markers", gates, gated)) return status;
  context.gates = gated;
  if (int status = write_document(result::markers_document(kinds, std::move(units), context), o.common, "markers"))
    return status;
  return cut_off || any_tripped(results) ? kCheckFailed : kOk;
}

}  // namespace

void setup_markers(CLI::App& app) {
  auto opts = std::make_shared<MarkersCommandOptions>();
  CLI::App* cmd = app.add_subcommand("markers", "Marker kinds and their units; with --kind, stats per unit");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_index_options(*cmd, opts->common, true);
  cmd->add_option("--kind", opts->kind, "One row per unit of this marker kind, with its range stats")
      ->option_text("KIND");
  cmd->add_option("--sort", opts->sort, "With --kind: units in time order (index) or the slowest first (dur)")
      ->check(CLI::IsMember({"index", "dur"}))
      ->option_text("index|dur")
      ->default_str("index");
  add_unit_at_option(*cmd, opts->unit_at);
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  add_gate_options(*cmd, opts->gates);
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace markers trace.json.gz\n  jqtrace markers --kind token --format csv trace.json > tokens.csv\n  jqtrace markers --fail-if 'unit_p50(token) > 4000' trace.json");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "markers")) throw CommandDone{kUsage};
    throw CommandDone{run_markers(*opts)};
  });
}

}  // namespace jqtrace::cli
