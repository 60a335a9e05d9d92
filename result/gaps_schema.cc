#include "gaps_schema.h"

#include <cmath>

#include <fmt/core.h>

#include "common_fields.h"

namespace jqtrace::result {
namespace {

/// A distribution of plain numbers (eff_par, lanes, percentages).
Column dist(const char* key) { return Column(key, Kind::distribution).plain_numbers(); }
/// A distribution of times: ns, written as exact µs under the same plain headers.
Column times(const char* key) { return Column(key, Kind::distribution).plain_headed_ns(); }

Table classes_table(const GapsReport& g) {
  Table t("classes", "chain classes");
  t.add_column(Column("key", Kind::text));
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("n", Kind::integer));
  t.add_column(Column("chunks_per_chain", Kind::integer).titled("chunks/chain"));
  t.add_column(times("wall_us").titled("wall_us"));
  t.add_column(times("publish_us").titled("publish_us"));
  t.add_column(times("first_claim_us").titled("first_claim_us"));
  t.add_column(Column("first_claim_min_us", Kind::us).titled("first_claim min"));
  for (const ChainClass& c : g.classes) {
    bool claimed = std::isfinite(c.first_claim_min_ns);
    t.rows.push_back({c.key, c.name, count(c.n), c.chunks_per_chain, c.wall_ns, c.publish_ns, c.first_claim_ns,
                      claimed ? Value{c.first_claim_min_ns} : Value{}});
  }
  return t;
}

/// Every class's stages in one table (CSV and TSV write it), nested under their class in JSON.
Table stages_table(const GapsReport& g) {
  Table t("stages", "stages");
  t.nested = true;
  t.add_column(Column("class", Kind::text));
  t.add_column(Column("stage", Kind::integer).identifying());
  t.add_column(times("span_us").titled("span_us"));
  t.add_column(times("busy_us").titled("busy_us"));
  t.add_column(dist("eff_par").titled("eff_par"));
  t.add_column(dist("lanes").titled("lanes"));
  t.add_column(times("last_chunk_us").titled("last_chunk_us"));
  t.add_column(times("gap_from_prev_us").titled("gap_from_prev_us"));
  for (std::size_t k = 0; k < g.classes.size(); ++k)
    for (const StageMetrics& s : g.classes[k].stages) {
      t.rows.push_back({g.classes[k].name, s.stage, s.span_ns, s.busy_ns, s.eff_par, s.lanes, s.last_chunk_ns,
                        s.gap_from_prev_ns});
      t.parent.push_back(k);
    }
  return t;
}

Table tail_table(const GapsReport& g) {
  Table t("tail", "stage tails (median lane done -> last lane done)");
  t.add_column(Column("key", Kind::text));
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("stage", Kind::integer).identifying());
  t.add_column(Column("n", Kind::integer));
  t.add_column(times("span_us").titled("span_us"));
  t.add_column(dist("lanes").titled("lanes"));
  t.add_column(dist("idle_pct").titled("idle_pct"));
  t.add_column(dist("tail_pct").titled("tail_pct"));
  for (const TailMetrics& m : g.tail)
    t.rows.push_back({m.key, m.name, m.stage, count(m.n), m.span_ns, m.lanes, m.idle_pct, m.tail_pct});
  return t;
}

void add_publish(Document& doc, const PublishMetrics& p) {
  doc.add(Field("count", Kind::integer, count(p.count)).in("publish").labelled("publishes"));
  doc.add(Field("fat_us", Kind::us, ns(p.fat_ns)).in("publish"));
  doc.add(Field("fat_count", Kind::integer, count(p.fat_count)).in("publish").labelled("fat publishes"));
  doc.add(Field("dur_us", Kind::distribution, p.durations).in("publish").plain_headed_ns());
  Table fat("fat");
  fat.group = "publish";
  fat.title = p.fat.size() < p.fat_count
                  ? fmt::format("fat publishes (dur > {} us; the {} longest of {}, longest first)", us_text(p.fat_ns),
                                p.fat.size(), p.fat_count)
                  : fmt::format("fat publishes (dur > {} us; longest first)", us_text(p.fat_ns));
  fat.add_column(Column("ts_us", Kind::us));
  fat.add_column(Column("dur_us", Kind::us));
  fat.add_column(Column("stages", Kind::integer));
  fat.add_column(Column("chunks", Kind::integer));
  fat.add_column(Column("chain", Kind::integer));
  for (const FatPublish& f : p.fat) fat.rows.push_back({ns(f.ts_ns), ns(f.dur_ns), f.stages, f.chunks, f.chain});
  doc.add(std::move(fat));
  doc.add(Field("post_cls_gap_us", Kind::distribution, p.post_cls_gap_ns).in("publish").plain_headed_ns());
  doc.add(Field("next_publish_dur_us", Kind::distribution, p.next_publish_dur_ns).in("publish").plain_headed_ns());
}

/// The report's single distributions, one row each, for people (JSON has them as keys).
Table distributions_table(const GapsReport& g) {
  Table t("distributions");
  t.in_json = false;
  t.add_column(Column("of", Kind::text).titled("us"));
  t.add_column(times("value").titled("dist"));
  const PublishMetrics& p = g.publish;
  t.rows.push_back({std::string("wake dur"), g.wake_dur_ns});
  t.rows.push_back({std::string("publish dur"), p.durations});
  t.rows.push_back({std::string("post-cls gap"), p.post_cls_gap_ns});
  t.rows.push_back({std::string("next publish dur after gap"), p.next_publish_dur_ns});
  return t;
}

Table lanes_table(const GapsReport& g) {
  Table t("lanes", "lane idle gaps (between busy spans)");
  t.add_column(Column("lane", Kind::text));
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("gaps", Kind::integer));
  t.add_column(Column("idle_us", Kind::us));
  t.add_column(times("gap_us").titled("gap_us"));
  for (const LaneGapMetrics& l : g.lanes) t.rows.push_back({l.lane, l.name, count(l.gaps), ns(l.idle_ns), l.gap_ns});
  return t;
}

}  // namespace

Document gaps_document(const GapsReport& g, const std::string& file, const Scope& scope, QuantileMethod quantiles,
                       const TraceFacts& trace) {
  TraceFacts facts = trace;
  facts.attribution = g.attribution;
  Document doc;
  doc.schema = "jqtrace/gaps/1";
  doc.heading = fmt::format("{}: {}chains by {} ({})", file, scope_prefix(scope),
                            g.by == ClassBy::nstages ? "nstages" : "category", trace_facts_text(facts));
  doc.add(Field("file", Kind::text, file));
  add_trace_fact_fields(doc, facts);
  add_scope_fields(doc, scope);
  doc.add(Field("quantiles", Kind::text, std::string(quantile_method_name(quantiles))));
  doc.add(Field("by", Kind::text, std::string(g.by == ClassBy::nstages ? "nstages" : "category")));
  doc.add(Field("chains", Kind::integer, count(g.chains)).labelled("chains"));
  doc.add(Field("wakes", Kind::integer, count(g.wakes)).labelled("wakes"));
  doc.add(Field("wake_dur_us", Kind::distribution, g.wake_dur_ns).plain_headed_ns());
  doc.add(classes_table(g));
  doc.add(stages_table(g));
  doc.add(tail_table(g));
  add_publish(doc, g.publish);
  doc.add(lanes_table(g));
  doc.add(distributions_table(g));
  add_stopped_lanes(doc, facts);
  doc.delimited_table = 1;  // CSV/TSV: one row a class and stage
  return doc;
}

}  // namespace jqtrace::result
