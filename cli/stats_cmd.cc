// jqtrace stats FILE: load → scope → compute_stats → render (table, csv, tsv, json).
#include <fmt/core.h>

#include "baseline.h"
#include "commands.h"
#include "common.h"
#include "gates.h"
#include "load.h"
#include "markers.h"
#include "numbers.h"
#include "render.h"
#include "scope_options.h"
#include "grouping.h"
#include "stats.h"

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

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

void render_table(const RangeStats& s, const std::string& file, const Scope& scope, const Checks& checks,
                  Output& out) {
  Palette p{out.color()};
  bool utf8 = utf8_locale();
  fmt::print(out.file(), "{}{}{}: {}, {} lane{}, {}{} .. {} us ({} us)\n", p.bold(), file, p.reset(),
             s.jobque ? "jobque trace" : "trace", s.lanes, s.lanes == 1 ? "" : "s", scope_prefix(scope),
             us_fixed(s.range.lo), us_fixed(s.range.hi), us_fixed(s.range.length()));
  std::string head = fmt::format("events {}  busy {} us", s.events, us_fixed(s.busy_ns));
  if (s.jobque) head += fmt::format("  wait {} us", us_fixed(s.wait_ns));
  head += fmt::format("  idle {}  parallelism {:.2f}", pct(s.idle_pct), s.parallelism);
  if (s.jobque) head += fmt::format("  publishes {}", s.publishes);
  fmt::print(out.file(), "{}\n\n", head);

  TextTable groups;
  std::vector<std::string> header = {group_by_name(s.by)};
  if (s.jobque) header.push_back("busy_us");
  else header.insert(header.end(), {"total_us", "self_us"});
  header.insert(header.end(), {"share", "", "events"});
  header.insert(header.end(), kDistributionTableHeader.begin(), kDistributionTableHeader.end());
  groups.row(header);
  for (const GroupStats& g : s.groups) {
    std::vector<std::string> row = {g.name};
    if (s.jobque) row.push_back(us_fixed(g.busy_ns));
    else row.insert(row.end(), {us_fixed(g.total_ns), us_fixed(g.self_ns)});
    std::string bar = share_bar(g.share_pct, 20, utf8);
    if (p.on && !ansi_color(g.color).empty()) bar = ansi_color(g.color) + bar + std::string(p.reset());
    bar += std::string(20 - display_width(share_bar(g.share_pct, 20, utf8)), ' ');
    row.insert(row.end(), {pct(g.share_pct), bar, std::to_string(g.events)});
    auto cells = distribution_cells(g.dur);
    row.insert(row.end(), cells.begin(), cells.end());
    groups.row(row);
  }
  fmt::print(out.file(), "{}", groups.str());

  for (const GroupStats& g : s.groups) {
    if (g.hist.empty()) continue;
    TextTable hist;
    hist.row({"hist " + g.name, "lo_us", "hi_us", "count"});
    for (const HistBucket& b : g.hist) hist.row({"", us_fixed(b.lo_ns), us_fixed(b.hi_ns), std::to_string(b.count)});
    fmt::print(out.file(), "\n{}", hist.str());
  }

  TextTable lanes(2);
  lanes.row({"lane", "name", "busy_us", "idle"});
  for (const LaneStats& l : s.lanes_detail) lanes.row({l.lane, l.name, us_fixed(l.busy_ns), pct(l.idle_pct)});
  fmt::print(out.file(), "\n{}", lanes.str());
  if (checks.gated) fmt::print(out.file(), "\n{}", gates_table(checks.gates));
  if (checks.baseline) fmt::print(out.file(), "\n{}", baseline_table(checks.shares));
}

void render_delimited(const RangeStats& s, bool hist, char sep, Output& out) {
  if (hist) {
    fmt::print(out.file(), "{}", delimited_row({"group", "lo_us", "hi_us", "count"}, sep));
    for (const GroupStats& g : s.groups)
      for (const HistBucket& b : g.hist)
        fmt::print(out.file(), "{}",
                   delimited_row({g.name, us_fixed(b.lo_ns), us_fixed(b.hi_ns), std::to_string(b.count)}, sep));
    return;
  }
  std::vector<std::string> header = {"group"};
  if (s.jobque) header.insert(header.end(), {"color", "busy_us"});
  else header.insert(header.end(), {"total_us", "self_us"});
  header.insert(header.end(), {"share_pct", "events"});
  header.insert(header.end(), kDistributionFieldHeader.begin(), kDistributionFieldHeader.end());
  fmt::print(out.file(), "{}", delimited_row(header, sep));
  for (const GroupStats& g : s.groups) {
    std::vector<std::string> row = {g.name};
    if (s.jobque) row.insert(row.end(), {g.color, us_fixed(g.busy_ns)});
    else row.insert(row.end(), {us_fixed(g.total_ns), us_fixed(g.self_ns)});
    row.insert(row.end(), {fixed3(g.share_pct), std::to_string(g.events)});
    auto fields = distribution_fields(g.dur);
    row.insert(row.end(), fields.begin(), fields.end());
    fmt::print(out.file(), "{}", delimited_row(row, sep));
  }
}

