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

/// "scope": its label, and for marker scopes "unit_at": "start"|"end" and "unit_at_auto".
void add_scope_fields(Document& doc, const Scope& scope, const std::string& group = "");

/// How a rule reads in a heading: "units end at their markers, auto".
std::string unit_rule_text(UnitRule rule);

/// What a heading says of the scope before its range: "" for the whole trace or a time
/// range (the range says it all), "--marker token 3 (units end at their markers, auto), "
/// for units, "window --marker ... , " for a window's own range.
std::string scope_prefix(const Scope& scope);

/// The columns a range's totals fill (events, busy_us, wait_us, idle_pct, parallelism,
/// publishes), appended to t; row_totals gives the matching values.
void add_range_total_columns(Table& t);
void add_range_totals(Row& row, const RangeStats& s);

/// "gates": expr, value, ok (and, for people, status ok/FAILED and the value rounded so
/// it reads on the right side of its threshold). Markdown writes it as a checklist.
Table gates_table(const std::vector<GateResult>& results);

/// "baseline": {"file", "max_share_delta_pp", "groups": [name, share_pct,
/// baseline_share_pct, delta_pp, ok]}.
void add_baseline(Document& doc, const std::vector<ShareDelta>& deltas, const std::string& file,
                  double max_share_delta_pp);

}  // namespace jqtrace::result
