// jqtrace diff A B: load both → same scope and grouping → stats side by side → render.
#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "diff.h"
#include "grouping.h"
#include "load.h"
#include "render.h"
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
  return kOk;
}

std::string pct(double v) { return fmt::format("{:.1f}%", v); }
std::string pp(double v) { return fmt::format("{:+.1f}", std::abs(v) < 0.05 ? 0.0 : v); }
std::string ratio(const GroupDiff& g) { return g.has_ratio ? fmt::format("{:.3f}", g.busy_ratio) : "-"; }
std::string ratio_of(double b, double a) { return a > 0 ? fmt::format("{:.3f}", b / a) : "-"; }

void render_table(const Side& a, const Side& b, const TraceDiff& d, Output& out) {
  Palette p{out.color()};
  auto scoped = [](const Side& s) {
    std::string prefix = scope_prefix(s.scope);
    return prefix.empty() ? s.name : fmt::format("{} ({})", s.name, prefix.substr(0, prefix.size() - 2));
  };
  fmt::print(out.file(), "{}A{} {}\n{}B{} {}\n\n", p.bold(), p.reset(), scoped(a), p.bold(), p.reset(), scoped(b));
  TextTable totals;
  totals.row({"", "A", "B", "B-A", "B/A"});
  const RangeStats &sa = a.stats, &sb = b.stats;
  totals.row({"span_us", us_fixed(sa.range.length()), us_fixed(sb.range.length()), "",
              ratio_of(static_cast<double>(sb.range.length()), static_cast<double>(sa.range.length()))});
  totals.row({"busy_us", us_fixed(sa.busy_ns), us_fixed(sb.busy_ns), "",
              ratio_of(static_cast<double>(sb.busy_ns), static_cast<double>(sa.busy_ns))});
  totals.row({"idle", pct(sa.idle_pct), pct(sb.idle_pct), pp(sb.idle_pct - sa.idle_pct) + " pp", ""});
  totals.row({"parallelism", fmt::format("{:.2f}", sa.parallelism), fmt::format("{:.2f}", sb.parallelism), "",
              ratio_of(sb.parallelism, sa.parallelism)});
  totals.row({"events", std::to_string(sa.events), std::to_string(sb.events), "",
              ratio_of(static_cast<double>(sb.events), static_cast<double>(sa.events))});
  fmt::print(out.file(), "{}", totals.str());

  TextTable groups;
  groups.row({group_by_name(sa.by), "busy_a_us", "busy_b_us", "share_a", "share_b", "delta_pp", "busy_ratio"});
  for (const GroupDiff& g : d.groups)
    groups.row({g.name, us_fixed(g.a.busy_ns), us_fixed(g.b.busy_ns), pct(g.a.share_pct), pct(g.b.share_pct),
                pp(g.share_delta_pp), ratio(g)});
  fmt::print(out.file(), "\n{}", groups.str());

  if (d.kinds.empty()) return;
  TextTable kinds;
  kinds.row({"marker kind", "units_a", "units_b", "unit_p50_a_us", "unit_p50_b_us", "p50_ratio"});
  for (const KindDiff& k : d.kinds)
    kinds.row({k.kind, std::to_string(k.a.units), std::to_string(k.b.units),
               k.a.present ? us_fixed(k.a.unit_p50_ns) : "-", k.b.present ? us_fixed(k.b.unit_p50_ns) : "-",
               k.a.present && k.b.present ? ratio_of(k.b.unit_p50_ns, k.a.unit_p50_ns) : "-"});
  fmt::print(out.file(), "\n{}", kinds.str());
}

void render_delimited(const TraceDiff& d, char sep, Output& out) {
  fmt::print(out.file(), "{}",
             delimited_row({"group", "busy_a_us", "busy_b_us", "share_a_pct", "share_b_pct", "share_delta_pp",
                            "busy_ratio", "events_a", "events_b"},
                           sep));
  for (const GroupDiff& g : d.groups)
    fmt::print(out.file(), "{}",
               delimited_row({g.name, us_fixed(g.a.busy_ns), us_fixed(g.b.busy_ns), fixed3(g.a.share_pct),
                              fixed3(g.b.share_pct), fixed3(g.share_delta_pp), g.has_ratio ? fixed3(g.busy_ratio) : "",
                              std::to_string(g.a.events), std::to_string(g.b.events)},
                             sep));
}

