// jqtrace markers FILE: load → marker kinds (or the units of one kind) → render.
#include <algorithm>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "gate_metrics.h"
#include "gates.h"
#include "load.h"
#include "markers.h"
#include "render.h"
#include "scope_options.h"

namespace jqtrace::cli {
namespace {

struct MarkersCommandOptions {
  CommonOptions common;
  std::string kind;  ///< --kind: one row per unit of this kind
  std::string unit_at = "auto";
  std::string quantiles;
  GateOptions gates;
  std::string file;
};

/// The share of every category in a unit (0 for categories not in it).
double share_of(const RangeStats& s, const std::string& category) {
  for (const GroupStats& g : s.groups)
    if (g.name == category) return g.share_pct;
  return 0;
}

/// Share columns: every group of any unit, in the order of the first unit that has it.
std::vector<std::string> share_columns(const std::vector<UnitRow>& rows, bool only_busy) {
  std::vector<std::string> names;
  for (const UnitRow& r : rows)
    for (const GroupStats& g : r.stats.groups)
      if ((!only_busy || g.busy_ns > 0) && std::find(names.begin(), names.end(), g.name) == names.end())
        names.push_back(g.name);
  return names;
}

std::vector<std::string> unit_cells(const UnitRow& r, bool table) {
  const RangeStats& s = r.stats;
  return {std::to_string(r.unit.index),
          std::to_string(r.unit.arg),
          us_fixed(r.unit.range.lo),
          us_fixed(r.unit.range.hi),
          us_fixed(r.unit.range.length()),
          std::to_string(s.events),
          us_fixed(s.busy_ns),
          table ? fmt::format("{:.1f}%", s.idle_pct) : fixed3(s.idle_pct),
          table ? fmt::format("{:.2f}", s.parallelism) : fixed3(s.parallelism),
          std::to_string(s.publishes)};
}

const std::vector<std::string> kUnitHeader = {"index",  "arg",     "start_us", "end_us",      "dur_us",
                                              "events", "busy_us", "idle_pct", "parallelism", "publishes"};
const std::vector<std::string> kKindHeader = {"kind", "count", "first_us", "last_us"};

/// "end (auto)", "start": how a kind's units were cut, for tables.
std::string rule_cell(UnitRule rule) { return std::string(unit_at_name(rule.at)) + (rule.automatic ? " (auto)" : ""); }

const KindSummary* find_kind(const std::vector<KindSummary>& kinds, const std::string& kind) {
  for (const KindSummary& k : kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

void render_table(const std::string& file, const std::vector<KindSummary>& kinds, const std::string& kind,
                  const std::vector<UnitRow>& rows, Output& out) {
  Palette p{out.color()};
  if (kind.empty()) {
    fmt::print(out.file(), "{}{}{}: {} marker kind{}\n\n", p.bold(), file, p.reset(), kinds.size(),
               kinds.size() == 1 ? "" : "s");
    TextTable t;
    std::vector<std::string> header = kKindHeader;
    header.insert(header.end(), {"unit_at", "unit p50_us", "p90_us", "max_us"});
    t.row(header);
    for (const KindSummary& k : kinds) {
      bool any = k.count > 0;
      t.row({k.kind, std::to_string(k.count), any ? us_fixed(k.first_ns) : "-", any ? us_fixed(k.last_ns) : "-",
             rule_cell(k.rule), any ? us_fixed(k.unit.p50) : "-", any ? us_fixed(k.unit.p90) : "-",
             any ? us_fixed(k.unit.max) : "-"});
    }
    fmt::print(out.file(), "{}", t.str());
    return;
  }
  const KindSummary* summary = find_kind(kinds, kind);
  UnitRule rule = summary ? summary->rule : UnitRule{};
  fmt::print(out.file(), "{}{}{}: {} unit{} of '{}' ({})\n\n", p.bold(), file, p.reset(), rows.size(),
             rows.size() == 1 ? "" : "s", kind, unit_rule_text(rule));
  std::vector<std::string> shares = share_columns(rows, true);
  TextTable t;
  std::vector<std::string> header = kUnitHeader;
  for (const auto& c : shares) header.push_back(c);
  t.row(header);
  for (const UnitRow& r : rows) {
    std::vector<std::string> row = unit_cells(r, true);
    for (const auto& c : shares) row.push_back(fmt::format("{:.1f}%", share_of(r.stats, c)));
    t.row(row);
  }
  fmt::print(out.file(), "{}", t.str());
  if (const KindSummary* k = summary) {
    TextTable d;
    std::vector<std::string> dh = {"unit duration"};
    dh.insert(dh.end(), kDistributionTableHeader.begin(), kDistributionTableHeader.end());
    d.row(dh);
    std::vector<std::string> cells = {kind};
    auto dc = distribution_cells(k->unit);
    cells.insert(cells.end(), dc.begin(), dc.end());
    d.row(cells);
    fmt::print(out.file(), "\n{}", d.str());
  }
}

void render_delimited(const std::vector<KindSummary>& kinds, const std::string& kind, const std::vector<UnitRow>& rows,
                      char sep, Output& out) {
  if (kind.empty()) {
    std::vector<std::string> header = kKindHeader;
    for (const auto& h : kDistributionFieldHeader) header.push_back(h == "count" ? "units" : "unit_" + h);
    header.insert(header.end(), {"unit_at", "unit_at_auto"});  // appended: earlier columns keep their place
    fmt::print(out.file(), "{}", delimited_row(header, sep));
    for (const KindSummary& k : kinds) {
      bool any = k.count > 0;
      std::vector<std::string> row = {k.kind, std::to_string(k.count), any ? us_fixed(k.first_ns) : "",
                                      any ? us_fixed(k.last_ns) : ""};
      auto f = distribution_fields(k.unit);
      row.insert(row.end(), f.begin(), f.end());
      row.insert(row.end(), {unit_at_name(k.rule.at), k.rule.automatic ? "true" : "false"});
      fmt::print(out.file(), "{}", delimited_row(row, sep));
    }
    return;
  }
  std::vector<std::string> shares = share_columns(rows, false);
  std::vector<std::string> header = kUnitHeader;
  for (const auto& c : shares) header.push_back("share:" + c);
  fmt::print(out.file(), "{}", delimited_row(header, sep));
  for (const UnitRow& r : rows) {
    std::vector<std::string> row = unit_cells(r, false);
    for (const auto& c : shares) row.push_back(fixed3(share_of(r.stats, c)));
    fmt::print(out.file(), "{}", delimited_row(row, sep));
  }
}

void render_json(const std::string& file, const std::vector<KindSummary>& kinds, const std::string& kind,
                 const std::vector<UnitRow>& rows, QuantileMethod quantiles, const std::vector<GateResult>* gates,
                 Output& out) {
  JsonDocument doc;
  auto& w = doc.w();
  w.StartObject();
  doc.field("schema", "jqtrace/markers/1");
  doc.field("file", file);
  doc.field("quantiles", quantile_method_name(quantiles));
  doc.key("kinds");
  w.StartArray();
  for (const KindSummary& k : kinds) {
    w.StartObject();
    doc.field("kind", k.kind);
    doc.field("count", k.count);
    doc.field("unit_at", unit_at_name(k.rule.at));
    doc.field("unit_at_auto", k.rule.automatic);
    if (k.count) {
      doc.us("first_us", k.first_ns);
      doc.us("last_us", k.last_ns);
    }
    json_distribution(doc, "unit_us", k.unit);
    w.EndObject();
  }
  w.EndArray();
  if (const KindSummary* k = kind.empty() ? nullptr : find_kind(kinds, kind)) {
    doc.field("kind", kind);
    doc.field("unit_at", unit_at_name(k->rule.at));
    doc.field("unit_at_auto", k->rule.automatic);
    doc.key("units");
    w.StartArray();
    for (const UnitRow& r : rows) {
      const RangeStats& s = r.stats;
      w.StartObject();
      doc.key("index");
      w.Int64(r.unit.index);
      doc.key("arg");
      w.Int64(r.unit.arg);
      doc.us("start_us", r.unit.range.lo);
      doc.us("end_us", r.unit.range.hi);
      doc.us("dur_us", r.unit.range.length());
      json_range_totals(doc, s);
      doc.key("shares");
      w.StartObject();
      for (const GroupStats& g : s.groups) doc.number(g.name, g.share_pct);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
  }
  if (gates) json_gates(doc, *gates);
  w.EndObject();
  fmt::print(out.file(), "{}", doc.str());
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
  if (!parse_gate_options(o.gates, &gates)) return kUsage;
  Trace& trace = trace_for_process();
  if (int status = load_for_analysis(o.file, o.common, &trace)) return status;
  QuantileMethod quantiles = quantile_method(o.quantiles);
  std::vector<KindSummary> kinds = summarize_kinds(trace, unit_at_request(o.unit_at), quantiles);
  std::vector<UnitRow> rows;
  if (!o.kind.empty()) {
    std::string error;
    if (!check_marker_kind(trace, o.kind, &error)) {
      print_error(error);
      return kUsage;
    }
    UnitRule rule = find_kind(kinds, o.kind)->rule;
    note_unit_rule(o.kind, rule, o.common);
    SpanIndex index(trace);
    rows = unit_rows(trace, index, o.kind, rule.at, worker_threads(o.common));
  }
  std::vector<GateResult> results;
  bool cut_off = !gates.empty() && !complete_enough_to_check(trace, o.file, o.gates);
  if (!gates.empty() && !cut_off && !evaluate_marker_gates(gates, trace, kinds, quantiles, &results)) return kUsage;
  const std::vector<GateResult>* gated = gates.empty() || cut_off ? nullptr : &results;
  auto out = Output::open(o.common);
  if (!out) return kInput;  // cannot write: an input or output error
  std::string file = display_name(o.file);
  switch (o.common.format) {
    case Format::table:
      render_table(file, kinds, o.kind, rows, *out);
      if (gated) fmt::print(out->file(), "\n{}", gates_table(results));
      break;
    case Format::csv: render_delimited(kinds, o.kind, rows, ',', *out); break;
    case Format::tsv: render_delimited(kinds, o.kind, rows, '\t', *out); break;
    case Format::trace:
    case Format::compact: break;  // not offered by this command
    case Format::json: render_json(file, kinds, o.kind, rows, quantiles, gated, *out); break;
  }
  if (!out->close()) return kInput;
  return cut_off || any_tripped(results) ? kCheckFailed : kOk;
}

}  // namespace

void setup_markers(CLI::App& app) {
  auto opts = std::make_shared<MarkersCommandOptions>();
  CLI::App* cmd = app.add_subcommand("markers", "Marker kinds and their units; with --kind, stats per unit");
  add_common_options(*cmd, opts->common, {"table", "csv", "tsv", "json"});
  cmd->add_option("--kind", opts->kind, "One row per unit of this marker kind, with its range stats")
      ->option_text("KIND");
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
