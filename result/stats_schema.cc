#include "stats_schema.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/core.h>

#include "common_fields.h"
#include "saved_shares.h"
#include "text_format.h"

namespace jqtrace::result {
namespace {

std::string heading(const RangeStats& s, const StatsContext& c, const TraceFacts& facts) {
  return fmt::format("{}: {} ({}), {} lane{}, {}{} .. {} us ({} us)", c.file, s.jobque ? "jobque trace" : "trace",
                     trace_facts_text(facts), s.lanes, s.lanes == 1 ? "" : "s", scope_prefix(c.scope),
                     us_fixed(s.range.lo), us_fixed(s.range.hi), us_fixed(s.range.length()));
}

void add_totals(Document& doc, const RangeStats& s) {
  doc.add(Field("events", Kind::integer, count(s.events)).labelled("events"));
  doc.add(Field("busy_us", Kind::us, ns(s.busy_ns)).labelled("busy"));
  doc.add(Field("wait_us", Kind::us, ns(s.wait_ns)).labelled(s.jobque ? "wait" : ""));
  doc.add(Field("idle_pct", Kind::percent, s.idle_pct).labelled("idle"));
  doc.add(Field("parallelism", Kind::ratio, s.parallelism).labelled("parallelism").places(2));
  doc.add(Field("publishes", Kind::integer, count(s.publishes)).labelled(s.jobque ? "publishes" : ""));
}

/// A lane's pid or tid as a number when it is one (most are; a string of digits too),
/// else as the trace's string.
Value lane_id(const ProcessId& id, const Trace& trace) {
  if (!id.is_string) return id.number;
  std::string_view text = trace.names.view(id.text);
  int64_t n = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error == std::errc() && end == text.data() + text.size()) return n;
  return std::string(text);
}

/// One row a group, made as it is written (a group a lane: a million rows); by lane, the
/// lane's pid, tid and thread name as columns of their own (a "0:2" cell reads as a time of
/// day in a spreadsheet).
Table groups_table(const RangeStats& s, const Trace* trace) {
  bool by_lane = s.by == GroupBy::lane;
  Table t("groups");
  // People see a guessed category marked ("attn chain*", with a footnote); data keeps the name.
  t.add_column(Column("label", Kind::text).titled(group_by_name(s.by)).people_only());
  t.add_column(Column("name", Kind::text).titled(group_by_name(s.by)).data_only());
  if (by_lane) {
    t.add_column(Column("pid", Kind::integer).rank(5));  // a string id is written as text
    t.add_column(Column("tid", Kind::integer).rank(5));
    t.add_column(Column("thread", Kind::text).rank(4));
  }
  t.add_column(Column("color", Kind::text).data_only());
  Column busy("busy_us", Kind::us);
  t.add_column(s.jobque ? busy : busy.data_only());  // generic groups show total and self
  if (!s.jobque) {
    t.add_column(Column("total_us", Kind::us));
    t.add_column(Column("self_us", Kind::us));
  }
  t.add_column(Column("share_pct", Kind::percent).titled("share").with_bar());
  t.add_column(Column("events", Kind::integer));
  t.add_column(Column("dur_us", Kind::distribution).rank(1));
  t.made_rows = s.groups.size();
  t.make_row = [&s, by_lane, trace](std::size_t r, Row& row) {
    const GroupStats& g = s.groups[r];
    row = {marked_name(g.name, g.guessed), g.name};
    if (by_lane) {
      const Lane& lane = trace->lanes[g.lane];
      row.insert(row.end(), {lane_id(lane.pid, *trace), lane_id(lane.tid, *trace), std::string(trace->thread_name(g.lane))});
    }
    row.push_back(g.color.empty() ? Value{} : Value{g.color});
    row.push_back(ns(g.busy_ns));
    if (!s.jobque) row.insert(row.end(), {ns(g.total_ns), ns(g.self_ns)});
    row.insert(row.end(), {g.share_pct, count(g.events), g.dur, g.guessed});
  };
  if (std::any_of(s.groups.begin(), s.groups.end(), [](const GroupStats& g) { return !g.color.empty(); }))
    for (const GroupStats& g : s.groups) t.colors.push_back(g.color);
  if (std::any_of(s.groups.begin(), s.groups.end(), [](const GroupStats& g) { return g.guessed; }))
    t.note = kGuessedNote;
  t.add_column(Column("guessed", Kind::flag).data_only());  // last: a pipeline reading columns by place still reads them
  return t;
}

/// --hist: each group's log2 buckets, nested under the group in JSON.
Table hist_table(const RangeStats& s) {
  Table t("hist", "histograms");
  t.nested = true;
  t.add_column(Column("group", Kind::text));
  t.add_column(Column("lo_us", Kind::us));
  t.add_column(Column("hi_us", Kind::us));
  t.add_column(Column("count", Kind::integer));
  for (std::size_t g = 0; g < s.groups.size(); ++g)
    for (const HistBucket& b : s.groups[g].hist) {
      t.rows.push_back({s.groups[g].name, ns(b.lo_ns), ns(b.hi_ns), count(b.count)});
      t.parent.push_back(g);
    }
  return t;
}

Table lanes_table(const RangeStats& s, const Trace* trace) {
  Table t("lanes_detail");
  t.add_column(Column("lane", Kind::text));
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("busy_us", Kind::us));
  t.add_column(Column("idle_pct", Kind::percent).titled("idle"));
  t.made_rows = s.lanes_detail.size();
  t.make_row = [&lanes = s.lanes_detail, trace](std::size_t r, Row& row) {
    const LaneStats& l = lanes[r];
    row = {trace->lane_label(l.lane), std::string(trace->thread_name(l.lane)), ns(l.busy_ns), l.idle_pct};
  };
  return t;
}

}  // namespace

