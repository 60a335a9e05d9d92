// The significance of a change (SPEC §2): against hand-checked cases and against a small,
// slow reference written here from the definitions (every difference listed and sorted,
// ranks by counting), on random samples with and without ties.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "significance.h"

using namespace jqtrace;

namespace {

/// The reference: the definitions as written, quadratic and plain.
ShiftTest reference(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  ShiftTest t;
  t.n_a = a.size();
  t.n_b = b.size();
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  t.median_a = median(std::vector<double>(a.begin(), a.end()));
  t.median_b = median(std::vector<double>(b.begin(), b.end()));
  std::vector<double> d, logs;
  for (int64_t x : a)
    for (int64_t y : b) {
      d.push_back(static_cast<double>(y - x));
      logs.push_back(std::log(static_cast<double>(y)) - std::log(static_cast<double>(x)));
    }
  std::sort(d.begin(), d.end());
  std::sort(logs.begin(), logs.end());
  t.shift = median(d);
  t.ratio = std::exp(median(logs));
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), n = na + nb;
  double c = std::floor(na * nb / 2 - 1.959964 * std::sqrt(na * nb * (n + 1) / 12));
  std::size_t lo = c < 0 ? 0 : static_cast<std::size_t>(c);
  t.ratio_lo = std::exp(logs[lo]);
  t.ratio_hi = std::exp(logs[logs.size() - 1 - lo]);
  // Mid-rank of v: the values below it, plus the mean rank within its ties.
  std::vector<int64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  auto rank = [&](int64_t v) {
    double below = 0, equal = 0;
    for (int64_t w : all) below += w < v, equal += w == v;
    return below + (equal + 1) / 2;
  };
  double r_b = 0;
  for (int64_t y : b) r_b += rank(y);
  std::map<int64_t, double> tie;
  for (int64_t w : all) tie[w] += 1;
  double ties = 0;
  for (auto& [v, count] : tie) ties += count * count * count - count;
  double u = r_b - nb * (nb + 1) / 2, mu = na * nb / 2;
  double sigma = std::sqrt(na * nb / 12 * ((n + 1) - ties / (n * (n - 1))));
  t.tested = a.size() >= 6 && b.size() >= 6;
  t.p = sigma > 0 ? std::min(1.0, std::erfc(std::max(0.0, std::fabs(u - mu) - 0.5) / sigma / std::sqrt(2.0))) : 1.0;
  return t;
}

void check_same(const ShiftTest& got, const ShiftTest& want) {
  CHECK(got.n_a == want.n_a);
  CHECK(got.n_b == want.n_b);
  CHECK(got.median_a == want.median_a);
  CHECK(got.median_b == want.median_b);
  CHECK(got.shift == want.shift);
  // The logs are the reference's: exact up to the rounding of log and exp.
  CHECK(got.ratio == doctest::Approx(want.ratio).epsilon(1e-12));
  CHECK(got.ratio_lo == doctest::Approx(want.ratio_lo).epsilon(1e-12));
  CHECK(got.ratio_hi == doctest::Approx(want.ratio_hi).epsilon(1e-12));
  CHECK(got.tested == want.tested);
  if (want.tested) CHECK(std::fabs(got.p - want.p) <= 1e-12);
}

}  // namespace

TEST_CASE("significance: two samples apart, by hand") {
  // Ranks of b: 7..12, R_B = 57, U = 57 - 21 = 36, mu = 18, sigma^2 = 36/12 * 13 = 39,
  // z = (18 - 0.5) / sqrt(39) = 2.80224, p = erfc(z / sqrt 2) = 0.0050749 (scipy's
  // mannwhitneyu, asymptotic with continuity, gives the same).
  ShiftTest t = compare_samples({1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12});
  CHECK(t.tested);
  CHECK(t.p == doctest::Approx(0.005074868097940257).epsilon(1e-12));
  CHECK(t.shift == 6);    // the 36 differences run 1..11, 6 in the middle
  CHECK(t.median_a == 3.5);
  CHECK(t.median_b == 9.5);
  // The 36 ratios b/a run from 7/6 to 12; sorted, the 18th and 19th are 8/3 and 11/4: the
  // median of the logs is their mean, the ratio sqrt(8/3 * 11/4) = sqrt(22/3).
  CHECK(t.ratio == doctest::Approx(std::sqrt(22.0 / 3)).epsilon(1e-15));
  // c = floor(18 - 1.959964 * sqrt(36 * 13 / 12)) = 5: the 6th smallest and largest, 5/3 and 7.
  CHECK(t.ratio_lo == doctest::Approx(5.0 / 3).epsilon(1e-15));
  CHECK(t.ratio_hi == 7.0);
  CHECK(t.shift_pct() == doctest::Approx(100 * (std::sqrt(22.0 / 3) - 1)));
  CHECK(t.ci_lo_pct() == doctest::Approx(100 * (5.0 / 3 - 1)));
  check_same(t, reference({1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}));
}

