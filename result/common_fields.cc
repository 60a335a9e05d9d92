#include "common_fields.h"

#include <algorithm>

#include <fmt/core.h>

namespace jqtrace::result {

TraceFacts trace_facts(const Trace& trace) {
  TraceFacts f;
  f.jobque = trace.jobque;
  f.attribution = trace.jobque ? trace.attribution : Attribution::none;
  f.truncated = trace.read.status == ReadStatus::truncated;
  f.truncated_at_byte = trace.read.offset;
  f.profile_unused = profile_unused(trace);
  for (const StoppedLane& s : lanes_stopped_early(trace))
    f.stopped.push_back({trace.lane_label(s.lane), std::string(trace.thread_name(s.lane)), s.stop_ns});
  return f;
}

void add_trace_fact_fields(Document& doc, const TraceFacts& facts, const std::string& group) {
  doc.add(Field("attribution", Kind::text, std::string(attribution_name(facts.attribution))).in(group));
  doc.add(Field("truncated", Kind::flag, facts.truncated).in(group));
  if (facts.profile_unused) doc.add(Field("profile_unused", Kind::flag, true).in(group));
}

void add_stopped_lanes(Document& doc, const TraceFacts& facts, const std::string& group) {
  if (facts.stopped.empty()) return;
  Table t("lanes_stopped_early", "lanes that stopped recording early (ring full): their numbers end there");
  t.group = group;
  t.add_column(Column("lane", Kind::text));
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("stop_us", Kind::us));
  for (const TraceFacts::Stopped& s : facts.stopped) t.rows.push_back({s.lane, s.name, ns(s.stop_ns)});
  doc.add(std::move(t));
}

std::string trace_facts_text(const TraceFacts& facts) {
  std::string text = fmt::format("attribution: {}", attribution_name(facts.attribution));
  if (facts.attribution == Attribution::stage_count) text += ", names guessed";
  if (facts.profile_unused) text += "; the profile's categories and markers are used by no event";
  if (facts.truncated) text += fmt::format("; TRUNCATED at byte {}", facts.truncated_at_byte);
  if (!facts.stopped.empty())
    text += fmt::format("; {} lane{} stopped recording early", facts.stopped.size(), facts.stopped.size() == 1 ? "" : "s");
  return text;
}

std::string marked_name(const std::string& name, bool guessed) {
  bool marked = !name.empty() && name.back() == '*';  // a guess beside the trace's own name is named so
  return guessed && !marked ? name + "*" : name;
}

void add_unit_rule_fields(Document& doc, const UnitRule& rule, const std::string& group) {
  doc.add(Field("unit_at", Kind::text, std::string(unit_at_name(rule.at))).in(group));
  doc.add(Field("unit_at_auto", Kind::flag, rule.automatic).in(group));
  doc.add(Field("unit_at_rule", Kind::text, unit_rule_label(rule)).in(group));
  doc.add(Field("unit_nested_in", Kind::text, std::string(rule.nested_in)).in(group));
  if (rule.lane_stopped) doc.add(Field("unit_lane_stopped_us", Kind::us, ns(rule.stop_ns)).in(group));
  if (!rule.automatic) return;
  doc.add(Field("unit_at_ambiguous", Kind::flag, rule.ambiguous).in(group));
  if (!rule.measured) return;
  doc.add(Field("unit_at_head_gaps", Kind::ratio, rule.head_gaps).in(group));
  doc.add(Field("unit_at_tail_gaps", Kind::ratio, rule.tail_gaps).in(group));
  doc.add(Field("unit_at_evidence_start", Kind::integer, rule.starts).in(group));
  doc.add(Field("unit_at_evidence_end", Kind::integer, rule.closes).in(group));
}

void add_scope_fields(Document& doc, const Scope& scope, const std::string& group) {
  doc.add(Field("scope", Kind::text, scope.label).in(group));
  if (scope.kind == ScopeRequest::Kind::marker) add_unit_rule_fields(doc, scope.rule, group);
}