Document stats_document(const RangeStats& s, const StatsContext& c) {
  bool rows_read_lanes = !s.lanes_detail.empty() || (s.by == GroupBy::lane && !s.groups.empty());
  if (rows_read_lanes && !c.trace) throw std::logic_error("stats_document: lanes without the trace they index");
  Document doc;
  doc.schema = std::string(kStatsSchema);
  TraceFacts facts = c.trace ? trace_facts(*c.trace) : TraceFacts{};
  doc.heading = heading(s, c, facts);
  doc.add(Field("file", Kind::text, c.file));
  add_trace_fact_fields(doc, facts);
  add_scope_fields(doc, c.scope);
  doc.add(Field("quantiles", Kind::text, std::string(quantile_method_name(c.quantiles))));
  doc.add(Field("jobque", Kind::flag, s.jobque));
  Field range("range_us", Kind::us, {});
  range.list = {ns(s.range.lo), ns(s.range.hi)};
  doc.add(std::move(range));
  doc.add(Field("span_us", Kind::us, ns(s.range.length())));
  doc.add(Field("lanes", Kind::integer, count(s.lanes)));
  add_totals(doc, s);
  doc.add(Field("by", Kind::text, std::string(group_by_name(s.by))));
  doc.add(groups_table(s, c.trace));
  if (c.hist) doc.add(hist_table(s));
  doc.add(lanes_table(s, c.trace));
  if (c.hist) doc.delimited_table = 1;  // CSV/TSV with --hist: the buckets
  if (c.gates) doc.add(gates_table(*c.gates));
  if (c.baseline) add_baseline(doc, *c.baseline, c.baseline_file, c.max_share_delta_pp);
  add_stopped_lanes(doc, facts);
  return doc;
}

namespace {
constexpr SavedShares kSavedStats{kStatsSchema, "stats", "groups", "group", ""};
}  // namespace

bool looks_like_stats_json(std::string_view head) { return looks_like_schema(head, kStatsSchema); }

bool read_stats_json(std::string_view text, BaselineShares* out, std::string* error) {
  return read_saved_shares(text, kSavedStats, out, error);
}

}  // namespace jqtrace::result
