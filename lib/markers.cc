#include "markers.h"

#include "parallel.h"

namespace jqtrace {

std::vector<KindSummary> summarize_kinds(const Trace& trace, UnitAtRequest unit_at, QuantileMethod quantiles) {
  std::vector<KindSummary> out;
  for (const std::string& kind : marker_kinds(trace)) {
    KindSummary k;
    k.kind = kind;
    k.rule = unit_rule(trace, kind, unit_at);
    std::vector<Unit> units = units_of(trace, kind, k.rule.at);
    k.count = units.size();
    DurationSample durations;
    for (const Unit& u : units) durations.add(u.range.length());
    std::vector<int64_t> times = marker_times(trace, kind);
    if (!times.empty()) {
      k.first_ns = times.front();
      k.last_ns = times.back();
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
  std::vector<Unit> units = units_of(trace, kind, at);
  std::vector<UnitRow> rows(units.size());
  // Units are many and small: the threads share them out, each unit's stats on one thread.
  run_parallel(units.size(), threads, [&](std::size_t k) {
    rows[k] = {units[k], compute_stats(trace, index, units[k].range, options)};
  });
  return rows;
}

}  // namespace jqtrace