std::string unit_rule_text(UnitRule rule) {
  std::string text = fmt::format("units {} at their markers", unit_at_name(rule.at));
  if (!rule.nested_in.empty()) text += " and at '" + std::string(rule.nested_in) + "' boundaries";
  if (rule.lane_stopped) text += ", the marker lane stopped recording at " + us_text(rule.stop_ns) + " us";
  if (rule.recorded) return text + ", as the window recorded";
  if (!rule.automatic) return text;
  if (!rule.measured) return text + ", auto";
  return text + (rule.ambiguous ? ", auto, ambiguous: " : ", auto: ") + unit_rule_evidence(rule);
}

std::string scope_prefix(const Scope& scope) {
  if (scope.window) return "window " + scope.label + ", ";
  if (scope.kind != ScopeRequest::Kind::marker) return "";
  // The program's label of the unit beside its index: "--marker layer 6 (layer 2; start ...)".
  std::string label = scope.unit_arg_label.empty() ? "" : scope.unit_arg_label + "; ";
  return fmt::format("{} ({}{}), ", scope.label_without_unit_at(), label, unit_rule_text(scope.rule));
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
  add_range_totals(row, s.events, s.busy_ns, s.wait_ns, s.idle_pct, s.parallelism, s.publishes);
}

void add_range_totals(Row& row, uint64_t events, int64_t busy_ns, int64_t wait_ns, double idle_pct, double parallelism,
                      uint64_t publishes) {
  row.insert(row.end(), {count(events), ns(busy_ns), ns(wait_ns), idle_pct, parallelism, count(publishes)});
}

namespace {

/// A gate's status as people read it.
const char* gate_status(const GateResult& r) {
  switch (r.verdict) {
    case Verdict::fail: return r.inconclusive ? "FAILED (inconclusive)" : "FAILED";
    case Verdict::cannot_judge: return "CANNOT JUDGE";
    case Verdict::pass: break;
  }
  return r.inconclusive ? "ok (inconclusive)" : "ok";
}

}  // namespace

Table gates_table(const std::vector<GateResult>& results) {
  Table t("gates", "gates");
  t.checklist = true;
  t.add_column(Column("expr", Kind::text).titled("gate"));
  t.add_column(Column("status", Kind::text).people_only());
  t.add_column(Column("shown", Kind::text).titled("value").people_only().right_aligned());
  t.add_column(Column("value", Kind::ratio).data_only());
  t.add_column(Column("ok", Kind::flag).data_only());
  bool detailed = std::any_of(results.begin(), results.end(), [](const GateResult& r) { return !r.detail.empty(); });
  if (detailed) t.add_column(Column("detail", Kind::text));  // diff: the interval and p the value stands on
  // diff's gates judge an interval: pass, fail or cannot_judge, and the interval's ends.
  bool bounded = std::any_of(results.begin(), results.end(), [](const GateResult& r) { return r.has_interval; });
  if (bounded) {
    t.add_column(Column("verdict", Kind::text).data_only());
    t.add_column(Column("lo", Kind::ratio).data_only());
    t.add_column(Column("hi", Kind::ratio).data_only());
    t.add_column(Column("inconclusive", Kind::flag).data_only());
  }
  for (const GateResult& r : results) {
    std::string shown = format_gate_value(r.value, r.gate);
    if (r.has_interval) shown += " " + interval_text(r.interval);
    t.rows.push_back({r.gate.text, std::string(gate_status(r)), shown, r.value, r.verdict == Verdict::pass});
    if (detailed) t.rows.back().push_back(r.detail);
    if (bounded)
      t.rows.back().insert(t.rows.back().end(),
                           {std::string(verdict_name(r.verdict)), r.has_interval ? Value{r.interval.lo} : Value{},
                            r.has_interval ? Value{r.interval.hi} : Value{}, r.inconclusive});
  }
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
