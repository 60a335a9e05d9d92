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
  std::vector<double> d;
  for (int64_t x : a)
    for (int64_t y : b) d.push_back(static_cast<double>(y - x));
  std::sort(d.begin(), d.end());
  t.shift = median(d);
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), n = na + nb;
  double c = std::floor(na * nb / 2 - 1.959964 * std::sqrt(na * nb * (n + 1) / 12));
  std::size_t lo = c < 0 ? 0 : static_cast<std::size_t>(c);
  t.ci_lo = d[lo];
  t.ci_hi = d[d.size() - 1 - lo];
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
  CHECK(got.ci_lo == want.ci_lo);
  CHECK(got.ci_hi == want.ci_hi);
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
  // c = floor(18 - 1.959964 * sqrt(36 * 13 / 12)) = floor(5.76) = 5: the 6th smallest and largest.
  CHECK(t.ci_lo == 3);
  CHECK(t.ci_hi == 9);
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
  CHECK(t.ci_lo > 150);
  CHECK(t.ci_hi < 450);
  CHECK((t.ci_lo <= 300 && 300 <= t.ci_hi));
  check_same(t, reference(a, b));
}

TEST_CASE("significance: random samples, with and without ties, match the reference exactly") {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 300; ++round) {
    std::size_t na = 1 + rng() % 40, nb = 1 + rng() % 40;
    int64_t spread = round % 3 == 0 ? 5 : 1'000'000;  // small spreads: many ties
    int64_t offset = static_cast<int64_t>(rng() % 3) * spread / 4;
    std::vector<int64_t> a(na), b(nb);
    for (int64_t& v : a) v = static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
    for (int64_t& v : b) v = offset + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
    INFO("round " << round << " n_a " << na << " n_b " << nb);
    check_same(compare_samples(a, b), reference(a, b));
  }
}

TEST_CASE("significance: times near the ends of int64 do not overflow the search") {
  int64_t big = int64_t{1} << 61;
  ShiftTest t = compare_samples({-big, -big + 1, -big + 2}, {big, big - 1, big - 2});
  CHECK(t.shift == static_cast<double>(2 * big - 2));
  CHECK(t.ci_lo == static_cast<double>(2 * big - 4));
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
