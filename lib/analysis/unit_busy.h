#pragma once
// Each unit's busy time by category (jobque traces): what a unit's bar in `report` draws.
// compute_stats_of_ranges gives the same busy numbers with everything else a range has
// (events, waits, publishes, every group), at ~200 instructions a span a kind; the bars
// need only busy, so this walks the spans once for every kind's units together and does
// little more per span than add its clipped time.
#include <cstdint>
#include <optional>
#include <vector>

#include "scope.h"
#include "stats.h"
#include "trace.h"

namespace jqtrace {

/// One category's busy time in a unit and its share of the unit's busy time.
struct CategoryBusy {
  uint32_t category = 0;    ///< index into Trace::categories
  int64_t busy_ns = 0;      ///< > 0
  double share_pct = 0;
};

/// busy[k][u]: the categories with busy time in unit u of units[k] — as compute_stats by
/// category would give its groups with busy time: the same busy and share, in its order
/// (busy descending, then name, then category index).
using UnitsBusy = std::vector<std::vector<std::vector<CategoryBusy>>>;

/// The busy time of every unit of every list, on `threads` threads (the same at any
/// count). Nothing when the trace is not a jobque trace, when a list's units are not in
/// time order without overlaps (a kind's units are), or when the tallies (units times
/// categories, a copy a thread) would not be small beside the trace: callers then use
/// compute_stats_of_ranges.
std::optional<UnitsBusy> busy_by_category_of_units(const Trace& trace, const SpanIndex& index,
                                                   const std::vector<std::vector<Unit>>& units, unsigned threads);

}  // namespace jqtrace
