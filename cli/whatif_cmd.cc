// jqtrace whatif FILE --scale GROUP=F ...: load → replay the trace's dependency graph with
// the changed costs (SPEC §2 "What-if") → measured and predicted durations → render.
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

#include "commands.h"
#include "common.h"
#include "free_memory.h"
#include "latency.h"
#include "load.h"
#include "scope_options.h"
#include "suggest.h"
#include "whatif.h"
#include "whatif_schema.h"

namespace jqtrace::cli {
namespace {

struct WhatIfCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::vector<std::string> scale, publish;  ///< GROUP=F each
  bool no_wake = false;
  bool balance = false;
  bool rank = false;
  std::size_t lanes = 0;  ///< --lanes N (0: the recorded lanes)
  double work_cap = 3;
  std::string per_unit;
  std::string file;
};

/// GROUP=F split at its last '=' (a group's name may hold one); false with a message.
bool parse_change(const std::string& option, const std::string& text, std::string* group, double* factor) {
  std::size_t eq = text.rfind('=');
  char* end = nullptr;
  if (eq != std::string::npos && eq > 0) *factor = std::strtod(text.c_str() + eq + 1, &end);
  if (eq == std::string::npos || eq == 0 || end == text.c_str() + eq + 1 || *end != '\0' || !std::isfinite(*factor) ||
      *factor < 0) {
    print_error(fmt::format("{} '{}': give GROUP=F, F a factor of at least 0 (0.5: half the work)", option, text));
    return false;
  }
  *group = text.substr(0, eq);
  return true;
}

/// The category a group's name names; false after saying which names there are.
bool find_category(const Trace& trace, const std::string& option, const std::string& group, std::size_t* category) {
  std::vector<std::string> names;
  for (std::size_t c = 0; c < trace.categories.size(); ++c) {
    if (trace.categories[c].name == group) {
      *category = c;
      return true;
    }
    names.push_back(trace.categories[c].name);
  }
  print_error(fmt::format("{} '{}': no such group in this trace{}", option, group,
                          did_you_mean(close_matches(group, names))));
  return false;
}

/// The changes the options ask for, and how people read them; false after saying why not.
bool changes_of(const WhatIfCommandOptions& o, const Trace& trace, WhatIfChanges* changes, std::string* text) {
  auto said = [&](const std::string& part) { *text += (text->empty() ? "" : ", ") + part; };
  for (const auto& [option, list] : {std::pair{"--scale", &o.scale}, std::pair{"--publish", &o.publish}}) {
    bool publish = list == &o.publish;
    std::vector<double>& factors = publish ? changes->publish_factor : changes->chunk_factor;
    for (const std::string& item : *list) {
      std::string group;
      double factor = 1;
      if (!parse_change(option, item, &group, &factor)) return false;
      if (publish && group == "all") {
        factors.assign(trace.categories.size(), factor);
        said(fmt::format("every publish x{}", factor));
        continue;
      }
      std::size_t category = 0;
      if (!find_category(trace, option, group, &category)) return false;
      if (factors.size() <= category) factors.resize(category + 1, 1.0);
      factors[category] = factor;
      said(fmt::format("{}{} x{}", group, publish ? " publishes" : "", factor));
    }
  }
  if (o.no_wake) {
    changes->wake_factor = 0;
    said("no wake-up");
  }
  if (o.balance) {
    changes->balance = 1;
    said("every stage balanced");
  }
  if (text->empty() && !o.lanes) *text = o.rank ? "each group, publish, wake-up and imbalance in turn" : "nothing changed (the recording replayed)";
  return true;
}

/// The result narrowed to a unit scope: its length measured and replayed (from its first
/// unit's replayed start to its last one's end) and the units that lie in it. False after
/// saying why not (a time range has no replayed edges).
bool narrow_to_scope(const Scope& scope, WhatIfResult* r) {
  if (scope.kind == ScopeRequest::Kind::whole) return true;
  if (scope.kind == ScopeRequest::Kind::time) {
    print_error("whatif replays units, not a time range (its edges would move with no marker to follow): give "
                "--marker KIND N[..M], or no scope");
    return false;
  }
  for (const WhatIfKind& k : r->kinds) {
    if (k.kind != scope.marker_kind) continue;
    std::size_t first = SIZE_MAX, last = SIZE_MAX;
    for (std::size_t i = 0; i < k.measured.size(); ++i) {
      if (k.measured[i].index == scope.first_unit) first = i;
      if (k.measured[i].index == scope.last_unit) last = i;
    }
    if (first == SIZE_MAX || last == SIZE_MAX || k.predicted.size() != k.measured.size()) break;
    r->measured_ns = scope.range.length();
    r->predicted_ns = k.predicted[last].range.hi - k.predicted[first].range.lo;
    for (WhatIfKind& each : r->kinds) {
      std::vector<Unit> measured, predicted;
      for (std::size_t i = 0; i < each.measured.size() && i < each.predicted.size(); ++i)
        if (scope.range.holds(each.measured[i].range)) {
          measured.push_back(each.measured[i]);
          predicted.push_back(each.predicted[i]);
        }
      each.measured = std::move(measured);
      each.predicted = std::move(predicted);
    }
    return true;
  }
  print_error(fmt::format("{}: its units were not replayed", scope.label));
  return false;
}

int run_whatif(const WhatIfCommandOptions& o) {
  // The load's and the graph's tables of the whole trace, each dropped once the next is
  // made, are reused from the heap, not faulted in afresh: page faults were a fifth of a
  // rank (570 MB trace, 8 lanes: 4.5-5.0 s -> 3.8-4.1 s; its peak 20-40 MB higher).
  reuse_freed_blocks();
  Trace& trace = trace_for_process();
  LoadOptions load;
  load.release_freed = false;
  if (int status = load_for_analysis(o.file, o.common, &trace, load)) return status;
  if (!trace.jobque) {
    print_error(fmt::format("{}: not a jobque trace: whatif replays jobque chains (publish, chunk, stage_wait) and "
                            "this trace has none",
                            display_name(o.file)));
    return kUsage;
  }
  std::string error;
  if (!o.per_unit.empty() && !check_marker_kind(trace, o.per_unit, &error)) {
    print_error(error);
    return kUsage;
  }
  if (o.rank && (!o.scale.empty() || !o.publish.empty() || o.no_wake || o.balance || o.lanes)) {
    print_error("--rank replays each cost removed alone: give no --scale, --publish, --no-wake, --balance or --lanes "
                "with it");
    return kUsage;
  }
  Scope scope;
  if (!resolve_scope_options(o.scope, trace, o.common, &scope)) return kUsage;
  if (o.rank && scope.kind != ScopeRequest::Kind::whole) {
    print_error("--rank ranks the whole trace: give no scope with it");
    return kUsage;
  }
  WhatIfChanges changes;
  result::WhatIfContext c;
  c.scope = scope.label;
  if (!changes_of(o, trace, &changes, &c.changes)) return kUsage;
  c.file = display_name(o.file);
  c.work_cap = o.work_cap;
  c.per_unit = o.per_unit;
  c.facts = result::trace_facts(trace);
  ReplayGraph graph(trace, o.work_cap);
  if (o.rank) {
    std::string kind = o.per_unit.empty() ? summary_unit_kind(trace, unit_at_request(o.scope.unit_at)) : o.per_unit;
    WhatIfRank rank = what_if_rank(graph, unit_at_request(o.scope.unit_at), kind, worker_threads(o.common));
    return write_document(result::whatif_rank_document(rank, graph.anomalies(), c), o.common, "whatif");
  }
  WhatIfResult r;
  if (o.lanes) {
    std::size_t marker_lane = latency_lane(trace, "");
    if (marker_lane == SIZE_MAX) {
      print_error(fmt::format("{}: --lanes needs the lane whose program runs (the marker lane or the caller); "
                              "none holds markers or spans",
                              display_name(o.file)));
      return kUsage;
    }
    r = what_if_lanes(graph, changes, unit_at_request(o.scope.unit_at), marker_lane, o.lanes);
    c.changes += fmt::format("{}on {} lanes (recorded: {})", c.changes.empty() ? "" : ", ", o.lanes, r.recorded_lanes);
  } else {
    r = what_if(graph, changes, unit_at_request(o.scope.unit_at));
  }
  if (!narrow_to_scope(scope, &r)) return kUsage;
  std::vector<WorkSpan> work_and_span;
  if (!o.per_unit.empty())
    for (const WhatIfKind& k : r.kinds)
      if (k.kind == o.per_unit) work_and_span = work_span(trace, k.measured);
  c.work_span = &work_and_span;
  // P: the lanes that run chunks (a lane of markers or other spans adds no worker).
  c.lanes = std::max<std::size_t>(lanes_with_chunks(trace), 1);
  return write_document(result::whatif_document(r, c), o.common, "whatif");
}

}  // namespace

