#include "markers.h"

#include <algorithm>

#include "timings.h"


namespace jqtrace {

std::vector<KindSummary> summarize_kinds(const Trace& trace, const UnitRequest& unit_at, QuantileMethod quantiles) {
  PhaseClock clock("markers", PhaseKind::serial);
  std::vector<KindSummary> out;
  std::vector<std::string> kinds = marker_kinds(trace);
  UnitPlanner planner(trace, unit_at);
  out.reserve(kinds.size());
  for_each_kind_markers(trace, kinds, [&](std::size_t i, const Markers& markers) {
    KindSummary k;
    k.kind = std::move(kinds[i]);
    KindUnits plan = planner.plan(k.kind, markers);
    k.rule = plan.rule;
    DurationSample durations;
    durations.reserve(markers.size());
    for_each_unit(markers, plan, [&](std::size_t, std::size_t, Range r) { durations.add(r.length()); });
    k.count = durations.size();  // a unit a marker (but those at a window's edges)
    if (k.count) {
      k.first_ns = markers.ts.front();
      k.last_ns = markers.ts.back();
    }
    k.unit = durations.summarize(quantiles);
    out.push_back(std::move(k));
  });
  return out;
}

std::vector<UnitRow> unit_rows(const Trace& trace, const SpanIndex& index, std::string_view kind,
                               const UnitRequest& unit_at, unsigned threads) {
  return unit_rows_of(trace, index, units_of(trace, kind, unit_at), threads);
}

void for_each_unit_row(const Trace& trace, const SpanIndex& index, std::string_view kind, const UnitRequest& unit_at,
                       unsigned threads, const std::function<void(const UnitRow&)>& add, std::size_t units_per_block) {
  std::vector<Unit> units = units_of(trace, kind, unit_at);
  for_each_unit_row(trace, index, units, 0, units.size(), threads, add, units_per_block);
}

void for_each_unit_row(const Trace& trace, const SpanIndex& index, const std::vector<Unit>& units, std::size_t from,
                       std::size_t count, unsigned threads, const std::function<void(const UnitRow&)>& add,
                       std::size_t units_per_block) {
  std::size_t block = std::max<std::size_t>(units_per_block, 1);
  std::size_t end = std::min(units.size(), from + count);
  for (std::size_t at = from; at < end; at += block) {
    auto first = units.begin() + static_cast<std::ptrdiff_t>(at);
    std::vector<Unit> some(first, first + static_cast<std::ptrdiff_t>(std::min(block, end - at)));
    for (const UnitRow& row : unit_rows_of(trace, index, std::move(some), threads)) add(row);
  }
}

StatsOptions unit_stats_options(const Trace& trace, unsigned threads) {
  StatsOptions options;
  options.by = trace.jobque ? GroupBy::category : GroupBy::cat;
  options.distributions = false;
  options.lanes = false;
  options.threads = threads;
  return options;
}

std::vector<UnitRow> unit_rows_of(const Trace& trace, const SpanIndex& index, std::vector<Unit> units, unsigned threads) {
  StatsOptions options = unit_stats_options(trace, threads);
  std::vector<Range> ranges;
  ranges.reserve(units.size());
  for (const Unit& u : units) ranges.push_back(u.range);
  std::vector<RangeStats> stats = compute_stats_of_ranges(trace, index, ranges, options);
  std::vector<UnitRow> rows(units.size());
  for (std::size_t k = 0; k < units.size(); ++k) rows[k] = {std::move(units[k]), std::move(stats[k])};
  return rows;
}

}  // namespace jqtrace
