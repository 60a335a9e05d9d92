#pragma once
// The `changes` table of `diff` (issue 42): is a change real? Each side's units of every
// marker kind, pooled over its runs, give samples: the units' durations, and each group's
// busy time in each unit. Sides are compared sample against sample (significance.h), and
// the p values of all rows are adjusted together (Holm), so that a table of many rows does
// not cry wolf.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scope.h"
#include "significance.h"
#include "trace.h"

namespace jqtrace {

class SpanIndex;

/// One kind's samples on one side, pooled over its runs.
struct KindSamples {
  std::string kind;
  bool ambiguous = false;                ///< some run cut its units by an ambiguous auto rule
  std::vector<int64_t> dur_ns;           ///< each unit's duration
  /// Each group's busy time in each unit (0 where it had none): one vector a group, as
  /// long as dur_ns. Groups: categories of jobque traces, cat of others (as markers --kind).
  std::map<std::string, std::vector<int64_t>> busy_ns;
  /// With latency samples (add_unit_samples' latency): the marker lane's time in each unit
  /// by class and by group (latency.h), keyed by the row's label (latency_row_label).
  std::map<std::string, std::vector<int64_t>> latency_ns;
};

/// The label of a latency row of the changes table: "latency: imbalance" (a class),
/// "latency: ffn chain" (a group's wall on the marker lane).
std::string latency_row_label(const std::string& class_or_group);

/// Adds the units of every marker kind of trace (its rule: the request's, or auto's) to
/// pooled, kind by kind, on `threads` threads; with latency, also each unit's latency parts
/// (on the lane holding the kind's markers).
void add_unit_samples(const Trace& trace, const SpanIndex& index, const UnitRequest& unit_at, unsigned threads,
                      std::vector<KindSamples>* pooled, bool latency = false);

/// The group of a kind's own row: the units' durations.
inline constexpr const char* kUnitRow = "(unit)";

struct ChangeRow {
  std::string kind, group;  ///< group kUnitRow: the unit durations
  ShiftTest test;
  double p_adj = 1;         ///< Holm over the table's tests (tested rows of units not cut by a guess)
  bool significant = false; ///< tested, p_adj < alpha, and the kind's units not cut by a guess
  bool ambiguous = false;   ///< the kind's units were cut by an ambiguous auto rule
};

/// For every kind both sides have: its unit row, then a row a group with busy time in some
/// unit of either side (busiest first), then the latency rows with time on either side
/// (classes and groups, the most time first); p adjusted over the rows that are tests
/// (tested, and of units not cut by an ambiguous rule).
std::vector<ChangeRow> unit_changes(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b, double alpha);

}  // namespace jqtrace
