#include "latency_schema.h"

#include <algorithm>
#include <numeric>

#include <fmt/core.h>

#include "saved_shares.h"

namespace jqtrace::result {
namespace {

double us(int64_t v) { return static_cast<double>(v) / 1000.0; }

LatencyClass class_at(std::size_t k) { return static_cast<LatencyClass>(k); }

/// The first class a trace can have: a generic trace has no chains, so from span on.
std::size_t first_class(bool jobque) { return jobque ? 0 : static_cast<std::size_t>(LatencyClass::span); }

/// Groups that hold spans (not outside, not recorded) and have time in the parts.
std::vector<std::size_t> span_groups_with_time(const LatencyParts& p, const LatencyAnalysis& a) {
  std::vector<std::size_t> groups;
  for (std::size_t g = 0; g < a.outside_group(); ++g)
    if (p.of_group(g) > 0) groups.push_back(g);
  std::stable_sort(groups.begin(), groups.end(), [&](std::size_t x, std::size_t y) { return p.of_group(x) > p.of_group(y); });
  return groups;
}

/// One row a (group, class) with time, the largest first (ties: group, then class order).
Table parts_table(const LatencyParts& p, const LatencyAnalysis& a, bool* guessed) {
  Table t("rows");
  // People see a guessed category marked ("attn chain*", with a footnote); data keeps the name.
  t.add_column(Column("label", Kind::text).titled("group").people_only());
  t.add_column(Column("group", Kind::text).data_only());
  t.add_column(Column("class", Kind::text));
  t.add_column(Column("us", Kind::us).titled("us"));
  t.add_column(Column("share_pct", Kind::percent).titled("share").with_bar());
  t.add_column(Column("guessed", Kind::flag).data_only());
  std::vector<std::size_t> slots;
  for (std::size_t s = 0; s < p.ns.size(); ++s)
    if (p.ns[s] > 0) slots.push_back(s);
  std::stable_sort(slots.begin(), slots.end(), [&](std::size_t x, std::size_t y) { return p.ns[x] > p.ns[y]; });
  for (std::size_t s : slots) {
    const LatencyGroup& g = a.groups()[s / kLatencyClasses];
    *guessed = *guessed || g.guessed;
    t.rows.push_back({marked_name(g.name, g.guessed), g.name, std::string(latency_class_name(class_at(s % kLatencyClasses))),
                      ns(p.ns[s]), percent_of(p.ns[s], p.range.length()), g.guessed});
    t.colors.push_back(g.color);
  }
  return t;
}

/// Every class the trace can have, in class order, with its total (0 too: a pipeline
/// finds each class's row). A generic trace has no chains: span, outside, not recorded.
Table classes_table(const LatencyParts& p, bool jobque) {
  Table t("classes", "by class");
  t.add_column(Column("class", Kind::text));
  t.add_column(Column("us", Kind::us).titled("us"));
  t.add_column(Column("share_pct", Kind::percent).titled("share").with_bar());
  for (std::size_t k = first_class(jobque); k < kLatencyClasses; ++k) {
    int64_t v = p.of_class(class_at(k));
    t.rows.push_back({std::string(latency_class_name(class_at(k))), ns(v), percent_of(v, p.range.length())});
  }
  return t;
}

Table waits_table(const LatencyParts& p, const LatencyAnalysis& a, const Trace& trace) {
  Table t("waits", fmt::format("the {} longest imbalance waits (the lane waited while another lane's chunk ran)",
                               p.waits.size()));
  t.in_text = !p.waits.empty();  // JSON keeps the empty list
  t.add_column(Column("wait_us", Kind::us));
  t.add_column(Column("share_pct", Kind::percent).titled("share").rank(2));
  t.add_column(Column("at_us", Kind::us).rank(3));
  t.add_column(Column("chain", Kind::integer).rank(1));
  t.add_column(Column("stage", Kind::integer).rank(1));
  t.add_column(Column("label", Kind::text).titled("group").people_only());
  t.add_column(Column("group", Kind::text).data_only());
  t.add_column(Column("last_lane", Kind::text).titled("last lane").rank(2));
  t.add_column(Column("last_chunk", Kind::integer).titled("chunk").rank(3));
  t.add_column(Column("last_start_after_first_us", Kind::us).titled("started after first").rank(1));
  t.add_column(Column("last_chunk_us", Kind::us).titled("chunk_us").rank(2));
  t.add_column(Column("wake_up_us", Kind::us).titled("then wake-up").rank(2));
  for (const LatencyWait& w : p.waits) {
    const LatencyGroup& g = a.groups()[w.group];
    t.rows.push_back({ns(w.ns), percent_of(w.ns, p.range.length()), ns(w.ts_ns), w.chain, w.stage, marked_name(g.name, g.guessed), g.name,
                      trace.lane_label(w.last_lane), w.last_chunk_arg, ns(w.last_chunk_ts - w.stage_first_ts),
                      ns(w.last_chunk_dur), ns(w.wake_ns)});
  }
  return t;
}

/// The longest publishes or own chunks of the marker lane in the range (longest first).
Table pieces_table(const char* name, const char* title, const std::vector<LatencyPiece>& pieces,
                   const LatencyParts& p, const LatencyAnalysis& a, bool stages) {
  Table t(name, fmt::format("the {} longest {}", pieces.size(), title));
  t.in_text = !pieces.empty();  // JSON keeps the empty list
  t.add_column(Column("dur_us", Kind::us).titled(stages ? "chunk_us" : "publish_us"));  // in the range
  t.add_column(Column("share_pct", Kind::percent).titled("share").rank(2));
  t.add_column(Column("at_us", Kind::us).rank(3));
  t.add_column(Column("chain", Kind::integer).rank(1));
  if (stages) t.add_column(Column("stage", Kind::integer).rank(1));
  t.add_column(Column("label", Kind::text).titled("group").people_only());
  t.add_column(Column("group", Kind::text).data_only());
  t.add_column(Column("span_us", Kind::us).titled("whole_us").rank(2));  // the span, when the range cut it
  for (const LatencyPiece& piece : pieces) {
    const LatencyGroup& g = a.groups()[piece.group];
    Row row{ns(piece.ns), percent_of(piece.ns, p.range.length()), ns(piece.ts_ns), piece.chain};
    if (stages) row.push_back(piece.stage);
    row.insert(row.end(), {marked_name(g.name, g.guessed), g.name, ns(piece.span_ns)});
    t.rows.push_back(std::move(row));
  }
  return t;
}

/// One row a unit: its time by class and each group's wall (the lane's time in the
/// group), measured as the row is written.
Table units_table(const LatencyParts& scope_parts, const LatencyContext& c) {
  const LatencyAnalysis& a = *c.analysis;
  Table t("units", fmt::format("units of '{}'", c.per_unit));
  t.add_column(Column("index", Kind::integer));
  t.add_column(Column("arg", Kind::integer).rank(5));
  t.add_column(Column("start_us", Kind::us).rank(4));
  t.add_column(Column("dur_us", Kind::us));
  for (std::size_t k = 0; k < kLatencyClasses; ++k) {
    Column col(latency_class_name(class_at(k)), Kind::us);
    col.in("class").rank(2);
    t.add_column(scope_parts.of_class(class_at(k)) > 0 ? col : col.data_only());
  }
  std::vector<std::size_t> groups = span_groups_with_time(scope_parts, a);
  for (std::size_t g : groups) {
    Column col(a.groups()[g].name, Kind::us);
    col.in("wall").rank(3).titled(marked_name(a.groups()[g].name, a.groups()[g].guessed));
    t.add_column(col);
  }
  t.made_rows = c.units.size();
  const std::vector<Unit>& units = c.units;
  t.make_row = [&a, &units, groups](std::size_t r, Row& row) {
    const Unit& u = units[r];
    LatencyParts p = a.measure(u.range, 0);
    row = {u.index, marker_arg_value(u.arg), ns(u.range.lo), ns(u.range.length())};
    for (std::size_t k = 0; k < kLatencyClasses; ++k) row.push_back(ns(p.of_class(class_at(k))));
    for (std::size_t g : groups) row.push_back(ns(p.of_group(g)));
  };
  return t;
}

/// The shares a baseline compares, as data (JSON only: the rows and classes tables show them).
Table shares_table(const std::vector<GroupShare>& shares, std::size_t classes) {
  Table t("shares");
  t.in_text = false;
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("of", Kind::text));
  t.add_column(Column("share_pct", Kind::percent));
  for (std::size_t k = 0; k < shares.size(); ++k)
    t.rows.push_back({shares[k].name, std::string(k < classes ? "class" : "group"), shares[k].share_pct});
  return t;
}


std::string heading(const LatencyParts& p, const LatencyContext& c) {
  const Trace& trace = *c.trace;
  std::size_t lane = c.analysis->lane();
  std::string name(trace.thread_name(lane));
  std::string text = fmt::format("{}: {}latency of lane {}{} ({}) over {} us ({})", c.file, scope_prefix(c.scope),
                                 trace.lane_label(lane), name.empty() ? "" : " '" + name + "'", c.lane_reason,
                                 us_text(p.range.length()), trace_facts_text(c.facts));
  if (!trace.jobque) text += "; a generic trace: the lane's top-level spans by cat, the rest outside (no chains, no imbalance)";
  if (c.analysis->stopped())
    text += fmt::format("; the lane stopped recording at {} us: after it, not recorded", us_text(c.analysis->stop_ns()));
  return text;
}

}  // namespace

