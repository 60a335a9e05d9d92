#pragma once
// Is a change real? Two samples of per-unit values (durations, or a group's busy time in
// each unit) compared as SPEC §2 "Significance" defines it: a two-sided Mann-Whitney U test
// (mid-ranks, tie and continuity corrections, normal approximation), the Hodges-Lehmann
// shift (the median of every difference b - a) with its 95% distribution-free interval,
// and Holm's adjustment over the rows of a table. Values are integers (ns), so every order
// statistic of the n_a * n_b differences is found exactly without listing them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jqtrace {

/// Fewer values than this on a side: no test (the row says "too few units").
inline constexpr std::size_t kMinTestedValues = 6;

struct ShiftTest {
  std::size_t n_a = 0, n_b = 0;
  double median_a = 0, median_b = 0;  ///< the samples' medians (mean of the middle two)
  bool tested = false;                ///< both sides have kMinTestedValues values
  double p = 1;                       ///< two-sided Mann-Whitney p (tested only)
  double shift = 0;                   ///< Hodges-Lehmann: median of b - a
  double ci_lo = 0, ci_hi = 0;        ///< its 95% interval
};

/// The test of b against a (each sorted here; any order given).
ShiftTest compare_samples(std::vector<int64_t> a, std::vector<int64_t> b);

/// Holm's step-down adjustment of p values (in their order): sorted ascending,
/// p_adj(k) = max over j <= k of min(1, (m - j + 1) * p(j)), returned in the given order.
std::vector<double> holm_adjust(const std::vector<double>& p);

}  // namespace jqtrace
