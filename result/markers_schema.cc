#include "markers_schema.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/core.h>
#include <fmt/format.h>

#include "common_fields.h"
#include "largest.h"

namespace jqtrace::result {
namespace {

const KindSummary* find_kind(const std::vector<KindSummary>& kinds, const std::string& kind) {
  for (const KindSummary& k : kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

/// A line a kind whose rule auto measured: "token: head 0.59 gaps, tail 0.00; evidence 0
/// start, 6 end", for at most kMaxEvidenceLines kinds (JSON and CSV have every kind's).
std::string evidence_note(const std::vector<KindSummary>& kinds) {
  constexpr std::size_t kMaxEvidenceLines = 8;
  std::vector<std::string> lines;
  std::size_t measured = 0;
  for (const KindSummary& k : kinds) {
    if (!k.rule.automatic || !k.rule.measured || k.rule.recorded) continue;
    if (++measured > kMaxEvidenceLines) continue;
    std::string why = ambiguity_reason(k.rule);  // evidence that does not decide says why
    lines.push_back(k.kind + ": " + unit_rule_evidence(k.rule) + (why.empty() ? "" : "; ambiguous: " + why));
  }
  if (lines.empty()) return "";
  if (measured > lines.size())
    lines.push_back(fmt::format("and {} more kinds (unit_at_head_gaps, unit_at_tail_gaps and unit_at_evidence_* in "
                                "JSON and CSV)",
                                measured - lines.size()));
  return "unit_at auto's evidence: " + fmt::format("{}", fmt::join(lines, "\n  "));
}

Table kinds_table(const std::vector<KindSummary>& kinds) {
  Table t("kinds");
  t.add_column(Column("kind", Kind::text));
  t.add_column(Column("count", Kind::integer));
  t.add_column(Column("unit_at", Kind::text).data_only());
  t.add_column(Column("unit_at_auto", Kind::flag).data_only());
  t.add_column(Column("rule", Kind::text).titled("unit_at").people_only());  // "end (auto)"; the evidence in the note
  t.add_column(Column("first_us", Kind::us));
  t.add_column(Column("last_us", Kind::us));
  t.add_column(Column("unit_us", Kind::distribution).titled("unit").rank(1));
  // After the older columns, so that a pipeline reading them by position still reads them.
  t.add_column(Column("unit_at_ambiguous", Kind::flag).data_only());
  t.add_column(Column("unit_at_head_gaps", Kind::ratio).data_only());
  t.add_column(Column("unit_at_tail_gaps", Kind::ratio).data_only());
  t.add_column(Column("unit_at_evidence_start", Kind::integer).data_only());  // issue 51
  t.add_column(Column("unit_at_evidence_end", Kind::integer).data_only());
  t.add_column(Column("nested_in", Kind::text).data_only());
  t.add_column(Column("lane_stopped_us", Kind::us).data_only());
  // Made as they are written: a trace whose every instant has a name of its own has a kind
  // an instant (a million kinds' rows held as cells took 320 MB).
  t.made_rows = kinds.size();
  t.make_row = [&kinds](std::size_t r, Row& row) {
    const KindSummary& k = kinds[r];
    bool any = k.count > 0;
    std::string at = unit_at_name(k.rule.at);
    bool measured = k.rule.automatic && k.rule.measured;
    row = {k.kind, count(k.count), at, k.rule.automatic, unit_rule_label(k.rule, /*with_evidence=*/false),
           any ? ns(k.first_ns) : Value{}, any ? ns(k.last_ns) : Value{}, k.unit, k.rule.ambiguous,
           measured ? Value{k.rule.head_gaps} : Value{}, measured ? Value{k.rule.tail_gaps} : Value{},
           measured ? count(static_cast<uint64_t>(k.rule.starts)) : Value{},
           measured ? count(static_cast<uint64_t>(k.rule.closes)) : Value{}, std::string(k.rule.nested_in),
           k.rule.lane_stopped ? ns(k.rule.stop_ns) : Value{}};
  };
  t.note = evidence_note(kinds);
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

UnitsTable::UnitsTable(std::vector<std::string> share_order) : share_order_(std::move(share_order)), table_("units") {
  table_.add_column(Column("index", Kind::integer));
  table_.add_column(Column("arg", Kind::integer).rank(5));
  table_.add_column(Column("start_us", Kind::us));
  table_.add_column(Column("end_us", Kind::us).rank(5));
  table_.add_column(Column("dur_us", Kind::us));
  add_range_total_columns(table_);
}

std::size_t UnitsTable::slot_of(const std::string& group) {
  auto [it, added] = slot_.try_emplace(group, groups_.size());
  if (added) {
    groups_.push_back(group);
    busy_ns_.push_back(0);
    guessed_.push_back(false);
  }
  return it->second;
}

void UnitsTable::account(const UnitRow& u) {
  for (const GroupStats& g : u.stats.groups) {
    std::size_t slot = slot_of(g.name);
    if (g.guessed) guessed_[slot] = true;
    if (g.busy_ns > 0 && __builtin_add_overflow(busy_ns_[slot], g.busy_ns, &busy_ns_[slot])) busy_ns_[slot] = INT64_MAX;
  }
}

void UnitsTable::Stored::keep(const UnitRow& u, const std::map<std::string, std::size_t>& slot_of) {
  const RangeStats& s = u.stats;
  units.push_back({u.unit.index, u.unit.arg, u.unit.range.lo, u.unit.range.hi, s.busy_ns, s.wait_ns, s.events,
                   s.publishes, s.idle_pct, s.parallelism, shares.size()});
  std::vector<std::pair<std::size_t, double>> by_slot;  // those not 0%
  for (const GroupStats& g : u.stats.groups)
    if (g.share_pct != 0.0) by_slot.emplace_back(slot_of.at(g.name), g.share_pct);
  // Groups of one name share its column, and their shares add up: the spans without a cat
  // ("(no cat)") and those with a cat named "(no cat)" kept only the last one's share.
  std::sort(by_slot.begin(), by_slot.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (std::size_t k = 0; k < by_slot.size(); ++k) {
    double sum = by_slot[k].second;
    while (k + 1 < by_slot.size() && by_slot[k + 1].first == by_slot[k].first) sum += by_slot[++k].second;
    shares.emplace_back(by_slot[k].first, sum);
  }
}

void UnitsTable::Stored::to_columns(const std::vector<std::size_t>& column_of) {
  for (auto& [slot, share] : shares) slot = column_of[slot];
  for (std::size_t r = 0; r < units.size(); ++r) {
    auto at = [&](std::size_t k) { return shares.begin() + static_cast<std::ptrdiff_t>(k); };
    std::sort(at(units[r].shares_from), at(shares_end(r)), [](const auto& x, const auto& y) { return x.first < y.first; });
  }
}

void UnitsTable::Stored::make_row(std::size_t r, std::size_t columns, Row& row) const {
  const UnitNumbers& u = units[r];
  row = {u.index, marker_arg_value(u.arg), ns(u.lo), ns(u.hi), ns(u.hi - u.lo)};
  add_range_totals(row, u.events, u.busy_ns, u.wait_ns, u.idle_pct, u.parallelism, u.publishes);
  row.resize(columns, 0.0);  // the shares: 0% unless stored
  for (std::size_t k = u.shares_from; k < shares_end(r); ++k) row[shares[k].first] = shares[k].second;
}

void UnitsTable::add(const UnitRow& u) {
  account(u);
  stored_->keep(u, slot_);
}

void UnitsTable::stream(std::size_t count, UnitBlocks blocks) {
  streamed_ = std::make_shared<Streamed>();
  streamed_->count = count;
  streamed_->blocks = std::move(blocks);
  for (std::size_t from = 0; from < count; from += kStreamBlock)
    streamed_->blocks(from, std::min(kStreamBlock, count - from), [this](const UnitRow& u) { account(u); });
}

Table UnitsTable::finish() && {
  // The share columns: share_order's groups that some unit has, then the others by name,
  // so a spreadsheet's columns do not move from trace to trace.
  std::vector<std::size_t> column_slots;
  std::vector<bool> placed(groups_.size(), false);
  for (const std::string& c : share_order_)
    if (auto it = slot_.find(c); it != slot_.end() && !placed[it->second]) {
      column_slots.push_back(it->second);
      placed[it->second] = true;
    }
  for (const auto& [name, slot] : slot_)  // std::map: by name
    if (!placed[slot]) column_slots.push_back(slot);
  // Tables show the categories some unit spent time in, at most kMaxTextShareColumns of
  // them (the busiest; ties: the earlier column); CSV and JSON show all of them.
  std::vector<int64_t> busy;
  for (std::size_t slot : column_slots) busy.push_back(busy_ns_[slot]);
  std::vector<bool> shown(column_slots.size(), false);
  std::size_t spent = std::count_if(busy.begin(), busy.end(), [](int64_t ns) { return ns > 0; });
  for (std::size_t k : indices_of_largest(busy, std::min(spent, kMaxTextShareColumns))) shown[k] = true;
  if (spent > kMaxTextShareColumns)
    table_.title = fmt::format("Shares of the {} busiest of {} categories (CSV and JSON have every one):",
                               kMaxTextShareColumns, column_slots.size());
  std::vector<std::size_t> column_of(groups_.size());
  for (std::size_t k = 0; k < column_slots.size(); ++k) {
    column_of[column_slots[k]] = table_.columns.size();
    Column share(groups_[column_slots[k]], Kind::percent);
    share.in("share_pct").rank(1);
    if (guessed_[column_slots[k]]) {
      share.titled(marked_name(groups_[column_slots[k]], true));
      if (shown[k]) table_.note = kGuessedNote;
    }
    table_.add_column(shown[k] ? share : share.data_only());
  }
  // Most units have a share in few of the groups: the others stay 0%, unstored.
  std::size_t columns = table_.columns.size();
  if (streamed_) {
    // A row outside the block measured last measures its block (again, when a renderer
    // reads the rows twice, as a table does for its widths): a block's rows at a time.
    std::shared_ptr<Streamed> streamed = streamed_;
    table_.made_rows = streamed->count;
    table_.make_row = [streamed, columns, column_of, slots = slot_](std::size_t r, Row& row) {
      Streamed& s = *streamed;
      if (s.from == SIZE_MAX || r < s.from || r >= s.from + s.block.units.size()) {
        s.from = r - r % kStreamBlock;
        s.block = Stored{};
        s.blocks(s.from, std::min(kStreamBlock, s.count - s.from), [&](const UnitRow& u) { s.block.keep(u, slots); });
        s.block.to_columns(column_of);
      }
      s.block.make_row(r - s.from, columns, row);
    };
    return std::move(table_);
  }
  std::shared_ptr<Stored> stored = stored_;
  stored->to_columns(column_of);
  table_.made_rows = stored->units.size();
  table_.make_row = [stored, columns](std::size_t r, Row& row) { stored->make_row(r, columns, row); };
  return std::move(table_);
}

Document markers_document(const std::vector<KindSummary>& kinds, const std::vector<UnitRow>& units,
                          const MarkersContext& c) {
  UnitsTable table(c.categories);
  for (const UnitRow& u : units) table.add(u);
  return markers_document(kinds, std::move(table), c);
}

Document markers_document(const std::vector<KindSummary>& kinds, UnitsTable&& unit_rows, const MarkersContext& c) {
  Table units = std::move(unit_rows).finish();
  Document doc;
  doc.schema = "jqtrace/markers/1";
  doc.add(Field("file", Kind::text, c.file));
  add_trace_fact_fields(doc, c.facts);
  doc.add(Field("quantiles", Kind::text, std::string(quantile_method_name(c.quantiles))));
  Table& kind_rows = doc.add(kinds_table(kinds));
  const KindSummary* k = c.kind.empty() ? nullptr : find_kind(kinds, c.kind);
  if (!k) {
    doc.heading = fmt::format("{}: {} marker kind{} ({})", c.file, kinds.size(), kinds.size() == 1 ? "" : "s",
                              trace_facts_text(c.facts));
  } else {
    kind_rows.in_text = false;
    std::size_t n = units.row_count();
    doc.heading = fmt::format("{}: {} unit{} of '{}' ({}; {})", c.file, n, n == 1 ? "" : "s", c.kind,
                              unit_rule_text(k->rule), trace_facts_text(c.facts));
    doc.add(Field("kind", Kind::text, c.kind));
    add_unit_rule_fields(doc, k->rule);
    doc.add(std::move(units));
    doc.add(unit_duration_table(*k));
    doc.delimited_table = 1;
  }
  if (c.gates) doc.add(gates_table(*c.gates));
  add_stopped_lanes(doc, c.facts);
  return doc;
}

}  // namespace jqtrace::result