Document latency_document(const LatencyParts& p, const LatencyContext& c) {
  const LatencyAnalysis& a = *c.analysis;
  Document doc;
  doc.schema = "jqtrace/latency/1";
  doc.heading = heading(p, c);
  doc.add(Field("file", Kind::text, c.file));
  add_trace_fact_fields(doc, c.facts);
  add_scope_fields(doc, c.scope);
  Field range("range_us", Kind::us, {});
  range.list = {ns(p.range.lo), ns(p.range.hi)};
  doc.add(std::move(range));
  doc.add(Field("length_us", Kind::us, ns(p.range.length())).labelled("length"));
  doc.add(Field("lane", Kind::text, c.trace->lane_label(a.lane())));
  doc.add(Field("lane_name", Kind::text, std::string(c.trace->thread_name(a.lane()))));
  doc.add(Field("lane_reason", Kind::text, c.lane_reason));
  if (a.stopped()) doc.add(Field("lane_stopped_us", Kind::us, ns(a.stop_ns())));
  bool guessed = false;
  Table& rows = doc.add(parts_table(p, a, &guessed));
  if (guessed) rows.note = kGuessedNote;
  doc.add(classes_table(p, c.trace->jobque));
  doc.add(waits_table(p, a, *c.trace));
  doc.add(shares_table(latency_shares(p, a), kLatencyClasses - first_class(c.trace->jobque)));
  doc.add(pieces_table("publishes", "publishes (the marker lane's; publish time)", p.publishes, p, a, false));
  doc.add(pieces_table("own_chunks", "chunks the marker lane ran itself (work)", p.own_chunks, p, a, true));
  if (!c.per_unit.empty()) {
    doc.add(Field("per_unit", Kind::text, c.per_unit));
    add_unit_rule_fields(doc, c.per_unit_rule, "per_unit_rule");
    doc.delimited_table = static_cast<int>(doc.tables().size());  // CSV/TSV: one row a unit
    doc.add(units_table(p, c));
  } else {
    doc.delimited_table = 0;  // one row a (group, class)
  }
  if (c.gates) doc.add(gates_table(*c.gates));
  if (c.baseline) add_baseline(doc, *c.baseline, c.baseline_file, c.max_share_delta_pp);
  add_stopped_lanes(doc, c.facts);
  return doc;
}