void json_totals(JsonDocument& doc, const char* key, const Side& side) {
  const RangeStats& s = side.stats;
  doc.key(key);
  doc.w().StartObject();
  doc.field("file", side.name);
  json_scope(doc, side.scope);
  doc.us("span_us", s.range.length());
  doc.us("busy_us", s.busy_ns);
  doc.number("idle_pct", s.idle_pct);
  doc.number("parallelism", s.parallelism);
  doc.field("events", s.events);
  doc.field("publishes", s.publishes);
  doc.w().EndObject();
}

void json_group_side(JsonDocument& doc, const char* key, const GroupSide& g) {
  doc.key(key);
  doc.w().StartObject();
  doc.us("busy_us", g.busy_ns);
  doc.number("share_pct", g.share_pct);
  doc.field("events", g.events);
  doc.w().EndObject();
}

void json_kind_side(JsonDocument& doc, const char* key, const KindSide& k) {
  doc.key(key);
  if (!k.present) {
    doc.w().Null();
    return;
  }
  doc.w().StartObject();
  doc.field("units", k.units);
  doc.us("unit_p50_us", k.unit_p50_ns);
  doc.w().EndObject();
}

void render_json(const Side& a, const Side& b, const TraceDiff& d, QuantileMethod quantiles, Output& out) {
  JsonDocument doc;
  auto& w = doc.w();
  w.StartObject();
  doc.field("schema", "jqtrace/diff/1");
  doc.field("by", group_by_name(a.stats.by));
  doc.field("quantiles", quantile_method_name(quantiles));
  json_totals(doc, "a", a);
  json_totals(doc, "b", b);
  doc.key("groups");
  w.StartArray();
  for (const GroupDiff& g : d.groups) {
    w.StartObject();
    doc.field("name", g.name);
    json_group_side(doc, "a", g.a);
    json_group_side(doc, "b", g.b);
    doc.number("share_delta_pp", g.share_delta_pp);
    doc.key("busy_ratio");
    if (g.has_ratio) w.Double(g.busy_ratio);
    else w.Null();
    w.EndObject();
  }
  w.EndArray();
  doc.key("markers");
  w.StartArray();
  for (const KindDiff& k : d.kinds) {
    w.StartObject();
    doc.field("kind", k.kind);
    json_kind_side(doc, "a", k.a);
    json_kind_side(doc, "b", k.b);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  fmt::print(out.file(), "{}", doc.str());
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
  auto out = Output::open(o.common);
  if (!out) return kInput;  // cannot write: an input or output error
  switch (o.common.format) {
    case Format::table: render_table(a, b, d, *out); break;
    case Format::csv: render_delimited(d, ',', *out); break;
    case Format::tsv: render_delimited(d, '\t', *out); break;
    case Format::trace:
    case Format::compact: break;  // not offered by this command
    case Format::json: render_json(a, b, d, quantile_method(o.quantiles), *out); break;
  }
  return out->close() ? kOk : kInput;
}

}  // namespace

void setup_diff(CLI::App& app) {
  auto opts = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand("diff", "Two traces side by side: busy and share per group, idle, units");
  add_common_options(*cmd, opts->common, {"table", "csv", "tsv", "json"});
  add_scope_options(*cmd, opts->scope);
  add_grouping_option(*cmd, opts->by);
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  cmd->add_option("A", opts->a, "The first (reference) trace")->required();
  cmd->add_option("B", opts->b, "The second trace")->required();
  cmd->footer("Examples:\n  jqtrace diff main.trace.json branch.trace.json\n  jqtrace diff --marker token 3 --by name a.json b.json");
  cmd->callback([opts]() { throw CommandDone{run_diff(*opts)}; });
}

}  // namespace jqtrace::cli
