#pragma once
// Pieces several result documents share: the scope's fields and heading words, range
// totals, and the gate and baseline tables that stats, markers and phases append.
#include <string>
#include <vector>

#include "gate.h"
#include "gate_metrics.h"
#include "model.h"
#include "scope.h"
#include "stats.h"

namespace jqtrace::result {

/// part as a percentage of whole (0 when whole is not positive).
inline double percent_of(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }
inline double percent_of(int64_t part, int64_t whole) {
  return percent_of(static_cast<double>(part), static_cast<double>(whole));
}

/// A marker's arg as a cell: missing (null, an empty field) when the marker had none.
inline Value marker_arg_value(int64_t arg) { return arg == kNoArg ? Value() : Value(arg); }

/// What every document says of the trace it read (SPEC §1.4 rule 5): how its categories
/// were named, whether the file was cut off, and the lanes that stopped recording early.
struct TraceFacts {
  bool jobque = false;
  Attribution attribution = Attribution::none;
  bool truncated = false;
  uint64_t truncated_at_byte = 0;
  bool profile_unused = false;  ///< the profile registers kinds and categories no event uses
  struct Stopped {
    std::string lane, name;  ///< "pid:tid" and the thread name
    int64_t stop_ns = 0;
  };
  std::vector<Stopped> stopped;
};
TraceFacts trace_facts(const Trace& trace);

/// "attribution", "truncated" (fields, in group) and, when any, the "lanes_stopped_early"
/// table (lane, name, stop_us). Add the table after the document's others: CSV and TSV
/// write the first.
void add_trace_fact_fields(Document& doc, const TraceFacts& facts, const std::string& group = "");
void add_stopped_lanes(Document& doc, const TraceFacts& facts, const std::string& group = "");
/// What a heading says of them: "attribution: profile", "attribution: stage count, names
/// guessed", "; TRUNCATED at byte N", "; 1 lane stopped recording early".
std::string trace_facts_text(const TraceFacts& facts);
/// The footnote of a table with guessed names.
inline constexpr const char* kGuessedNote =
    "* guessed: named by stage count, as the old viewer did (the trace names none)";
/// "name*" for a guessed category (the tables' footnote explains the mark).
std::string marked_name(const std::string& name, bool guessed);

/// How a kind's units were cut: "unit_at" ("start"|"end"), "unit_at_auto", "unit_at_rule"
/// ("end (auto: head 1.21 gaps, tail 0.05)"), and for auto "unit_at_ambiguous" with the
/// evidence "unit_at_head_gaps", "unit_at_tail_gaps".
void add_unit_rule_fields(Document& doc, const UnitRule& rule, const std::string& group = "");

/// "scope": its label, and for marker scopes the unit rule's fields.
void add_scope_fields(Document& doc, const Scope& scope, const std::string& group = "");

/// How a rule reads in a heading: "units end at their markers, auto: head 1.21 gaps, tail 0.05".
std::string unit_rule_text(UnitRule rule);

/// What a heading says of the scope before its range: "" for the whole trace or a time
/// range (the range says it all), "--marker token 3 (units end at their markers, auto), "
/// for units, "window --marker ... , " for a window's own range.
std::string scope_prefix(const Scope& scope);

/// The columns a range's totals fill (events, busy_us, wait_us, idle_pct, parallelism,
/// publishes), appended to t; row_totals gives the matching values.
void add_range_total_columns(Table& t);
void add_range_totals(Row& row, const RangeStats& s);
/// The same from the numbers (a table that keeps numbers, not RangeStats, per row).
void add_range_totals(Row& row, uint64_t events, int64_t busy_ns, int64_t wait_ns, double idle_pct, double parallelism,
                      uint64_t publishes);

/// "gates": expr, value, ok (and, for people, status ok/FAILED and the value rounded so
/// it reads on the right side of its threshold). Markdown writes it as a checklist.
Table gates_table(const std::vector<GateResult>& results);

/// "baseline": {"file", "max_share_delta_pp", "groups": [name, share_pct,
/// baseline_share_pct, delta_pp, ok]}.
void add_baseline(Document& doc, const std::vector<ShareDelta>& deltas, const std::string& file,
                  double max_share_delta_pp);

}  // namespace jqtrace::result