void render_json(const RangeStats& s, const std::string& file, const Scope& scope, bool hist,
                 QuantileMethod quantiles, const Checks& checks, Output& out) {
  JsonDocument doc;
  auto& w = doc.w();
  w.StartObject();
  doc.field("schema", "jqtrace/stats/1");
  doc.field("file", file);
  json_scope(doc, scope);
  doc.field("quantiles", quantile_method_name(quantiles));
  doc.field("jobque", s.jobque);
  doc.key("range_us");
  w.StartArray();
  char buf[48];
  format_ns_as_us(s.range.lo, buf, sizeof buf);
  doc.raw(buf);
  format_ns_as_us(s.range.hi, buf, sizeof buf);
  doc.raw(buf);
  w.EndArray();
  doc.us("span_us", s.range.length());
  doc.field("lanes", s.lanes);
  json_range_totals(doc, s);
  doc.field("by", group_by_name(s.by));
  doc.key("groups");
  w.StartArray();
  for (const GroupStats& g : s.groups) {
    w.StartObject();
    doc.field("name", g.name);
    doc.key("color");
    if (g.color.empty()) w.Null();
    else doc.string(g.color);
    doc.us("busy_us", g.busy_ns);
    doc.number("share_pct", g.share_pct);
    doc.field("events", g.events);
    json_distribution(doc, "dur_us", g.dur);
    if (!s.jobque) {
      doc.us("total_us", g.total_ns);
      doc.us("self_us", g.self_ns);
    }
    if (hist) {
      doc.key("hist");
      w.StartArray();
      for (const HistBucket& b : g.hist) {
        w.StartObject();
        doc.us("lo_us", b.lo_ns);
        doc.us("hi_us", b.hi_ns);
        doc.field("count", b.count);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  doc.key("lanes_detail");
  w.StartArray();
  for (const LaneStats& l : s.lanes_detail) {
    w.StartObject();
    doc.field("lane", l.lane);
    doc.field("name", l.name);
    doc.us("busy_us", l.busy_ns);
    doc.number("idle_pct", l.idle_pct);
    w.EndObject();
  }
  w.EndArray();
  if (checks.gated) json_gates(doc, checks.gates);
  if (checks.baseline) json_baseline(doc, checks.shares, *checks.baseline);
  w.EndObject();
  fmt::print(out.file(), "{}", doc.str());
}

/// Evaluates the gates and the baseline comparison; kOk or the exit status of a problem.
int run_checks(const StatsCommandOptions& o, const std::vector<GateSource>& gates, const Trace& trace,
               const Scope& scope, const RangeStats& stats, const StatsOptions& options, Checks* checks) {
  if (gates.empty() && !o.baseline.any()) return kOk;
  if (!complete_enough_to_check(trace, o.file, o.gates)) {
    checks->cut_off = true;
    return kOk;
  }
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
  if (!parse_gate_options(o.gates, &gates)) return kUsage;
  Trace& trace = trace_for_process();
  if (int status = load_for_analysis(o.file, o.common, &trace)) return status;
  Scope scope;
  if (!resolve_scope_options(o.scope, trace, o.common, &scope)) return kUsage;
  StatsOptions options;
  if (!choose_grouping(o.by, trace, &options.by)) return kUsage;
  options.hist = o.hist;
  options.threads = worker_threads(o.common);
  options.quantiles = quantile_method(o.quantiles);
  SpanIndex index(trace);
  RangeStats stats = compute_stats(trace, index, scope.range, options);
  Checks checks;
  if (int status = run_checks(o, gates, trace, scope, stats, options, &checks)) return status;
  auto out = Output::open(o.common);
  if (!out) return kInput;  // cannot write: an input or output error
  std::string file = display_name(o.file);
  switch (o.common.format) {
    case Format::table: render_table(stats, file, scope, checks, *out); break;
    case Format::csv: render_delimited(stats, o.hist, ',', *out); break;
    case Format::tsv: render_delimited(stats, o.hist, '\t', *out); break;
    case Format::trace:
    case Format::compact: break;  // not offered by this command
    case Format::json: render_json(stats, file, scope, o.hist, options.quantiles, checks, *out); break;
  }
  if (!out->close()) return kInput;
  return checks.failed() ? kCheckFailed : kOk;
}

}  // namespace

void setup_stats(CLI::App& app) {
  auto opts = std::make_shared<StatsCommandOptions>();
  CLI::App* cmd = app.add_subcommand("stats", "Range stats: busy, wait, idle, parallelism, per group and lane");
  add_common_options(*cmd, opts->common, {"table", "csv", "tsv", "json"});
  add_scope_options(*cmd, opts->scope);
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
