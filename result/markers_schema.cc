#include "markers_schema.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/core.h>

#include "common_fields.h"

namespace jqtrace::result {
namespace {

const KindSummary* find_kind(const std::vector<KindSummary>& kinds, const std::string& kind) {
  for (const KindSummary& k : kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

Table kinds_table(const std::vector<KindSummary>& kinds) {
  Table t("kinds");
  t.add_column(Column("kind", Kind::text));
  t.add_column(Column("count", Kind::integer));
  t.add_column(Column("unit_at", Kind::text).data_only());
  t.add_column(Column("unit_at_auto", Kind::flag).data_only());
  t.add_column(Column("rule", Kind::text).titled("unit_at").people_only());  // "end (auto)"
  t.add_column(Column("first_us", Kind::us));
  t.add_column(Column("last_us", Kind::us));
  t.add_column(Column("unit_us", Kind::distribution).titled("unit").rank(1));
  for (const KindSummary& k : kinds) {
    bool any = k.count > 0;
    std::string at = unit_at_name(k.rule.at);
    t.rows.push_back({k.kind, count(k.count), at, k.rule.automatic, at + (k.rule.automatic ? " (auto)" : ""),
                      any ? ns(k.first_ns) : Value{}, any ? ns(k.last_ns) : Value{}, k.unit});
  }
  return t;
}

/// The share columns' categories: the trace's order, else every group of any unit by name.
std::vector<std::string> share_categories(const std::vector<UnitRow>& units, const std::vector<std::string>& order) {
  std::set<std::string> seen;
  for (const UnitRow& u : units)
    for (const GroupStats& g : u.stats.groups) seen.insert(g.name);
  std::vector<std::string> out;
  for (const std::string& c : order)
    if (seen.erase(c)) out.push_back(c);
  out.insert(out.end(), seen.begin(), seen.end());  // groups the order does not name, by name
  return out;
}

/// The categories some unit spent busy time in.
std::set<std::string> busy_somewhere(const std::vector<UnitRow>& units) {
  std::set<std::string> busy;
  for (const UnitRow& u : units)
    for (const GroupStats& g : u.stats.groups)
      if (g.busy_ns > 0) busy.insert(g.name);
  return busy;
}

Table units_table(const std::vector<UnitRow>& units, const std::vector<std::string>& order) {
  Table t("units");
  t.add_column(Column("index", Kind::integer));
  t.add_column(Column("arg", Kind::integer).rank(5));
  t.add_column(Column("start_us", Kind::us));
  t.add_column(Column("end_us", Kind::us).rank(5));
  t.add_column(Column("dur_us", Kind::us));
  add_range_total_columns(t);
  std::vector<std::string> categories = share_categories(units, order);
  std::set<std::string> busy = busy_somewhere(units);
  std::map<std::string, std::size_t> slot;  // category → its share's place after the totals
  for (const std::string& c : categories) {
    slot.emplace(c, slot.size());
    Column share(c, Kind::percent);
    share.in("share_pct").rank(1);
    // Tables show the categories some unit spent time in; CSV and JSON show all of them.
    t.add_column(busy.count(c) ? share : share.data_only());
  }
  for (const UnitRow& u : units) {
    Row row = {u.unit.index, u.unit.arg, ns(u.unit.range.lo), ns(u.unit.range.hi), ns(u.unit.range.length())};
    add_range_totals(row, u.stats);
    std::size_t first_share = row.size();
    row.resize(first_share + categories.size(), 0.0);  // a category not in the unit: 0%
    for (const GroupStats& g : u.stats.groups) row[first_share + slot.at(g.name)] = g.share_pct;
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table unit_duration_table(const KindSummary& k) {
  Table t("unit_duration");
  t.in_json = false;  // the kinds table has it
  t.add_column(Column("kind", Kind::text).titled("unit duration"));
  t.add_column(Column("unit_us", Kind::distribution));
  t.rows.push_back({k.kind, k.unit});
  return t;
}

}  // namespace

Document markers_document(const std::vector<KindSummary>& kinds, const std::vector<UnitRow>& units,
                          const MarkersContext& c) {
  Document doc;
  doc.schema = "jqtrace/markers/1";
  doc.add(Field("file", Kind::text, c.file));
  doc.add(Field("quantiles", Kind::text, std::string(quantile_method_name(c.quantiles))));
  Table& kind_rows = doc.add(kinds_table(kinds));
  const KindSummary* k = c.kind.empty() ? nullptr : find_kind(kinds, c.kind);
  if (!k) {
    doc.heading = fmt::format("{}: {} marker kind{}", c.file, kinds.size(), kinds.size() == 1 ? "" : "s");
  } else {
    kind_rows.in_text = false;
    doc.heading = fmt::format("{}: {} unit{} of '{}' ({})", c.file, units.size(), units.size() == 1 ? "" : "s", c.kind,
                              unit_rule_text(k->rule));
    doc.add(Field("kind", Kind::text, c.kind));
    doc.add(Field("unit_at", Kind::text, std::string(unit_at_name(k->rule.at))));
    doc.add(Field("unit_at_auto", Kind::flag, k->rule.automatic));
    doc.add(units_table(units, c.categories));
    doc.add(unit_duration_table(*k));
    doc.delimited_table = 1;
  }
  if (c.gates) doc.add(gates_table(*c.gates));
  return doc;
}

}  // namespace jqtrace::result
