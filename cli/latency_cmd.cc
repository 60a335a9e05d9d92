// jqtrace latency FILE: load → scope → the marker lane → its time cut into parts → render.
#include <algorithm>
#include <optional>

#include <fmt/core.h>

#include "baseline.h"
#include "commands.h"
#include "common.h"
#include "gates.h"
#include "latency.h"
#include "latency_schema.h"
#include "load.h"
#include "scope_options.h"
#include "suggest.h"
#include "timings.h"

namespace jqtrace::cli {
namespace {

/// The longest waits the scope's table lists.
constexpr std::size_t kWaitsListed = 10;

struct LatencyCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::string per_unit;  ///< --per-unit KIND
  std::string sort = "index";
  std::string lane;      ///< --lane: pid:tid or a thread name ("" the marker lane)
  GateOptions gates;
  BaselineOptions baseline;
  std::string file;
};

/// The lane --lane names (its label, or its thread name when one lane has it); SIZE_MAX
/// after saying why not.
std::size_t named_lane(const Trace& trace, const std::string& name) {
  std::vector<std::size_t> by_thread;
  std::vector<std::string> labels;
  for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
    labels.push_back(trace.lane_label(l));
    if (labels.back() == name) return l;
    if (trace.thread_name(l) == name) by_thread.push_back(l);
    if (!trace.thread_name(l).empty()) labels.emplace_back(trace.thread_name(l));
  }
  if (by_thread.size() == 1) return by_thread.front();
  if (by_thread.size() > 1) {
    print_error(fmt::format("--lane '{}': {} lanes have that thread name; give one as pid:tid", name, by_thread.size()));
    return SIZE_MAX;
  }
  std::string near = closest_match(name, labels);
  print_error(fmt::format("--lane '{}': no such lane{}", name, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
  return SIZE_MAX;
}

/// The lane whose time is cut: --lane, else the one holding the markers of the unit kind
/// (or of the scope's kind, or of any kind), else a jobque trace's caller.
std::size_t choose_lane(const LatencyCommandOptions& o, const std::string& file, const Trace& trace, const Scope& scope,
                        std::string* reason) {
  if (!o.lane.empty()) {
    *reason = "--lane";
    return named_lane(trace, o.lane);
  }
  std::string kind = !o.per_unit.empty() ? o.per_unit : scope.marker_kind;
  bool by_markers = false;
  std::size_t lane = latency_lane(trace, kind, &by_markers);
  *reason = by_markers ? "the marker lane" : "the caller: no markers";
  if (lane == SIZE_MAX)
    print_error(fmt::format("{}: no lane holds markers{}: give the lane to measure with --lane PID:TID",
                            display_name(file), trace.jobque ? " or spans" : ""));
  return lane;
}

/// The units of kind that lie in the scope (a unit the scope's edge cuts is not one of its).
bool units_in_scope(const LatencyCommandOptions& o, const Trace& trace, const Scope& scope,
                    result::LatencyContext* c) {
  std::string error;
  if (!check_marker_kind(trace, o.per_unit, &error)) {
    print_error(error);
    return false;
  }
  // One plan gives the rule and the units (unit_rule and units_of would each plan every kind).
  UnitPlanner planner(trace, unit_at_request(o.scope.unit_at));
  Markers markers = markers_of(trace, o.per_unit);
  KindUnits plan = planner.plan(o.per_unit, markers);
  c->per_unit = o.per_unit;
  c->per_unit_rule = plan.rule;
  note_unit_rule(o.per_unit, c->per_unit_rule, o.common);
  for (const Unit& u : cut_units(markers, plan))
    if (scope.range.holds(u.range)) c->units.push_back(u);
  if (c->units.empty())
    print_warning(o.common, fmt::format("no unit of '{}' lies wholly in the scope ({})", o.per_unit, scope.label));
  if (o.sort == "dur")
    std::stable_sort(c->units.begin(), c->units.end(),
                     [](const Unit& a, const Unit& b) { return a.range.length() > b.range.length(); });
  return true;
}

/// The shares of a baseline trace, measured as this run's: the same scope and lane choice.
int baseline_shares_of_trace(const LatencyCommandOptions& o, BaselineShares* out) {
  Trace trace;  // beside this run's: both are needed at once
  if (int status = load_for_analysis(o.baseline.file, o.common, &trace)) return status;
  if (!complete_enough_to_check(trace, o.baseline.file, o.gates)) return kCheckFailed;
  Scope scope;
  if (!resolve_scope_options(o.scope, trace, o.common, &scope)) {
    print_error(fmt::format("{}: the scope above is not in the baseline", o.baseline.file));
    return kUsage;
  }
  if (!scope_checkable(scope, o.baseline.file)) return kUsage;
  std::string reason;
  std::size_t lane = choose_lane(o, o.baseline.file, trace, scope, &reason);
  if (lane == SIZE_MAX) return kUsage;
  SpanIndex index(trace, worker_threads(o.common));
  LatencyAnalysis analysis(trace, index, lane, scope.range);
  out->by = "latency";
  out->scope = scope.label;
  out->groups = result::latency_shares(analysis.measure(scope.range, 0), analysis);
  return kOk;
}

/// --baseline: each share's move against a saved latency JSON or a trace; kOk or why not.
int compare_with_baseline(const LatencyCommandOptions& o, const Scope& scope, const LatencyParts& parts,
                          const LatencyAnalysis& analysis, std::vector<ShareDelta>* moves) {
  BaselineShares baseline;
  int status = baseline_is_saved(o.baseline, result::looks_like_latency_json)
                   ? load_saved_shares(o.baseline, o.common, scope, result::read_latency_json, &baseline)
                   : baseline_shares_of_trace(o, &baseline);
  if (status) return status;
  *moves = compare_shares(result::latency_shares(parts, analysis), baseline, o.baseline.max_share_delta_pp);
  report_share_moves(*moves, o.baseline, "latency");
  return kOk;
}

/// Gates name "GROUP, CLASS" however they spaced it.
std::vector<GateSource> normalized(std::vector<GateSource> gates) {
  for (GateSource& g : gates) g.gate.arg = result::latency_gate_arg(g.gate.arg);
  return gates;
}

int run_latency(const LatencyCommandOptions& o) {
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, o.common.output, &gates)) return kUsage;
  Trace& trace = trace_for_process();
  // The whole trace: a stage's last chunk can end outside the scope (SPEC §2 "Latency").
  if (int status = load_for_analysis(o.file, o.common, &trace)) return status;
  result::LatencyContext c;
  c.trace = &trace;
  c.file = display_name(o.file);
  c.facts = result::trace_facts(trace);
  if (!resolve_scope_options(o.scope, trace, o.common, &c.scope)) return kUsage;
  std::size_t lane = choose_lane(o, o.file, trace, c.scope, &c.lane_reason);
  if (lane == SIZE_MAX) return kUsage;
  if (!o.per_unit.empty() && !units_in_scope(o, trace, c.scope, &c)) return kUsage;
  SpanIndex index(trace, worker_threads(o.common));
  std::optional<PhaseClock> clock(std::in_place, "analysis", PhaseKind::serial);
  LatencyAnalysis analysis(trace, index, lane, c.scope.range);
  c.analysis = &analysis;
  LatencyParts parts = analysis.measure(c.scope.range, kWaitsListed);
  clock.reset();  // the units' rows are measured as they are written (render)
  std::vector<GateResult> results;
  std::vector<ShareDelta> moves;
  bool checked = !gates.empty() || o.baseline.any();
  bool cut_off = checked && !complete_enough_to_check(trace, o.file, o.gates);
  if (checked && !cut_off && !scope_checkable(c.scope, o.file)) return kUsage;
  if (!gates.empty() && !cut_off) {
    if (!evaluate_gates(normalized(gates), result::latency_metrics(parts, analysis), &results)) return kUsage;
    c.gates = &results;
  }
  if (int status = write_junit(o.gates, "latency", gates, cut_off ? nullptr : &results))
    return status;
  if (o.baseline.any() && !cut_off) {
    if (int status = compare_with_baseline(o, c.scope, parts, analysis, &moves)) return status;
    c.baseline = &moves;
    c.baseline_file = o.baseline.file;
    c.max_share_delta_pp = o.baseline.max_share_delta_pp;
  }
  if (int status = write_document(result::latency_document(parts, c), o.common, "latency")) return status;
  bool moved = std::any_of(moves.begin(), moves.end(), [](const ShareDelta& d) { return d.tripped; });
  return cut_off || any_tripped(results) || moved ? kCheckFailed : kOk;
}

}  // namespace

