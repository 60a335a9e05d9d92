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

/// The share of units in which something runs (a group with busy time in it), compared
/// between the sides: in how many of each side's units it runs, and whether the share
/// moved (SPEC §2 "Significance", the units a group runs in).
struct ProportionTest {
  std::size_t hits_a = 0, n_a = 0, hits_b = 0, n_b = 0;
  bool tested = false;               ///< both sides have kMinTestedValues units
  double p = 1;                      ///< two-sided, pooled z with continuity correction
  double delta_pp = 0;               ///< share of B's units - share of A's, in points
  double ci_lo_pp = 0, ci_hi_pp = 0; ///< its 95% interval (Newcombe's, from Wilson's)
  double pct_a() const { return n_a ? 100.0 * static_cast<double>(hits_a) / static_cast<double>(n_a) : 0; }
  double pct_b() const { return n_b ? 100.0 * static_cast<double>(hits_b) / static_cast<double>(n_b) : 0; }
};

/// The test of B's share hits_b / n_b against A's hits_a / n_a.
ProportionTest compare_proportions(std::size_t hits_a, std::size_t n_a, std::size_t hits_b, std::size_t n_b);

/// Holm's step-down adjustment of p values (in their order): sorted ascending,
/// p_adj(k) = max over j <= k of min(1, (m - j + 1) * p(j)), returned in the given order.
std::vector<double> holm_adjust(const std::vector<double>& p);

}  // namespace jqtrace
