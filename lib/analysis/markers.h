#pragma once
// Marker kinds and their units (SPEC §2 "Units"): what the viewer's unit navigation shows.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "quantile.h"
#include "scope.h"
#include "stats.h"
#include "trace.h"

namespace jqtrace {

struct KindSummary {
  std::string kind;
  UnitRule rule;            ///< how this kind's units were cut
  uint64_t count = 0;       ///< units (a marker each; a window's edge markers are not its units)
  int64_t first_ns = 0;     ///< first marker ts
  int64_t last_ns = 0;      ///< last marker ts
  Distribution unit;        ///< unit durations (the last unit ends at the trace end)
};

/// One row per marker kind of the trace, in marker_kinds() order; each kind's units cut
/// by the request's rule (auto: decided per kind).
std::vector<KindSummary> summarize_kinds(const Trace& trace, const UnitRequest& unit_at, QuantileMethod quantiles);

struct UnitRow {
  Unit unit;
  RangeStats stats;         ///< by category, no per-group distributions
};

/// unit_rows a block of units at a time: add(row) for every unit in order, each block's
/// rows freed before the next block is measured. A unit's RangeStats is ~300 bytes a
/// category: the 31,488 layers of a 200 MB trace made 230 MB of them all at once.
void for_each_unit_row(const Trace& trace, const SpanIndex& index, std::string_view kind, const UnitRequest& unit_at,
                       unsigned threads, const std::function<void(const UnitRow&)>& add,
                       std::size_t units_per_block = 1024);
/// The same for units[from, from + count) of units given (a kind's, in any order: markers
/// --kind --sort dur streams its table from them).
void for_each_unit_row(const Trace& trace, const SpanIndex& index, const std::vector<Unit>& units, std::size_t from,
                       std::size_t count, unsigned threads, const std::function<void(const UnitRow&)>& add,
                       std::size_t units_per_block = 1024);

/// Range stats of every unit of kind (which must exist: see marker_kinds()), the units
/// shared among `threads` threads (the same rows at any count).
std::vector<UnitRow> unit_rows(const Trace& trace, const SpanIndex& index, std::string_view kind,
                               const UnitRequest& unit_at, unsigned threads = 1);
/// How a unit is measured: grouped by category (jobque) or cat, no distributions or lanes.
StatsOptions unit_stats_options(const Trace& trace, unsigned threads);
/// The same for some units (a kind's, in order, or some of them).
std::vector<UnitRow> unit_rows_of(const Trace& trace, const SpanIndex& index, std::vector<Unit> units,
                                  unsigned threads = 1);

}  // namespace jqtrace
