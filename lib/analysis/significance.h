#pragma once
// Is a change real? Two samples of per-unit values (durations, or a group's busy time in
// each unit) compared as SPEC §2 "Significance" defines it: a two-sided Mann-Whitney U test
// (mid-ranks, tie and continuity corrections, normal approximation), the change as a
// *ratio* (Hodges-Lehmann on the logs: the median of every log b - log a) with its 95%
// distribution-free interval, the Hodges-Lehmann shift in ns beside it, and Holm's
// adjustment over a family of tests. Samples may be split into strata (a layer's arg):
// then van Elteren's stratified rank test, and the ratio of the pooled within-stratum
// pairs. Values are integers (ns), so every order statistic of the pairs is found exactly
// without listing them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jqtrace {

/// Fewer values than this on a side: no test (the row says "too few units").
inline constexpr std::size_t kMinTestedValues = 6;
/// A stratified comparison needs this many values of every stratum on each side.
inline constexpr std::size_t kMinStratumValues = 3;

struct ShiftTest {
  std::size_t n_a = 0, n_b = 0;        ///< the values compared (positive ones)
  std::size_t left_out_a = 0, left_out_b = 0;  ///< values of 0 (or below): no ratio of them, left out
  double median_a = 0, median_b = 0;   ///< the samples' medians (mean of the middle two)
  bool tested = false;                 ///< both sides have kMinTestedValues values
  double p = 1;                        ///< two-sided Mann-Whitney (or van Elteren) p (tested only)
  double ratio = 1;                    ///< exp(median of log b - log a)
  double ratio_lo = 1, ratio_hi = 1;   ///< its 95% interval
  double shift = 0;                    ///< Hodges-Lehmann in ns: median of b - a
  std::size_t strata = 0;              ///< > 1: compared within this many strata
  uint64_t digest = 0;                 ///< equal for identical samples (one test, not two)

  double shift_pct() const { return 100 * (ratio - 1); }
  double ci_lo_pct() const { return 100 * (ratio_lo - 1); }
  double ci_hi_pct() const { return 100 * (ratio_hi - 1); }
  bool stratified() const { return strata > 1; }
};

/// The test of b against a (each sorted here; any order given).
ShiftTest compare_samples(std::vector<int64_t> a, std::vector<int64_t> b);

/// One stratum's two samples (a layer arg's units on each side).
struct Stratum {
  std::vector<int64_t> a, b;
};

/// The stratified test of b against a: van Elteren's p (weights 1/(N_s + 1), mid-ranks and
/// the tie correction within each stratum, no continuity correction), the ratio and shift
/// from the pairs within strata (the interval's rank rule over their count, with the
/// variance of the sum of the strata's U). One stratum is compare_samples.
ShiftTest compare_strata(std::vector<Stratum> strata);

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

/// Holm over the distinct tests among p: values of equal keys (rows of identical samples,
/// ShiftTest::digest) are one test, counted once in m, and share its p_adj.
std::vector<double> holm_adjust_distinct(const std::vector<double>& p, const std::vector<uint64_t>& keys);

}  // namespace jqtrace
