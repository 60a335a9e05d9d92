// jqtrace gaps FILE: load → scope → compute_gaps → render (old scripts' text, csv, tsv, json).
#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "gaps.h"
#include "load.h"
#include "numbers.h"
#include "render.h"
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

/// Microseconds with the old scripts' fixed precision.
std::string us1(double us, int width = 0) { return fmt::format("{:{}.1f}", us, width); }

void render_text(const GapsReport& g, Output& out) {
  std::FILE* f = out.file();
  fmt::print(f, "chains={} wakes={} (wake dur p50={}us)\n", g.chains, g.wakes, us1(g.wake_dur_us.p50));
  for (const ChainClass& c : g.classes) {
    fmt::print(f, "\n== {}  n={}  chunks/chain={}\n", c.name, c.n, c.chunks_per_chain);
    std::string claim = c.first_claim_us.count
                            ? fmt::format("p50={} p95={}", us1(c.first_claim_us.p50), us1(c.first_claim_us.p95))
                            : "none";
    fmt::print(f, "  wall/chain us: p50={} p95={}   publish: p50={}   first-worker-claim after pub: {}\n",
               us1(c.wall_us.p50), us1(c.wall_us.p95), us1(c.publish_us.p50), claim);
    for (const StageMetrics& s : c.stages) {
      std::string gap =
          s.gap_from_prev_us.count ? fmt::format("  gap-from-prev p50={}", us1(s.gap_from_prev_us.p50, 5)) : "";
      fmt::print(f, "  stage {}: span p50={}  busy-sum p50={}  eff-par p50={:5.2f}  lanes p50={:4.1f}  last-chunk p50={}{}\n",
                 s.stage, us1(s.span_us.p50, 7), us1(s.busy_us.p50, 7), s.eff_par.p50, s.lanes.p50,
                 us1(s.last_chunk_us.p50, 5), gap);
    }
  }
  if (!g.tail.empty()) fmt::print(f, "\n");
  for (const TailMetrics& t : g.tail)
    fmt::print(f,
               "{} stage{}: n={} span p50={}us  lanes p50={:4.0f}  idle p50={:4.1f}%  tail(median-lane-done -> "
               "last-done) p50={:4.1f}% of span\n",
               t.name, t.stage, t.n, us1(t.span_us.p50, 7), t.lanes.p50, t.idle_pct.p50, t.tail_pct.p50);
  const PublishMetrics& p = g.publish;
  char fat[48];
  format_ns_as_us(p.fat_ns, fat, sizeof fat);
  fmt::print(f, "\npublishes={}  dur>{}us={}  dur p50={:.2f}  max={}us\n", p.count, fat, p.fat_count, p.dur_us.p50,
             us1(p.dur_us.max));
  for (const FatPublish& fp : p.fat)
    fmt::print(f, "  fat publish: t={:.2f}ms dur={}us stages={} chunks={} chain={}\n",
               static_cast<double>(fp.ts_ns) / 1000.0 / 1000.0, us1(static_cast<double>(fp.dur_ns) / 1000.0), fp.stages,
               fp.chunks, fp.chain);
  if (p.post_cls_gap_us.count) {
    fmt::print(f, "\npost-cls gaps: n={} p50={}us max={}us\n", p.post_cls_gap_us.count, us1(p.post_cls_gap_us.p50),
               us1(p.post_cls_gap_us.max));
    fmt::print(f, "  next-publish dur after gap: p50={}us max={}us\n", us1(p.next_publish_dur_us.p50),
               us1(p.next_publish_dur_us.max));
  }
  fmt::print(f, "\nlane idle gaps (between busy spans):\n");
  for (const LaneGapMetrics& l : g.lanes)
    fmt::print(f, "  {} {}: gaps={} idle={}us p50={} p90={} p99={} max={}\n", l.lane, l.name, l.gaps,
               us1(static_cast<double>(l.idle_ns) / 1000.0), us1(l.gap_us.p50), us1(l.gap_us.p90), us1(l.gap_us.p99),
               us1(l.gap_us.max));
}

std::string us3(double us) { return fixed3(us); }
std::string opt_us(const Distribution& d, double v) { return d.count ? us3(v) : ""; }

void render_delimited(const GapsReport& g, char sep, Output& out) {
  std::vector<std::string> header = {"key",           "name",           "n",           "chunks_per_chain",
                                     "wall_p50_us",   "wall_p95_us",    "publish_p50_us", "first_claim_p50_us",
                                     "first_claim_p95_us", "stage",     "span_p50_us", "busy_p50_us",
                                     "eff_par_p50",   "lanes_p50",      "last_chunk_p50_us", "gap_from_prev_p50_us",
                                     "tail_n",        "tail_span_p50_us", "tail_idle_pct_p50", "tail_pct_p50"};
  fmt::print(out.file(), "{}", delimited_row(header, sep));
  for (const ChainClass& c : g.classes)
    for (const StageMetrics& s : c.stages) {
      const TailMetrics* tail = nullptr;
      for (const TailMetrics& t : g.tail)
        if (t.key == c.key && t.stage == s.stage) tail = &t;
      fmt::print(out.file(), "{}",
                 delimited_row({c.key, c.name, std::to_string(c.n), std::to_string(c.chunks_per_chain),
                                us3(c.wall_us.p50), us3(c.wall_us.p95), us3(c.publish_us.p50),
                                opt_us(c.first_claim_us, c.first_claim_us.p50),
                                opt_us(c.first_claim_us, c.first_claim_us.p95), std::to_string(s.stage),
                                us3(s.span_us.p50), us3(s.busy_us.p50), fixed3(s.eff_par.p50), fixed3(s.lanes.p50),
                                us3(s.last_chunk_us.p50), opt_us(s.gap_from_prev_us, s.gap_from_prev_us.p50),
                                tail ? std::to_string(tail->n) : "0", tail ? us3(tail->span_us.p50) : "",
                                tail ? fixed3(tail->idle_pct.p50) : "", tail ? fixed3(tail->tail_pct.p50) : ""},
                               sep));
    }
}