void setup_latency(CLI::App& app) {
  auto opts = std::make_shared<LatencyCommandOptions>();
  CLI::App* cmd = app.add_subcommand("latency", "Where the marker lane's time went: work, publish, imbalance, wake-up");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_scope_options(*cmd, opts->scope);
  cmd->add_option("--per-unit", opts->per_unit, "One row per unit of this marker kind: its time by class and group")
      ->option_text("KIND");
  cmd->add_option("--sort", opts->sort, "With --per-unit: units in time order (index) or the slowest first (dur)")
      ->check(CLI::IsMember({"index", "dur"}))
      ->option_text("index|dur")
      ->default_str("index");
  cmd->add_option("--lane", opts->lane, "The lane to measure, as pid:tid or a thread name (default: the marker lane)")
      ->option_text("LANE");
  add_gate_options(*cmd, opts->gates);
  add_baseline_options(*cmd, opts->baseline, "latency");
  add_trace_argument(*cmd, opts->file);
  cmd->footer(
      "Examples:\n  jqtrace latency --marker token slowest trace.json.gz\n"
      "  jqtrace latency --per-unit token --sort dur --format csv trace.json > tokens.csv\n"
      "  jqtrace latency -q --fail-if 'latency(imbalance) > 15' --fail-if 'latency(ffn chain, imbalance) > 10' trace.json");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "latency")) throw CommandDone{kUsage};
    throw CommandDone{run_latency(*opts)};
  });
}

}  // namespace jqtrace::cli