void setup_whatif(CLI::App& app) {
  auto opts = std::make_shared<WhatIfCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "whatif", "What a change would buy: the trace's own dependency graph replayed with changed costs");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_scope_options(*cmd, opts->scope);
  cmd->add_option("--scale", opts->scale, "Multiply the work of a group's chunks (repeatable): GROUP=F, 0.5 halves it")
      ->option_text("GROUP=F")
      ->allow_extra_args(false);
  cmd->add_option("--publish", opts->publish, "Multiply a group's publishes (or all=F: every publish)")
      ->option_text("GROUP=F")
      ->allow_extra_args(false);
  cmd->add_flag("--no-wake", opts->no_wake, "Every stage_wait ends when its stage's last chunk does (no wake-up)");
  cmd->add_flag("--balance", opts->balance, "Every chunk of a stage lasts the stage's median (no imbalance)");
  cmd->add_option("--work-cap", opts->work_cap,
                  "A chunk past K x its group's median for the stage was preempted: its work is the median, the rest kept")
      ->check(CLI::Range(1.0, 1e9))
      ->option_text("K")
      ->default_str("3");
  cmd->add_option("--lanes", opts->lanes,
                  "Predict on N lanes: each stage's chunks claimed by the first free lane (a model of the runtime's "
                  "rule, its error at the recorded lanes beside it)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}))
      ->option_text("N");
  cmd->add_flag("--rank", opts->rank,
                "The causal profile: the saving if each group (and publish, wake-up, imbalance) cost 25, 50, 100% less");
  cmd->add_option("--per-unit", opts->per_unit,
                  "A row per unit of this marker kind, measured and predicted (--rank: the kind whose median unit it measures)")
      ->option_text("KIND");
  add_trace_argument(*cmd, opts->file);
  cmd->footer(
      "Examples:\n  jqtrace whatif --scale 'ffn chain=0.5' trace.json\n"
      "  jqtrace whatif --publish all=0 --no-wake trace.json\n"
      "  jqtrace whatif --rank trace.json\n"
      "  jqtrace whatif --scale 'moe experts=0.8' --per-unit token --format csv trace.json > tokens.csv");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "whatif")) throw CommandDone{kUsage};
    throw CommandDone{run_whatif(*opts)};
  });
}

}  // namespace jqtrace::cli