/// gaps' distributions are in µs or plain numbers already: written as they are.
void json_plain(JsonDocument& doc, std::string_view key, const Distribution& d) {
  json_distribution(doc, key, d, Units::plain);
}

void render_json(const GapsReport& g, const std::string& file, const Scope& scope, QuantileMethod quantiles,
                 Output& out) {
  JsonDocument doc;
  auto& w = doc.w();
  w.StartObject();
  doc.field("schema", "jqtrace/gaps/1");
  doc.field("file", file);
  json_scope(doc, scope);
  doc.field("quantiles", quantile_method_name(quantiles));
  doc.field("by", g.by == ClassBy::nstages ? "nstages" : "category");
  doc.field("chains", g.chains);
  doc.field("wakes", g.wakes);
  json_plain(doc, "wake_dur_us", g.wake_dur_us);
  doc.key("classes");
  w.StartArray();
  for (const ChainClass& c : g.classes) {
    w.StartObject();
    doc.field("key", c.key);
    doc.field("name", c.name);
    doc.field("n", c.n);
    doc.key("chunks_per_chain");
    w.Int64(c.chunks_per_chain);
    json_plain(doc, "wall_us", c.wall_us);
    json_plain(doc, "publish_us", c.publish_us);
    json_plain(doc, "first_claim_us", c.first_claim_us);
    doc.key("stages");
    w.StartArray();
    for (const StageMetrics& s : c.stages) {
      w.StartObject();
      doc.key("stage");
      w.Int64(s.stage);
      json_plain(doc, "span_us", s.span_us);
      json_plain(doc, "busy_us", s.busy_us);
      json_plain(doc, "eff_par", s.eff_par);
      json_plain(doc, "lanes", s.lanes);
      json_plain(doc, "last_chunk_us", s.last_chunk_us);
      if (s.gap_from_prev_us.count) json_plain(doc, "gap_from_prev_us", s.gap_from_prev_us);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  doc.key("tail");
  w.StartArray();
  for (const TailMetrics& t : g.tail) {
    w.StartObject();
    doc.field("key", t.key);
    doc.field("name", t.name);
    doc.key("stage");
    w.Int64(t.stage);
    doc.field("n", t.n);
    json_plain(doc, "span_us", t.span_us);
    json_plain(doc, "lanes", t.lanes);
    json_plain(doc, "idle_pct", t.idle_pct);
    json_plain(doc, "tail_pct", t.tail_pct);
    w.EndObject();
  }
  w.EndArray();
  const PublishMetrics& p = g.publish;
  doc.key("publish");
  w.StartObject();
  doc.field("count", p.count);
  doc.us("fat_us", p.fat_ns);
  doc.field("fat_count", p.fat_count);
  json_plain(doc, "dur_us", p.dur_us);
  doc.key("fat");
  w.StartArray();
  for (const FatPublish& fp : p.fat) {
    w.StartObject();
    doc.us("ts_us", fp.ts_ns);
    doc.us("dur_us", fp.dur_ns);
    doc.key("stages");
    w.Int64(fp.stages);
    doc.key("chunks");
    w.Int64(fp.chunks);
    doc.key("chain");
    w.Int64(fp.chain);
    w.EndObject();
  }
  w.EndArray();
  json_plain(doc, "post_cls_gap_us", p.post_cls_gap_us);
  json_plain(doc, "next_publish_dur_us", p.next_publish_dur_us);
  w.EndObject();
  doc.key("lanes");
  w.StartArray();
  for (const LaneGapMetrics& l : g.lanes) {
    w.StartObject();
    doc.field("lane", l.lane);
    doc.field("name", l.name);
    doc.field("gaps", l.gaps);
    doc.us("idle_us", l.idle_ns);
    json_plain(doc, "gap_us", l.gap_us);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  fmt::print(out.file(), "{}", doc.str());
}

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
  auto out = Output::open(o.common);
  if (!out) return kInput;  // cannot write: an input or output error
  switch (o.common.format) {
    case Format::csv: render_delimited(report, ',', *out); break;
    case Format::tsv: render_delimited(report, '\t', *out); break;
    case Format::json: render_json(report, display_name(o.file), scope, options.quantiles, *out); break;
    default: render_text(report, *out); break;
  }
  return out->close() ? kOk : kInput;
}

}  // namespace

void setup_gaps(CLI::App& app) {
  auto opts = std::make_shared<GapsCommandOptions>();
  CLI::App* cmd = app.add_subcommand("gaps", "Chain, tail, publish and lane-gap metrics (the old trace_* scripts)");
  add_common_options(*cmd, opts->common, {"table", "csv", "tsv", "json"});
  add_scope_options(*cmd, opts->scope);
  cmd->add_option("--by", opts->by, "Classes of chains: nstages or category (default: category if chains are tagged)")
      ->check(CLI::IsMember({"nstages", "category"}))
      ->option_text("CLASSES");
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::exclusive);
  cmd->add_option("--fat-us", opts->fat_us, "Publishes longer than this are fat (default 5)")->option_text("US");
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace gaps trace.json.gz\n  jqtrace gaps --by nstages --marker token 5..9 trace.json\n  jqtrace gaps --format json trace.json | jq '.classes[].name'");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "gaps")) throw CommandDone{kUsage};
    throw CommandDone{run_gaps(*opts)};
  });
}

}  // namespace jqtrace::cli
