#include "common_fields.h"

#include <fmt/core.h>

namespace jqtrace::result {

void add_scope_fields(Document& doc, const Scope& scope, const std::string& group) {
  doc.add(Field("scope", Kind::text, scope.label).in(group));
  if (scope.kind != ScopeRequest::Kind::marker) return;
  doc.add(Field("unit_at", Kind::text, std::string(unit_at_name(scope.rule.at))).in(group));
  doc.add(Field("unit_at_auto", Kind::flag, scope.rule.automatic).in(group));
}

std::string unit_rule_text(UnitRule rule) {
  return fmt::format("units {} at their markers{}", unit_at_name(rule.at), rule.automatic ? ", auto" : "");
}

std::string scope_prefix(const Scope& scope) {
  if (scope.window) return "window " + scope.label + ", ";
  if (scope.kind != ScopeRequest::Kind::marker) return "";
  std::string label = scope.label.substr(0, scope.label.find(" --unit-at"));
  return fmt::format("{} ({}), ", label, unit_rule_text(scope.rule));
}

void add_range_total_columns(Table& t) {
  // Ranks: which go first when a terminal is narrow (the shares after them matter more).
  t.add_column(Column("events", Kind::integer).rank(4));
  t.add_column(Column("busy_us", Kind::us).rank(3));
  t.add_column(Column("wait_us", Kind::us).rank(5));
  t.add_column(Column("idle_pct", Kind::percent).rank(2));
  t.add_column(Column("parallelism", Kind::ratio).places(2).rank(3));
  t.add_column(Column("publishes", Kind::integer).rank(4));
}

void add_range_totals(Row& row, const RangeStats& s) {
  row.insert(row.end(), {count(s.events), ns(s.busy_ns), ns(s.wait_ns), s.idle_pct, s.parallelism, count(s.publishes)});
}

Table gates_table(const std::vector<GateResult>& results) {
  Table t("gates", "gates");
  t.checklist = true;
  t.add_column(Column("expr", Kind::text).titled("gate"));
  t.add_column(Column("status", Kind::text).people_only());
  t.add_column(Column("shown", Kind::text).titled("value").people_only().right_aligned());
  t.add_column(Column("value", Kind::ratio).data_only());
  t.add_column(Column("ok", Kind::flag).data_only());
  for (const GateResult& r : results)
    t.rows.push_back({r.gate.text, std::string(r.tripped ? "FAILED" : "ok"), format_gate_value(r.value, r.gate),
                      r.value, !r.tripped});
  return t;
}

void add_baseline(Document& doc, const std::vector<ShareDelta>& deltas, const std::string& file,
                  double max_share_delta_pp) {
  doc.add(Field("file", Kind::text, file).in("baseline"));
  doc.add(Field("max_share_delta_pp", Kind::ratio, max_share_delta_pp).in("baseline"));
  Table t("groups");
  t.group = "baseline";
  t.add_column(Column("name", Kind::text).titled("baseline group"));
  t.add_column(Column("share_pct", Kind::percent).titled("now"));
  t.add_column(Column("baseline_share_pct", Kind::percent).titled("baseline"));
  t.add_column(Column("delta_pp", Kind::ratio).places(1).signed_());
  t.add_column(Column("status", Kind::text).people_only());
  t.add_column(Column("ok", Kind::flag).data_only());
  for (const ShareDelta& d : deltas) {
    t.rows.push_back({d.name, d.share_pct, d.baseline_share_pct, d.delta_pp, std::string(d.tripped ? "FAILED" : "ok"),
                      !d.tripped});
  }
  doc.add(std::move(t));
}

}  // namespace jqtrace::result