TEST_CASE("significance: ties take mid-ranks and shrink the variance") {
  ShiftTest t = compare_samples({1, 1, 2, 2, 3, 3}, {2, 2, 3, 3, 4, 4});
  CHECK(t.p == doctest::Approx(0.11334550921952588).epsilon(1e-12));
  check_same(t, reference({1, 1, 2, 2, 3, 3}, {2, 2, 3, 3, 4, 4}));
}

TEST_CASE("significance: identical samples, one value everywhere, too few values") {
  ShiftTest same = compare_samples({5, 6, 7, 8, 9, 10}, {5, 6, 7, 8, 9, 10});
  CHECK(same.p == 1.0);  // |U - mu| = 0: z 0 after the continuity correction
  CHECK(same.shift == 0);
  ShiftTest flat = compare_samples({4, 4, 4, 4, 4, 4}, {4, 4, 4, 4, 4, 4, 4});
  CHECK(flat.p == 1.0);  // sigma 0: p 1
  CHECK(flat.shift == 0);
  CHECK(same.ratio == 1.0);
  CHECK(same.digest == compare_samples({10, 9, 8, 7, 6, 5}, {5, 6, 7, 8, 9, 10}).digest);  // the same samples
  CHECK(same.digest != compare_samples({5, 6, 7, 8, 9, 10}, {5, 6, 7, 8, 9, 11}).digest);
  ShiftTest few = compare_samples({1, 2, 3, 4, 5}, {100, 200, 300, 400, 500, 600});
  CHECK_FALSE(few.tested);
  CHECK(few.p == 1.0);
  CHECK(few.shift > 0);  // described, never tested
  ShiftTest none = compare_samples({}, {1, 2});
  CHECK_FALSE(none.tested);
  CHECK(none.n_a == 0);
}

TEST_CASE("significance: a one-sided shift moves the interval with it") {
  std::vector<int64_t> a, b;
  for (int64_t i = 0; i < 40; ++i) {
    a.push_back(1000 + (i * 37) % 101);
    b.push_back(1300 + (i * 53) % 101);
  }
  ShiftTest t = compare_samples(a, b);
  CHECK(t.p < 1e-6);
  // A's median ~1050, B's ~1350: the ratio ~1.29, its interval about it, 1 outside.
  CHECK(t.ratio_lo > 1.15);
  CHECK(t.ratio_hi < 1.45);
  CHECK((t.ratio_lo <= 1.29 && 1.29 <= t.ratio_hi));
  check_same(t, reference(a, b));
}

TEST_CASE("significance: random samples, with and without ties, match the reference exactly") {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 300; ++round) {
    std::size_t na = 1 + rng() % 40, nb = 1 + rng() % 40;
    int64_t spread = round % 3 == 0 ? 5 : 1'000'000;  // small spreads: many ties
    int64_t offset = static_cast<int64_t>(rng() % 3) * spread / 4;
    std::vector<int64_t> a(na), b(nb);
    for (int64_t& v : a) v = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
    for (int64_t& v : b) v = 1 + offset + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
    INFO("round " << round << " n_a " << na << " n_b " << nb);
    check_same(compare_samples(a, b), reference(a, b));
  }
}

TEST_CASE("significance: times near int64's end do not overflow the exact comparisons") {
  int64_t big = int64_t{1} << 61;
  ShiftTest t = compare_samples({1, 2, 3}, {big, big - 1, big - 2});
  CHECK(t.shift == static_cast<double>(big - 2 - 2));  // the median of the 9 differences
  CHECK(t.ratio == doctest::Approx(static_cast<double>(big - 1) / 2).epsilon(1e-15));
}

TEST_CASE("significance: zeros have no ratio: left out of both the ratio and the test, and counted") {
  ShiftTest t = compare_samples({0, 10, 11, 12, 13, 14, 15}, {20, 22, 24, 26, 28, 30, 0, 0});
  CHECK(t.left_out_a == 1);
  CHECK(t.left_out_b == 2);
  CHECK(t.n_a == 6);
  CHECK(t.n_b == 6);
  check_same(t, reference({10, 11, 12, 13, 14, 15}, {20, 22, 24, 26, 28, 30}));
}

TEST_CASE("significance: a ratio is read as a ratio whatever the scale (the log makes it so)") {
  // B is A times 1.25 exactly: every spread of sizes gives the ratio 1.25, where a shift in
  // % of A's median would depend on how sizes spread.
  std::vector<int64_t> a, b;
  for (int64_t i = 0; i < 30; ++i) {
    a.push_back(1000 * (1 + i * i));
    b.push_back(1250 * (1 + i * i));
  }
  ShiftTest t = compare_samples(a, b);
  CHECK(t.ratio == doctest::Approx(1.25).epsilon(1e-12));
  CHECK(t.ratio_lo <= 1.25);
  CHECK(t.ratio_hi >= 1.25);
}

