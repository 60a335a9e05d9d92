// jqtrace phases LOG...: read phase attribution lines → per tag and phase → render, gates.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "gates.h"
#include "load.h"
#include "phases.h"
#include "render.h"
#include "scope_options.h"
#include "suggest.h"

namespace jqtrace::cli {
namespace {

struct PhasesCommandOptions {
  CommonOptions common;
  std::string tag;
  std::string quantiles;
  GateOptions gates;
  std::vector<std::string> logs;
};

/// Feeds one log (or stdin) to log; kOk, or kInput after printing where it went wrong.
int read_log(const std::string& path, PhaseLog* log) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) {
      print_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
      return kInput;
    }
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string line;
  PhaseLogError error;
  for (std::size_t number = 1; std::getline(in, line); ++number)
    if (!log->add_line(line, number, &error)) {
      print_error(fmt::format("{}:{}:{}: {}", display_name(path), error.line, error.column, error.message));
      return kInput;
    }
  if (in.bad()) {
    print_error(fmt::format("{}: read error: {}", display_name(path), std::strerror(errno)));
    return kInput;
  }
  return kOk;
}

std::string ms3(double v) { return fmt::format("{:.3f}", v); }

void render_table(const std::vector<TagStats>& tags, const std::vector<GateResult>* gates, Output& out) {
  Palette p{out.color()};
  for (std::size_t k = 0; k < tags.size(); ++k) {
    const TagStats& t = tags[k];
    fmt::print(out.file(), "{}{}[{}]{}  bursts {}  rounds {}  total {} ms\n\n", k ? "\n" : "", p.bold(), t.tag,
               p.reset(), t.bursts, t.rounds, ms3(t.total_ms));
    TextTable table;
    table.row({"phase", "ms", "share", "per-round n", "mean", "p50", "p90", "max"});
    for (const PhaseStats& ph : t.phases) {
      const Distribution& d = ph.per_round_ms;
      // A sub-phase is indented under its parent; its share is of the parent.
      table.row({ph.parent.empty() ? ph.name : "  " + ph.name + " (of " + ph.parent + ")", ms3(ph.ms),
                 fmt::format("{:.1f}%", ph.share_pct), std::to_string(d.count), ms3(d.mean), ms3(d.p50),
                 ms3(d.p90), ms3(d.max)});
    }
    fmt::print(out.file(), "{}", table.str());
  }
  if (gates) fmt::print(out.file(), "\n{}", gates_table(*gates));
}

void render_delimited(const std::vector<TagStats>& tags, char sep, Output& out) {
  fmt::print(out.file(), "{}",
             delimited_row({"tag", "phase", "parent", "ms", "share_pct", "per_round_count", "per_round_mean_ms",
                            "per_round_p50_ms", "per_round_p90_ms", "per_round_p95_ms", "per_round_p99_ms",
                            "per_round_max_ms"},
                           sep));
  for (const TagStats& t : tags)
    for (const PhaseStats& ph : t.phases) {
      const Distribution& d = ph.per_round_ms;
      fmt::print(out.file(), "{}",
                 delimited_row({t.tag, ph.name, ph.parent, fixed3(ph.ms), fixed3(ph.share_pct),
                                std::to_string(d.count), fixed3(d.mean), fixed3(d.p50), fixed3(d.p90),
                                fixed3(d.p95), fixed3(d.p99), fixed3(d.max)},
                               sep));
    }
}

void render_json(const std::vector<TagStats>& tags, QuantileMethod quantiles, const std::vector<GateResult>* gates,
                 Output& out) {
  JsonDocument doc;
  auto& w = doc.w();
  w.StartObject();
  doc.field("schema", "jqtrace/phases/1");
  doc.field("quantiles", quantile_method_name(quantiles));
  doc.key("tags");
  w.StartArray();
  for (const TagStats& t : tags) {
    w.StartObject();
    doc.field("tag", t.tag);
    doc.field("bursts", t.bursts);
    doc.key("rounds");
    w.Int64(t.rounds);
    doc.number("total_ms", t.total_ms);
    doc.key("phases");
    w.StartArray();
    for (const PhaseStats& ph : t.phases) {
      w.StartObject();
      doc.field("name", ph.name);
      doc.key("parent");
      if (ph.parent.empty()) w.Null();
      else doc.string(ph.parent);
      doc.number("ms", ph.ms);
      doc.number("share_pct", ph.share_pct);
      json_distribution(doc, "per_round_ms", ph.per_round_ms, Units::plain);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  if (gates) json_gates(doc, *gates);
  w.EndObject();
  fmt::print(out.file(), "{}", doc.str());
}

int run_phases(const PhasesCommandOptions& o) {
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, &gates)) return kUsage;
  PhaseLog log;
  for (const std::string& path : o.logs)
    if (int status = read_log(path, &log)) return status;
  if (!o.tag.empty() && !log.has_tag(o.tag)) {
    std::string near = closest_match(o.tag, log.tags());
    print_error(fmt::format("no '[{}] rounds=' lines{}", o.tag, near.empty() ? "" : "; did you mean '" + near + "'?"));
    return kUsage;
  }
  std::vector<TagStats> tags = log.summarize(quantile_method(o.quantiles), o.tag);
  if (tags.empty()) print_warning(o.common, "no phase lines ('[TAG] rounds=...') in the input");
  std::vector<GateResult> results;
  if (!gates.empty() && !evaluate_gates(gates, phase_metrics(tags), &results)) return kUsage;
  const std::vector<GateResult>* gated = gates.empty() ? nullptr : &results;
  auto out = Output::open(o.common);
  if (!out) return kInput;  // cannot write: an input or output error
  switch (o.common.format) {
    case Format::table: render_table(tags, gated, *out); break;
    case Format::csv: render_delimited(tags, ',', *out); break;
    case Format::tsv: render_delimited(tags, '\t', *out); break;
    case Format::trace:
    case Format::compact: break;  // not offered by this command
    case Format::json: render_json(tags, quantile_method(o.quantiles), gated, *out); break;
  }
  if (!out->close()) return kInput;
  return any_tripped(results) ? kCheckFailed : kOk;
}

}  // namespace

void setup_phases(CLI::App& app) {
  auto opts = std::make_shared<PhasesCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("phases", "Per-phase totals, shares and per-round times from '[TAG] rounds=...' log lines");
  add_common_options(*cmd, opts->common, {"table", "csv", "tsv", "json"});
  cmd->add_option("--tag", opts->tag, "Only lines with this tag")->option_text("TAG");
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  add_gate_options(*cmd, opts->gates, false);
  cmd->add_option("LOG", opts->logs, "Log files (- or none: standard input); other lines are ignored");
  cmd->footer("Examples:\n  jqtrace phases --tag glm5-phase run.log\n  jqtrace phases --fail-if 'share(verify) > 70' run.log");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->logs, "phases")) throw CommandDone{kUsage};
    throw CommandDone{run_phases(*opts)};
  });
}

}  // namespace jqtrace::cli
