#include "whatif_schema.h"

#include <algorithm>

#include <fmt/core.h>

#include "quantile.h"
#include "text_format.h"

namespace jqtrace::result {
namespace {

/// The change from measured to predicted, in % of measured.
double change_pct(double measured, double predicted) { return percent_of(predicted - measured, measured); }

std::vector<int64_t> sorted_durations(const std::vector<Unit>& units) {
  std::vector<int64_t> d;
  d.reserve(units.size());
  for (const Unit& u : units) d.push_back(u.range.length());
  std::sort(d.begin(), d.end());
  return d;
}

Table kinds_table(const WhatIfResult& r) {
  Table t("kinds", "unit durations, measured and predicted");
  t.add_column(Column("kind", Kind::text));
  t.add_column(Column("units", Kind::integer));
  for (const char* q : {"p50", "p90", "max"}) {
    t.add_column(Column(fmt::format("measured_{}_us", q), Kind::us).titled(fmt::format("{} was", q)));
    t.add_column(Column(fmt::format("predicted_{}_us", q), Kind::us).titled(fmt::format("{} will be", q)));
    t.add_column(Column(fmt::format("{}_change_pct", q), Kind::percent).titled("change").signed_().rank(2));
  }
  t.add_column(Column("slowest", Kind::text).rank(3));
  t.add_column(Column("slowest_predicted_us", Kind::us).titled("it will take").rank(3));
  for (const WhatIfKind& k : r.kinds) {
    if (k.measured.empty() || k.measured.size() != k.predicted.size()) continue;
    std::vector<int64_t> was = sorted_durations(k.measured), will = sorted_durations(k.predicted);
    Row row{k.kind, static_cast<int64_t>(was.size())};
    for (int q : {50, 90, 100}) {
      double a = q == 100 ? static_cast<double>(was.back()) : summary_percentile(was, q, QuantileMethod::inclusive);
      double b = q == 100 ? static_cast<double>(will.back()) : summary_percentile(will, q, QuantileMethod::inclusive);
      row.insert(row.end(), {a, b, change_pct(a, b)});
    }
    std::size_t slowest = 0;
    for (std::size_t i = 1; i < k.measured.size(); ++i)
      if (k.measured[i].range.length() > k.measured[slowest].range.length()) slowest = i;
    bool labelled = units_have_args(k.measured);
    row.emplace_back(unit_name(k.kind, k.measured[slowest], labelled));
    row.emplace_back(k.predicted[slowest].range.length());
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table units_table(const WhatIfResult& r, const std::string& kind) {
  Table t("units", fmt::format("each {}", kind));
  t.add_column(Column("kind", Kind::text).rank(3));
  t.add_column(Column("idx", Kind::integer).titled("unit"));
  t.add_column(Column("arg", Kind::integer));
  t.add_column(Column("measured_us", Kind::us).titled("was"));
  t.add_column(Column("predicted_us", Kind::us).titled("will be"));
  t.add_column(Column("change_pct", Kind::percent).titled("change").signed_());
  for (const WhatIfKind& k : r.kinds) {
    if (k.kind != kind || k.measured.size() != k.predicted.size()) continue;
    for (std::size_t i = 0; i < k.measured.size(); ++i) {
      int64_t a = k.measured[i].range.length(), b = k.predicted[i].range.length();
      t.rows.push_back({k.kind, k.measured[i].index, marker_arg_value(k.measured[i].arg), a, b,
                        change_pct(static_cast<double>(a), static_cast<double>(b))});
    }
  }
  return t;
}

/// Work, span and the floors of each unit (Cilkscale's numbers for a job system).
Table work_span_table(const std::vector<WorkSpan>& rows, const std::string& kind, std::size_t lanes) {
  Table t("work_span", fmt::format("work and span of each {} (P = {} lanes; a unit takes at least max(work/P, span))",
                                   kind, lanes));
  t.add_column(Column("kind", Kind::text).rank(3));
  t.add_column(Column("idx", Kind::integer).titled("unit"));
  t.add_column(Column("arg", Kind::integer).rank(2));
  t.add_column(Column("chains", Kind::integer).rank(2));
  t.add_column(Column("measured_us", Kind::us).titled("took"));
  t.add_column(Column("work_us", Kind::us).titled("work"));
  t.add_column(Column("span_us", Kind::us).titled("span"));
  t.add_column(Column("parallelism", Kind::ratio).places(2));
  t.add_column(Column("floor_us", Kind::us).titled(fmt::format("floor at {}", lanes)));
  t.add_column(Column("floor_2x_us", Kind::us).titled(fmt::format("at {}", 2 * lanes)));
  t.add_column(Column("more_lanes_help", Kind::flag).titled("more lanes help").rank(1));
  for (const WorkSpan& w : rows) {
    // More lanes cannot help a unit whose span is already its floor at P lanes.
    bool span_bound = w.span_ns >= w.floor_ns(lanes);
    t.rows.push_back({kind, w.unit.index, marker_arg_value(w.unit.arg), static_cast<int64_t>(w.chains),
                      w.unit.range.length(), w.work_ns, w.span_ns, w.parallelism(), w.floor_ns(lanes),
                      w.floor_ns(2 * lanes), !span_bound});
  }
  return t;
}

std::string anomalies_text(const ReplayAnomalies& a) {
  std::string text;
  auto add = [&](uint64_t n, const char* what) {
    if (n == 0) return;
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {}", n, what);
  };
  add(a.early_chunks, "chunks started before their stage was ready");
  add(a.nested, "nested spans (kept at their offset)");
  add(a.cycles, "dependencies in a cycle (read as recorded)");
  add(a.republished_chains, "chains published more than once");
  return text;
}

void add_anomaly_fields(Document& doc, const ReplayAnomalies& a) {
  doc.add(Field("early_chunks", Kind::integer, static_cast<int64_t>(a.early_chunks)).in("replay"));
  doc.add(Field("claimed_during_publish", Kind::integer, static_cast<int64_t>(a.claimed_during_publish)).in("replay"));
  doc.add(Field("nested", Kind::integer, static_cast<int64_t>(a.nested)).in("replay"));
  doc.add(Field("cycles", Kind::integer, static_cast<int64_t>(a.cycles)).in("replay"));
  doc.add(Field("republished_chains", Kind::integer, static_cast<int64_t>(a.republished_chains)).in("replay"));
}

/// For people: a row per group, its savings at 25, 50 and 100% side by side.
Table rank_pivot(const WhatIfRank& rank) {
  Table t("rank_by_group", "predicted saving if it cost less (largest first)");
  t.in_json = false;
  t.add_column(Column("group", Kind::text));
  for (int s : {25, 50, 100})
    t.add_column(Column(fmt::format("saving_{}", s), Kind::percent).titled(fmt::format("-{}%: trace", s)));
  if (!rank.unit_kind.empty())
    for (int s : {25, 50, 100})
      t.add_column(Column(fmt::format("unit_saving_{}", s), Kind::percent)
                       .titled(fmt::format("-{}%: median {}", s, rank.unit_kind))
                       .rank(2));
  std::vector<std::string> order;  // groups by their first (largest) row
  for (const RankRow& r : rank.rows)
    if (std::find(order.begin(), order.end(), r.group) == order.end()) order.push_back(r.group);
  for (const std::string& group : order) {
    Row row{group};
    std::vector<Value> units;
    for (int s : {25, 50, 100})
      for (const RankRow& r : rank.rows)
        if (r.group == group && r.speedup_pct == s) {
          row.emplace_back(percent_of(r.saving_ns, rank.measured_ns));
          units.emplace_back(percent_of(r.unit_saving_ns, rank.unit_median_ns));
        }
    if (!rank.unit_kind.empty()) row.insert(row.end(), units.begin(), units.end());
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

Document whatif_rank_document(const WhatIfRank& rank, const ReplayAnomalies& anomalies, const WhatIfContext& c) {
  Document doc;
  doc.schema = "jqtrace/whatif/1";
  doc.heading = fmt::format("{}: what each cost would buy, removed by 25, 50 and 100% (a chunk past {}x its "
                            "group's stage median preempted; {})",
                            c.file, c.work_cap, trace_facts_text(c.facts));
  doc.add(Field("file", Kind::text, c.file));
  doc.add(Field("work_cap", Kind::ratio, c.work_cap));
  doc.add(Field("measured_us", Kind::us, rank.measured_ns).labelled("trace").in("scope"));
  doc.add(Field("unit_kind", Kind::text, rank.unit_kind.empty() ? Value() : Value(rank.unit_kind)));
  doc.add(Field("unit_median_us", Kind::us, rank.unit_median_ns).labelled(rank.unit_kind.empty() ? "" : "median " + rank.unit_kind));
  add_anomaly_fields(doc, anomalies);
  add_trace_fact_fields(doc, c.facts);
  Table rows("rank");
  rows.in_text = false;
  rows.add_column(Column("group", Kind::text));
  rows.add_column(Column("speedup_pct", Kind::integer));
  rows.add_column(Column("saving_us", Kind::us));
  rows.add_column(Column("saving_pct", Kind::percent));
  rows.add_column(Column("unit_saving_us", Kind::us));
  rows.add_column(Column("unit_saving_pct", Kind::percent));
  for (const RankRow& r : rank.rows)
    rows.rows.push_back({r.group, static_cast<int64_t>(r.speedup_pct), r.saving_ns, percent_of(r.saving_ns, rank.measured_ns),
                         rank.unit_kind.empty() ? Value() : Value(r.unit_saving_ns),
                         rank.unit_kind.empty() ? Value() : Value(percent_of(r.unit_saving_ns, rank.unit_median_ns))});
  doc.add(std::move(rows));
  Table pivot = rank_pivot(rank);
  std::string text = anomalies_text(anomalies);
  pivot.note = text.empty() ? "the replay explains every recorded span"
                            : "where the graph could not explain the recording: " + text;
  doc.add(std::move(pivot));
  doc.delimited_table = 0;
  add_stopped_lanes(doc, c.facts);
  return doc;
}

Document whatif_document(const WhatIfResult& r, const WhatIfContext& c) {
  Document doc;
  doc.schema = "jqtrace/whatif/1";
  doc.heading = fmt::format("{}: {}: what if {} (a chunk past {}x its group's stage median preempted; {})", c.file,
                            c.scope,
                            c.changes, c.work_cap, trace_facts_text(c.facts));
  doc.add(Field("file", Kind::text, c.file));
  doc.add(Field("changes", Kind::text, c.changes));
  doc.add(Field("work_cap", Kind::ratio, c.work_cap));
  doc.add(Field("label", Kind::text, c.scope).in("scope"));
  doc.add(Field("measured_us", Kind::us, r.measured_ns).labelled("scope was").in("scope"));
  doc.add(Field("predicted_us", Kind::us, r.predicted_ns).labelled("will be").in("scope"));
  doc.add(Field("change_pct", Kind::percent,
                change_pct(static_cast<double>(r.measured_ns), static_cast<double>(r.predicted_ns)))
              .labelled("change")
              .in("scope"));
  // The replay's own error: with no change it must give back every recorded time.
  doc.add(Field("identity_error_us", Kind::us, r.identity_error_ns).labelled("replayed unchanged, off by").in("replay"));
  doc.add(Field("spans", Kind::integer, static_cast<int64_t>(r.spans)).labelled("spans replayed").in("replay"));
  add_anomaly_fields(doc, r.anomalies);
  if (r.lanes) {  // --lanes: the model, and its own error at the recorded lanes
    doc.add(Field("lanes", Kind::integer, static_cast<int64_t>(r.lanes)).in("replay"));
    doc.add(Field("recorded_lanes", Kind::integer, static_cast<int64_t>(r.recorded_lanes)).in("replay"));
    doc.add(Field("model_error_pct", Kind::percent, r.model_error_pct)
                .labelled(fmt::format("lanes model's error at {} lanes", r.recorded_lanes))
                .in("replay"));
  }
  add_trace_fact_fields(doc, c.facts);
  Table kinds = kinds_table(r);
  std::string anomalies = anomalies_text(r.anomalies);
  kinds.note = anomalies.empty() ? "the replay explains every recorded span"
                                 : "where the graph could not explain the recording: " + anomalies;
  // --lanes predicts from a model without contention: say so where the figures are read.
  if (r.lanes)
    kinds.note += fmt::format("; on {} lanes: a model of the claim rule with no contention between lanes (lanes "
                              "that share cores slow each other), so read it as a bound on what they buy",
                              r.lanes);
  doc.add(std::move(kinds));
  if (!c.per_unit.empty()) {
    doc.add(units_table(r, c.per_unit));
    doc.delimited_table = 1;
    if (c.work_span) doc.add(work_span_table(*c.work_span, c.per_unit, c.lanes));
  }
  add_stopped_lanes(doc, c.facts);
  return doc;
}

}  // namespace jqtrace::result
