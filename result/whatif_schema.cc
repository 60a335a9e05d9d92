#include "whatif_schema.h"

#include <algorithm>

#include <fmt/core.h>

#include "quantile.h"
#include "text_format.h"

namespace jqtrace::result {
namespace {

double change_pct(int64_t measured, int64_t predicted) {
  return measured > 0 ? 100.0 * static_cast<double>(predicted - measured) / static_cast<double>(measured) : 0.0;
}

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
      double a = q == 100 ? static_cast<double>(was.back()) : percentile(was, q, QuantileMethod::inclusive);
      double b = q == 100 ? static_cast<double>(will.back()) : percentile(will, q, QuantileMethod::inclusive);
      row.insert(row.end(), {a, b, change_pct(static_cast<int64_t>(a), static_cast<int64_t>(b))});
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
      t.rows.push_back({k.kind, k.measured[i].index, marker_arg_value(k.measured[i].arg), a, b, change_pct(a, b)});
    }
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

}  // namespace

Document whatif_document(const WhatIfResult& r, const WhatIfContext& c) {
  Document doc;
  doc.schema = "jqtrace/whatif/1";
  doc.heading = fmt::format("{}: what if {} (work capped at {}x its group's stage median; {})", c.file, c.changes,
                            c.work_cap, trace_facts_text(c.facts));
  doc.add(Field("file", Kind::text, c.file));
  doc.add(Field("changes", Kind::text, c.changes));
  doc.add(Field("work_cap", Kind::ratio, c.work_cap));
  doc.add(Field("measured_us", Kind::us, r.measured_ns).labelled("trace was").in("scope"));
  doc.add(Field("predicted_us", Kind::us, r.predicted_ns).labelled("will be").in("scope"));
  doc.add(Field("change_pct", Kind::percent, change_pct(r.measured_ns, r.predicted_ns)).labelled("change").in("scope"));
  // The replay's own error: with no change it must give back every recorded time.
  doc.add(Field("identity_error_us", Kind::us, r.identity_error_ns).labelled("replay error (no change)").in("replay"));
  doc.add(Field("spans", Kind::integer, static_cast<int64_t>(r.spans)).labelled("spans replayed").in("replay"));
  doc.add(Field("early_chunks", Kind::integer, static_cast<int64_t>(r.anomalies.early_chunks)).in("replay"));
  doc.add(Field("claimed_during_publish", Kind::integer, static_cast<int64_t>(r.anomalies.claimed_during_publish))
              .in("replay"));
  doc.add(Field("nested", Kind::integer, static_cast<int64_t>(r.anomalies.nested)).in("replay"));
  doc.add(Field("cycles", Kind::integer, static_cast<int64_t>(r.anomalies.cycles)).in("replay"));
  doc.add(Field("republished_chains", Kind::integer, static_cast<int64_t>(r.anomalies.republished_chains)).in("replay"));
  add_trace_fact_fields(doc, c.facts);
  Table kinds = kinds_table(r);
  std::string anomalies = anomalies_text(r.anomalies);
  kinds.note = anomalies.empty() ? "the replay explains every recorded span"
                                 : "where the graph could not explain the recording: " + anomalies;
  doc.add(std::move(kinds));
  if (!c.per_unit.empty()) {
    doc.add(units_table(r, c.per_unit));
    doc.delimited_table = 1;
  }
  add_stopped_lanes(doc, c.facts);
  return doc;
}

}  // namespace jqtrace::result