std::vector<GroupShare> latency_shares(const LatencyParts& p, const LatencyAnalysis& a) {
  std::vector<GroupShare> shares;
  int64_t length = p.range.length();
  for (std::size_t k = first_class(a.jobque()); k < kLatencyClasses; ++k)
    shares.push_back({latency_class_name(class_at(k)), percent_of(p.of_class(class_at(k)), length)});
  for (std::size_t g : span_groups_with_time(p, a)) shares.push_back({a.groups()[g].name, percent_of(p.of_group(g), length)});
  return shares;
}

namespace {
constexpr SavedShares kSavedLatency{kLatencySchema, "latency", "shares", "share", "latency"};
}  // namespace

bool looks_like_latency_json(std::string_view head) { return looks_like_schema(head, kLatencySchema); }

bool read_latency_json(std::string_view text, BaselineShares* out, std::string* error) {
  return read_saved_shares(text, kSavedLatency, out, error);
}

const char* latency_class_color(LatencyClass c) {
  constexpr const char* kColors[kLatencyClasses] = {"#43A047", "#FB8C00", "#E53935", "#8E24AA",
                                                    "#F06292", "#1E88E5", "#BDBDBD", "#37474F"};
  return kColors[static_cast<std::size_t>(c)];
}

MetricSet latency_metrics(const LatencyParts& p, const LatencyAnalysis& a) {
  MetricSet m;
  for (const char* metric : {"latency", "latency_us"}) m.declare(metric, "group or class");
  int64_t length = p.range.length();
  auto set = [&](const std::string& arg, int64_t v) {
    m.set("latency", arg, percent_of(v, length));
    m.set("latency_us", arg, us(v));
  };
  for (std::size_t g = 0; g < a.groups().size(); ++g) {
    const std::string& name = a.groups()[g].name;
    set(name, p.of_group(g));
    for (std::size_t k = 0; k < kLatencyClasses; ++k)
      set(fmt::format("{}, {}", name, latency_class_name(class_at(k))), p.at(g, class_at(k)));
  }
  // The classes after the groups: latency(outside) is both, and the same number.
  for (std::size_t k = 0; k < kLatencyClasses; ++k) set(latency_class_name(class_at(k)), p.of_class(class_at(k)));
  return m;
}

std::string latency_gate_arg(const std::string& arg) {
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
  };
  // A class written with '_' (wake_up, not_recorded) reads as the class.
  auto canonical = [](const std::string& text) {
    LatencyClass c;
    return parse_latency_class(text, &c) ? std::string(latency_class_name(c)) : text;
  };
  std::size_t comma = arg.rfind(',');
  if (comma == std::string::npos) return canonical(trim(arg));
  return trim(arg.substr(0, comma)) + ", " + canonical(trim(arg.substr(comma + 1)));
}

}  // namespace jqtrace::result