namespace {

/// van Elteren's p by its definition: per stratum, U of b by counting (ties half), its
/// variance with the tie correction, weights 1/(N+1).
double van_elteren_reference(const std::vector<Stratum>& strata) {
  double stat = 0, mean = 0, var = 0;
  for (const Stratum& s : strata) {
    double u = 0;
    for (int64_t x : s.a)
      for (int64_t y : s.b) u += y > x ? 1 : y == x ? 0.5 : 0;
    double na = static_cast<double>(s.a.size()), nb = static_cast<double>(s.b.size()), n = na + nb;
    std::map<int64_t, double> tie;
    for (int64_t v : s.a) tie[v] += 1;
    for (int64_t v : s.b) tie[v] += 1;
    double ties = 0;
    for (auto& [v, c] : tie) ties += c * c * c - c;
    double w = 1 / (n + 1);
    stat += w * u;
    mean += w * na * nb / 2;
    var += w * w * na * nb / 12 * ((n + 1) - ties / (n * (n - 1)));
  }
  return std::min(1.0, std::erfc(std::fabs(stat - mean) / std::sqrt(var) / std::sqrt(2.0)));
}

}  // namespace

TEST_CASE("significance: strata: van Elteren's p and the ratio of the pairs within strata, against listing them") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 60; ++round) {
    std::size_t count = 2 + rng() % 5;
    std::vector<Stratum> strata(count);
    std::vector<double> logs;
    double variance = 0;
    for (std::size_t s = 0; s < count; ++s) {
      int64_t scale = 1000 * static_cast<int64_t>(1 + s * 7);  // strata of different sizes
      std::size_t na = 3 + rng() % 6, nb = 3 + rng() % 6;
      for (std::size_t i = 0; i < na; ++i) strata[s].a.push_back(scale + static_cast<int64_t>(rng() % (round % 2 ? 5 : 500)));
      for (std::size_t i = 0; i < nb; ++i) strata[s].b.push_back(scale + 100 + static_cast<int64_t>(rng() % 500));
      for (int64_t x : strata[s].a)
        for (int64_t y : strata[s].b) logs.push_back(std::log(static_cast<double>(y)) - std::log(static_cast<double>(x)));
      variance += static_cast<double>(na * nb) * static_cast<double>(na + nb + 1) / 12;
    }
    std::sort(logs.begin(), logs.end());
    std::size_t m = logs.size();
    double mid = m % 2 ? logs[m / 2] : (logs[m / 2 - 1] + logs[m / 2]) / 2;
    double c = std::floor(static_cast<double>(m) / 2 - 1.959964 * std::sqrt(variance));
    std::size_t lo = c < 0 ? 0 : static_cast<std::size_t>(c);
    INFO("round " << round);
    ShiftTest t = compare_strata(strata);
    CHECK(t.strata == count);
    CHECK(t.stratified());
    CHECK(t.ratio == doctest::Approx(std::exp(mid)).epsilon(1e-12));
    CHECK(t.ratio_lo == doctest::Approx(std::exp(logs[lo])).epsilon(1e-12));
    CHECK(t.ratio_hi == doctest::Approx(std::exp(logs[m - 1 - lo])).epsilon(1e-12));
    CHECK(t.p == doctest::Approx(van_elteren_reference(strata)).epsilon(1e-12));
  }
}

TEST_CASE("significance: strata: a stratum empty on a side has no pairs, and one stratum is the plain test") {
  Stratum full{{10, 11, 12, 13, 14, 15}, {20, 21, 22, 23, 24, 25}}, half{{1, 2, 3}, {}};
  ShiftTest t = compare_strata({full, half});
  CHECK(t.strata == 1);
  CHECK_FALSE(t.stratified());
  CHECK(t.n_a == 9);  // the sample's values, whether or not they pair
  ShiftTest plain = compare_samples(full.a, full.b);
  CHECK(t.p == plain.p);
  CHECK(t.ratio == plain.ratio);
}

TEST_CASE("Holm over distinct tests: equal keys are one test, counted once, sharing its p_adj") {
  // Two rows of one sample (key 7) and one other: m = 2, not 3.
  std::vector<double> adj = holm_adjust_distinct({0.02, 0.02, 0.04}, {7, 7, 9});
  CHECK(adj[0] == doctest::Approx(0.04));
  CHECK(adj[1] == doctest::Approx(0.04));
  CHECK(adj[2] == doctest::Approx(0.04));
  CHECK(holm_adjust({0.02, 0.02, 0.04})[0] == doctest::Approx(0.06));  // as three tests
}

TEST_CASE("Holm: step-down, monotone, capped at 1, in the given order") {
  std::vector<double> adj = holm_adjust({0.01, 0.04, 0.03, 0.005});
  // Sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> 0.06.
  CHECK(adj[3] == doctest::Approx(0.02));
  CHECK(adj[0] == doctest::Approx(0.03));
  CHECK(adj[2] == doctest::Approx(0.06));
  CHECK(adj[1] == doctest::Approx(0.06));
  CHECK(holm_adjust({0.6, 0.9})[0] == 1.0);
  CHECK(holm_adjust({}).empty());
}
