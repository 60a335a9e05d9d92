#include "diff_schema.h"

#include <map>

#include <fmt/core.h>
#include <fmt/format.h>

#include "common_fields.h"

namespace jqtrace::result {
namespace {

std::string side_heading(const char* letter, const DiffSide& s) {
  std::string prefix = scope_prefix(s.scope);
  std::string text = std::string(letter) + " " + s.runs.front();
  if (s.runs.size() > 1) text += fmt::format(" and {} more run{}", s.runs.size() - 1, s.runs.size() == 2 ? "" : "s");
  text += " (";
  if (!prefix.empty()) text += prefix.substr(0, prefix.size() - 2) + "; ";
  return text + trace_facts_text(s.facts) + ")";
}

void add_side_fields(Document& doc, const char* group, const DiffSide& side) {
  const RangeStats& s = *side.stats;
  doc.add(Field("file", Kind::text, side.runs.front()).in(group));
  Field runs("runs", Kind::text, {});
  for (const std::string& r : side.runs) runs.list.push_back(r);
  doc.add(std::move(runs).in(group));
  add_trace_fact_fields(doc, side.facts, group);
  add_scope_fields(doc, side.scope, group);
  doc.add(Field("span_us", Kind::us, ns(s.range.length())).in(group));
  doc.add(Field("busy_us", Kind::us, ns(s.busy_ns)).in(group));
  doc.add(Field("idle_pct", Kind::percent, s.idle_pct).in(group));
  doc.add(Field("parallelism", Kind::ratio, s.parallelism).in(group));
  doc.add(Field("events", Kind::integer, count(s.events)).in(group));
  doc.add(Field("publishes", Kind::integer, count(s.publishes)).in(group));
}

Value ratio_of(double b, double a) { return a > 0 ? Value{Typed{Kind::ratio, b / a, 3}} : Value{}; }

/// The totals as people read them: one row a metric, A, B, B-A and B/A (the same numbers
/// are in the JSON's "a" and "b" objects).
Table totals_table(const RangeStats& a, const RangeStats& b) {
  Table t("totals");
  t.in_json = false;
  t.add_column(Column("metric", Kind::text).titled(""));
  for (const char* side : {"A", "B", "B-A", "B/A"}) t.add_column(Column(side, Kind::ratio));
  auto row = [&](const char* name, Kind kind, int decimals, double va, double vb, bool ratio) {
    // Percentages differ in points: B-A of idle_pct is "+5.1" (pp), not a percent.
    Kind delta = kind == Kind::percent ? Kind::ratio : kind;
    t.rows.push_back({std::string(name), Typed{kind, va, decimals}, Typed{kind, vb, decimals},
                      Typed{delta, vb - va, decimals, true}, ratio ? ratio_of(vb, va) : Value{}});
  };
  auto d = [](int64_t v) { return static_cast<double>(v); };
  row("span_us", Kind::us, 3, d(a.range.length()), d(b.range.length()), true);
  row("busy_us", Kind::us, 3, d(a.busy_ns), d(b.busy_ns), true);
  row("idle_pct", Kind::percent, 1, a.idle_pct, b.idle_pct, false);
  row("parallelism", Kind::ratio, 2, a.parallelism, b.parallelism, true);
  row("events", Kind::ratio, 0, d(static_cast<int64_t>(a.events)), d(static_cast<int64_t>(b.events)), true);
  return t;
}

Table groups_table(const TraceDiff& d, GroupBy by) {
  Table t("groups");
  // People see a name guessed on either side marked ("classifier*", with a footnote).
  t.add_column(Column("label", Kind::text).titled(group_by_name(by)).people_only());
  t.add_column(Column("name", Kind::text).titled(group_by_name(by)).data_only());
  t.add_column(Column("busy_us", Kind::us).in("a").titled("busy_a_us"));
  t.add_column(Column("busy_us", Kind::us).in("b").titled("busy_b_us"));
  t.add_column(Column("share_pct", Kind::percent).in("a").titled("share_a"));
  t.add_column(Column("share_pct", Kind::percent).in("b").titled("share_b"));
  t.add_column(Column("share_delta_pp", Kind::ratio).titled("delta_pp").places(1).signed_());
  t.add_column(Column("busy_ratio", Kind::ratio));
  t.add_column(Column("events", Kind::integer).in("a").titled("events_a").rank(2));
  t.add_column(Column("events", Kind::integer).in("b").titled("events_b").rank(2));
  for (const GroupDiff& g : d.groups) {
    bool guessed = g.a.guessed || g.b.guessed;
    if (guessed) t.note = kGuessedNote;
    t.rows.push_back({marked_name(g.name, guessed), g.name, ns(g.a.busy_ns), ns(g.b.busy_ns), g.a.share_pct, g.b.share_pct, g.share_delta_pp,
                      g.has_ratio ? Value{g.busy_ratio} : Value{}, count(g.a.events), count(g.b.events)});
  }
  return t;
}

Table kinds_table(const TraceDiff& d) {
  Table t("markers");
  t.add_column(Column("kind", Kind::text).titled("marker kind"));
  t.add_column(Column("units", Kind::integer).in("a").titled("units_a"));
  t.add_column(Column("units", Kind::integer).in("b").titled("units_b"));
  t.add_column(Column("unit_p50_us", Kind::us).in("a").titled("unit_p50_a_us"));
  t.add_column(Column("unit_p50_us", Kind::us).in("b").titled("unit_p50_b_us"));
  t.add_column(Column("p50_ratio", Kind::ratio).people_only());
  auto p50 = [](const KindSide& k) { return k.present ? Value{k.unit_p50_ns} : Value{}; };
  for (const KindDiff& k : d.kinds)
    t.rows.push_back({k.kind, count(k.a.units), count(k.b.units), p50(k.a), p50(k.b),
                      k.a.present && k.b.present ? ratio_of(k.b.unit_p50_ns, k.a.unit_p50_ns) : Value{}});
  return t;
}

/// What people read in the change column: B against A as a % change with its 95% interval
/// (in points for a share of units); "~" before it when not significant (benchstat's mark:
/// the interval then says how large a change the data cannot rule out).
std::string change_text(const ChangeRow& r) {
  if (r.ambiguous) return "~ (ambiguous units)";  // first: what is cut by a guess is no sample at all
  if (!r.tested()) return "too few units";
  if (r.of == ChangeRow::Of::units_share) {
    if (!r.significant) return fmt::format("~ [{:+.1f}, {:+.1f}]pp", r.runs.ci_lo_pp, r.runs.ci_hi_pp);
    return fmt::format("{:+.1f}pp [{:+.1f}, {:+.1f}]", r.runs.delta_pp, r.runs.ci_lo_pp, r.runs.ci_hi_pp);
  }
  const ShiftTest& t = r.test;
  if (!r.significant) return fmt::format("~ [{:+.1f}, {:+.1f}]", t.ci_lo_pct(), t.ci_hi_pct());
  return fmt::format("{:+.1f}% [{:+.1f}, {:+.1f}]", t.shift_pct(), t.ci_lo_pct(), t.ci_hi_pct());
}

/// One row of the changes table (the columns of changes_table).
Row change_row(const ChangeRow& r) {
  const ShiftTest& s = r.test;
  bool share = r.of == ChangeRow::Of::units_share, durations = r.of == ChangeRow::Of::durations;
  bool any = !share && s.n_a > 0 && s.n_b > 0;
  std::string note = r.ambiguous ? "ambiguous units" : !r.tested() ? "too few units" : "";
  Value n_a = count(share ? r.runs.n_a : s.n_a), n_b = count(share ? r.runs.n_b : s.n_b);
  Value runs_a = durations ? Value{} : Value{r.runs.pct_a()}, runs_b = durations ? Value{} : Value{r.runs.pct_b()};
  auto change_part = [&](double v) { return any ? Value{v} : Value{}; };
  auto share_part = [&](double v) { return share ? Value{v} : Value{}; };
  return {r.kind, r.group, n_a, n_b, runs_a, runs_b,
          share || s.n_a == 0 ? Value{} : Value{s.median_a}, share || s.n_b == 0 ? Value{} : Value{s.median_b},
          change_text(r),
          any ? Value{s.shift} : Value{}, change_part(s.shift_pct()), change_part(s.ci_lo_pct()), change_part(s.ci_hi_pct()),
          share_part(r.runs.delta_pp), share_part(r.runs.ci_lo_pp), share_part(r.runs.ci_hi_pp),
          r.tested() ? Value{r.p()} : Value{}, r.tested() && !r.ambiguous ? Value{r.p_adj} : Value{}, r.significant,
          note, change_part(s.ratio), change_part(s.ratio_lo), change_part(s.ratio_hi),
          count(static_cast<uint64_t>(s.strata)), count(static_cast<uint64_t>(s.left_out_a)),
          count(static_cast<uint64_t>(s.left_out_b))};
}

Table changes_table(const std::vector<ChangeRow>& rows, double alpha) {
  // Short enough for an 80-column terminal; the method is in jqtrace-diff(1).
  Table t("changes", fmt::format("changes per unit (B against A in %, [95% interval]; ~: not significant at {:g})",
                                 alpha));
  t.add_column(Column("kind", Kind::text));
  t.add_column(Column("group", Kind::text));
  // At 80 columns the essentials stay whole (kind, group, medians, the change with its
  // interval, p_adj): the shares of units go first, then p, then the units' counts.
  t.add_column(Column("n_a", Kind::integer).rank(1));
  t.add_column(Column("n_b", Kind::integer).rank(1));
  t.add_column(Column("runs_a_pct", Kind::ratio).rank(3));
  t.add_column(Column("runs_b_pct", Kind::ratio).rank(3));
  t.add_column(Column("median_a_us", Kind::us));
  t.add_column(Column("median_b_us", Kind::us));
  t.add_column(Column("change", Kind::text).people_only());
  t.add_column(Column("shift_us", Kind::us).data_only());
  t.add_column(Column("shift_pct", Kind::ratio).data_only());
  t.add_column(Column("ci_lo_pct", Kind::ratio).data_only());
  t.add_column(Column("ci_hi_pct", Kind::ratio).data_only());
  t.add_column(Column("runs_delta_pp", Kind::ratio).data_only());
  t.add_column(Column("runs_ci_lo_pp", Kind::ratio).data_only());
  t.add_column(Column("runs_ci_hi_pp", Kind::ratio).data_only());
  t.add_column(Column("p", Kind::probability).rank(2));
  t.add_column(Column("p_adj", Kind::probability));
  t.add_column(Column("significant", Kind::flag).data_only());
  t.add_column(Column("note", Kind::text).data_only());
  // Added with the ratio (issue 65): appended, so that the columns before keep their places.
  t.add_column(Column("ratio", Kind::ratio).data_only());
  t.add_column(Column("ratio_lo", Kind::ratio).data_only());
  t.add_column(Column("ratio_hi", Kind::ratio).data_only());
  t.add_column(Column("strata", Kind::integer).data_only());
  t.add_column(Column("left_out_a", Kind::integer).data_only());
  t.add_column(Column("left_out_b", Kind::integer).data_only());
  std::size_t left_out = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> stratified;  // kind -> rows by arg, rows
  for (const ChangeRow& r : rows) {
    t.rows.push_back(change_row(r));
    if (r.of == ChangeRow::Of::durations) left_out += r.test.left_out_a + r.test.left_out_b;
    if (r.of == ChangeRow::Of::units_share) continue;
    auto& [by_arg, all] = stratified[r.kind];
    by_arg += r.test.stratified();
    ++all;
  }
  std::vector<std::string> notes;
  for (const auto& [kind, counts] : stratified)
    if (counts.first > 0)  // said in a note, not a column: the change and its interval keep 80 columns
      notes.push_back(fmt::format("{}: {} of {} rows compare each arg with itself (strata: van Elteren)", kind,
                                  counts.first, counts.second));
  if (left_out > 0)
    notes.push_back(fmt::format("{} unit{} of 0 us left out (a ratio of 0 is none): left_out_a and left_out_b in the "
                                "data",
                                left_out, left_out == 1 ? "" : "s"));
  t.note = fmt::format("{}", fmt::join(notes, "\n"));
  return t;
}

/// How a rule was chosen: "auto", "auto, both sides", "asked" (--unit-at), "recorded".
const char* rule_source(const UnitRule& r, bool joint) {
  if (r.recorded) return "recorded";
  if (!r.automatic) return "asked";
  return joint ? "auto, both sides" : "auto";
}

/// "end" or "start in token", "(ambiguous)" after a guess.
std::string rule_words(const UnitRule& r) {
  std::string words = unit_at_name(r.at);
  if (!r.nested_in.empty()) words += " in " + r.nested_in;
  if (r.ambiguous) words += " (ambiguous)";
  return words;
}

/// The heading's line of the units compared: "units: token end (auto, both sides: 1
/// start, 3 end; 1 run cut again); layer start in token; step start (ambiguous)". Past
/// kMaxRuleParts kinds, the first few and how many more (20,000 kinds made a line of 480
/// KB); the unit_rules table has every kind.
std::string rules_line(const std::vector<KindRules>& rules) {
  constexpr std::size_t kMaxRuleParts = 8;
  std::vector<std::string> parts;
  bool cut = rules.size() > kMaxRuleParts;
  for (const KindRules& k : rules) {
    if (cut && parts.size() == kMaxRuleParts - 1) {
      parts.push_back(fmt::format("and {} more kinds (each in the unit_rules table: --format json, or csv with "
                                  "--table unit_rules)",
                                  rules.size() - parts.size()));
      break;
    }
    std::string a = rule_words(k.a), b = rule_words(k.b);
    std::string part = k.kind + " " + (a == b ? a : a + " in A, " + b + " in B");
    if (k.joint)
      part += fmt::format(" (auto on both sides' evidence: {} start, {} end{})", k.a.starts, k.a.closes,
                          k.recut ? fmt::format("; {} run{} cut again", k.recut, k.recut == 1 ? "" : "s") : "");
    parts.push_back(part);
  }
  std::string count = cut ? fmt::format("{} kinds: ", rules.size()) : "";
  return "units: " + count + fmt::format("{}", fmt::join(parts, "; "));
}

Table rules_table(const std::vector<KindRules>& rules) {
  Table t("unit_rules", "how each kind's units were cut");
  t.in_text = false;
  t.add_column(Column("kind", Kind::text));
  t.add_column(Column("rule_a", Kind::text));
  t.add_column(Column("rule_b", Kind::text));
  t.add_column(Column("source_a", Kind::text));
  t.add_column(Column("source_b", Kind::text));
  t.add_column(Column("nested_in_a", Kind::text));
  t.add_column(Column("nested_in_b", Kind::text));
  t.add_column(Column("ambiguous", Kind::flag));
  // The samples of both sides' runs together, where auto decided on them.
  t.add_column(Column("evidence_start", Kind::integer));
  t.add_column(Column("evidence_end", Kind::integer));
  t.add_column(Column("recut_runs", Kind::integer));
  for (const KindRules& k : rules)
    t.rows.push_back({k.kind, std::string(unit_at_name(k.a.at)), std::string(unit_at_name(k.b.at)),
                      std::string(rule_source(k.a, k.joint)), std::string(rule_source(k.b, k.joint)), k.a.nested_in,
                      k.b.nested_in, k.a.ambiguous || k.b.ambiguous,
                      k.joint ? count(static_cast<uint64_t>(k.a.starts)) : Value{},
                      k.joint ? count(static_cast<uint64_t>(k.a.closes)) : Value{}, count(k.recut)});
  return t;
}

}  // namespace

Document diff_document(const DiffSide& a, const DiffSide& b, const TraceDiff& d, const std::vector<ChangeRow>& changes,
                       const DiffContext& context) {
  QuantileMethod quantiles = context.quantiles;
  Document doc;
  doc.schema = "jqtrace/diff/1";
  doc.heading = side_heading("A", a) + "\n" + side_heading("B", b);
  // Names from a profile against names guessed or taken from the legacy table: a share
  // "moving" between them may only be a name that differs (SPEC §1.4).
  if (a.facts.attribution != b.facts.attribution)
    doc.heading += fmt::format("\ncategories: A named by {}, B by {}; a move may be a rename",
                               attribution_name(a.facts.attribution), attribution_name(b.facts.attribution));
  doc.add(Field("same_attribution", Kind::flag, a.facts.attribution == b.facts.attribution));
  doc.add(Field("by", Kind::text, std::string(group_by_name(a.stats->by))));
  doc.add(Field("quantiles", Kind::text, std::string(quantile_method_name(quantiles))));
  add_side_fields(doc, "a", a);
  add_side_fields(doc, "b", b);
  doc.add(totals_table(*a.stats, *b.stats));
  doc.add(groups_table(d, a.stats->by));
  Table& kinds = doc.add(kinds_table(d));
  kinds.in_text = !d.kinds.empty();
  doc.add(Field("alpha", Kind::ratio, context.alpha));
  Table& table = doc.add(changes_table(changes, context.alpha));
  table.in_text = !changes.empty();
  doc.add(Field("kinds_too_few_units", Kind::integer, count(context.untested_count)));
  if (context.untested_count > 0)
    doc.heading += fmt::format("\nnot in the changes table (fewer than {} units a side): {}", kMinTestedValues,
                               context.untested);
  if (!context.rules.empty()) {
    doc.heading += "\n" + rules_line(context.rules);
    doc.add(rules_table(context.rules));
  }
  if (context.gates) doc.add(gates_table(*context.gates));
  return doc;
}

}  // namespace jqtrace::result
