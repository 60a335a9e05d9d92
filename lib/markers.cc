#include "markers.h"

#include "parallel.h"

namespace jqtrace {

std::vector<KindSummary> summarize_kinds(const Trace& trace, UnitAtRequest unit_at, QuantileMethod quantiles) {
  std::vector<KindSummary> out;
  std::vector<std::string> kinds = marker_kinds(trace);
  std::vector<Markers> markers = markers_of_kinds(trace, kinds);  // one pass for every kind
  Range whole = whole_trace(trace);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const std::string& kind = kinds[i];
    KindSummary k;
    k.kind = kind;
    k.rule = unit_rule(markers[i], whole, unit_at);
    k.count = markers[i].ts.size();  // a unit a marker
    DurationSample durations;
    durations.reserve(k.count);
    for_each_unit(markers[i], whole, k.rule.at, [&](std::size_t, Range r) { durations.add(r.length()); });
    if (k.count) {
      k.first_ns = markers[i].ts.front();
      k.last_ns = markers[i].ts.back();
    }
    k.unit = durations.summarize(quantiles);
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<UnitRow> unit_rows(const Trace& trace, const SpanIndex& index, std::string_view kind, UnitAt at,
                               unsigned threads) {
  StatsOptions options;
  options.by = trace.jobque ? GroupBy::category : GroupBy::cat;
  options.distributions = false;
  options.lanes = false;
  std::vector<Unit> units = units_of(trace, kind, at);
  std::vector<UnitRow> rows(units.size());
  // Units are many and small: the threads share them out, each unit's stats on one thread.
  run_parallel(units.size(), threads, [&](std::size_t k) {
    rows[k] = {units[k], compute_stats(trace, index, units[k].range, options)};
  });
  return rows;
}

}  // namespace jqtrace
