#include "significance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <utility>

namespace jqtrace {
namespace {

double median_of_sorted(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  std::size_t mid = v.size() / 2;
  if (v.size() % 2) return static_cast<double>(v[mid]);
  return (static_cast<double>(v[mid - 1]) + static_cast<double>(v[mid])) / 2.0;
}

/// Mann-Whitney's U of sorted b against sorted a with its null mean and variance: mid-ranks
/// over both, and the variance's tie correction (SPEC §2).
struct RankSum {
  double u = 0, mean = 0, variance = 0;
};

RankSum rank_sum(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), n = na + nb;
  double rank_sum_b = 0, ties = 0;  // Σ ranks of b; Σ (t³ - t) over tie groups
  std::size_t i = 0, j = 0;
  double next_rank = 1;  // the rank of the next value taken (1-based)
  while (i < a.size() || j < b.size()) {
    int64_t value = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    std::size_t from_a = 0, from_b = 0;
    while (i < a.size() && a[i] == value) ++i, ++from_a;
    while (j < b.size() && b[j] == value) ++j, ++from_b;
    double t = static_cast<double>(from_a + from_b);
    double mid_rank = next_rank + (t - 1) / 2.0;
    rank_sum_b += mid_rank * static_cast<double>(from_b);
    ties += t * t * t - t;
    next_rank += t;
  }
  RankSum r;
  r.u = rank_sum_b - nb * (nb + 1) / 2.0;
  r.mean = na * nb / 2.0;
  r.variance = n > 1 ? na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1))) : 0;
  return r;
}

double two_sided_p(double z) { return std::min(1.0, std::erfc(z / std::sqrt(2.0))); }

/// The plain test: Mann-Whitney with the continuity correction.
double mann_whitney_p(const Stratum& s) {
  RankSum r = rank_sum(s.a, s.b);
  if (!(r.variance > 0)) return 1.0;
  return two_sided_p(std::max(0.0, std::fabs(r.u - r.mean) - 0.5) / std::sqrt(r.variance));
}

/// van Elteren's stratified test: the strata's U weighted by 1 / (N_s + 1), so that every
/// stratum counts alike whatever its size (Lehmann's locally most powerful weights).
double van_elteren_p(const std::vector<Stratum>& strata) {
  double statistic = 0, mean = 0, variance = 0;
  for (const Stratum& s : strata) {
    RankSum r = rank_sum(s.a, s.b);
    double weight = 1.0 / static_cast<double>(s.a.size() + s.b.size() + 1);
    statistic += weight * r.u;
    mean += weight * r.mean;
    variance += weight * weight * r.variance;
  }
  if (!(variance > 0)) return 1.0;
  return two_sided_p(std::fabs(statistic - mean) / std::sqrt(variance));
}

__extension__ typedef __int128 Wide;  // products of two ns values, compared exactly

/// A pair (a_i, b_j) of one stratum, by its values.
struct Pair {
  int64_t b = 0, a = 0;
};

/// b - a, compared exactly (128 bits: no overflow near int64's ends).
struct DifferenceOrder {
  static bool less(const Pair& x, const Pair& y) {
    return static_cast<Wide>(x.b) + y.a < static_cast<Wide>(y.b) + x.a;
  }
  static double value(const Pair& x) { return static_cast<double>(x.b) - static_cast<double>(x.a); }
};

/// b / a (a > 0), compared exactly as b_x a_y < b_y a_x: equal fractions tie, as their logs do.
struct RatioOrder {
  static bool less(const Pair& x, const Pair& y) {
    return static_cast<Wide>(x.b) * y.a < static_cast<Wide>(y.b) * x.a;
  }
  static double value(const Pair& x) { return static_cast<double>(x.b) / static_cast<double>(x.a); }
};

/// The order statistics of the pairs within strata (each stratum's a and b sorted) by a
/// value that grows with b and falls with a, without listing them: in stratum s, row j
/// (b_j) holds the values of b_j against a_0..a_n, falling; the k-th smallest is found by
/// pivots drawn at random among the pairs still possible (between the last pivots below
/// and above it). Each row keeps the range of its candidates, [start, end): a pivot's
/// thresholds in a row lie within it and only move right as b_j grows, so one sweep over
/// the rows finds them, touching little more than the candidates. Expected O(log(pairs))
/// sweeps.
template <typename Order>
class PairSelector {
 public:
  explicit PairSelector(const std::vector<Stratum>& strata) : strata_(strata) {}

  uint64_t size() const {
    uint64_t n = 0;
    for (const Stratum& s : strata_) n += static_cast<uint64_t>(s.a.size()) * s.b.size();
    return n;
  }

  /// The k-th smallest value (0-based; k < size()).
  Pair kth(uint64_t k) const {
    std::mt19937_64 random(k + 1);  // the same pivots on every run: a result never varies
    // Every row's candidates: all of a at first (rows of all strata, one after another).
    std::vector<std::size_t> start, end, below_pivot, not_above_pivot;
    for (const Stratum& s : strata_) {
      start.insert(start.end(), s.b.size(), 0);
      end.insert(end.end(), s.b.size(), s.a.size());
    }
    below_pivot.resize(start.size());
    not_above_pivot.resize(start.size());
    while (true) {
      uint64_t open = 0;
      for (std::size_t r = 0; r < start.size(); ++r) open += end[r] - start[r];
      Pair pivot = pick(start, end, std::uniform_int_distribution<uint64_t>(0, open - 1)(random));
      auto [smaller, not_larger] = split(pivot, start, end, &below_pivot, &not_above_pivot);
      if (k < smaller) {
        start.swap(below_pivot);  // the candidates are below the pivot
      } else if (k >= not_larger) {
        end.swap(not_above_pivot);  // ... above it
      } else {
        return pivot;
      }
    }
  }

 private:
  /// The candidate at index `which` among all rows' [start, end).
  Pair pick(const std::vector<std::size_t>& start, const std::vector<std::size_t>& end, uint64_t which) const {
    std::size_t r = 0;
    for (const Stratum& s : strata_)
      for (std::size_t j = 0; j < s.b.size(); ++j, ++r) {
        uint64_t row = end[r] - start[r];
        if (which < row) return {s.b[j], s.a[start[r] + which]};
        which -= row;
      }
    return {};  // unreachable: which < the candidates' count
  }

  /// For every row, the first a_i whose pair is below p (*below) and the first not above it
  /// (*not_above), found within the row's candidates; returns how many pairs of all are
  /// below p, and how many not above it.
  std::pair<uint64_t, uint64_t> split(const Pair& p, const std::vector<std::size_t>& start,
                                      const std::vector<std::size_t>& end, std::vector<std::size_t>* below,
                                      std::vector<std::size_t>* not_above) const {
    uint64_t smaller = 0, not_larger = 0;
    std::size_t r = 0;
    for (const Stratum& s : strata_) {
      std::size_t lt = 0, le = 0;  // both thresholds only move right with j
      for (std::size_t j = 0; j < s.b.size(); ++j, ++r) {
        lt = std::max(lt, start[r]);
        while (lt < end[r] && !Order::less({s.b[j], s.a[lt]}, p)) ++lt;
        le = std::max(le, start[r]);
        while (le < end[r] && Order::less(p, {s.b[j], s.a[le]})) ++le;
        (*below)[r] = lt;
        (*not_above)[r] = le;
        smaller += s.a.size() - lt;
        not_larger += s.a.size() - le;
      }
    }
    return {smaller, not_larger};
  }

  const std::vector<Stratum>& strata_;
};

/// The median of the pairs' values and its 95% interval (SPEC §2): c = floor(M/2 -
/// 1.959964 sqrt(V)) for M pairs and V the variance of the sum of the strata's U (the shift's
/// interval is not printed: with_interval false skips it).
struct Estimate {
  double centre = 0, lo = 0, hi = 0;
};

template <typename Order>
Estimate estimate(const std::vector<Stratum>& strata, double variance, bool geometric, bool with_interval = true) {
  PairSelector<Order> pairs(strata);
  uint64_t m = pairs.size();
  Estimate e;
  double mid = Order::value(pairs.kth(m / 2));
  if (m % 2) {
    e.centre = mid;
  } else {
    double before = Order::value(pairs.kth(m / 2 - 1));
    // The median of logs is the mean of the middle two logs: a geometric mean of ratios.
    e.centre = geometric ? std::sqrt(before) * std::sqrt(mid) : (before + mid) / 2.0;
  }
  if (!with_interval) return e;
  double c = std::floor(static_cast<double>(m) / 2.0 - 1.959964 * std::sqrt(variance));
  uint64_t lo = c < 0 ? 0 : static_cast<uint64_t>(c);
  e.lo = Order::value(pairs.kth(lo));
  e.hi = Order::value(pairs.kth(m - 1 - lo));
  return e;
}

/// A digest of the strata's sorted values: rows whose samples are identical have equal ones.
uint64_t digest_of(const std::vector<Stratum>& strata) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  auto mix = [&](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  };
  for (const Stratum& s : strata) {
    mix(s.a.size());
    for (int64_t v : s.a) mix(static_cast<uint64_t>(v));
    mix(s.b.size());
    for (int64_t v : s.b) mix(static_cast<uint64_t>(v));
  }
  return h;
}

/// Sorts v and drops its values of 0 and below, counting them into *left_out.
void keep_positive(std::vector<int64_t>* v, std::size_t* left_out) {
  std::sort(v->begin(), v->end());
  auto first_positive = std::upper_bound(v->begin(), v->end(), int64_t{0});
  *left_out += static_cast<std::size_t>(first_positive - v->begin());
  v->erase(v->begin(), first_positive);
}

std::vector<int64_t> merged(const std::vector<Stratum>& strata, std::vector<int64_t> Stratum::*side) {
  std::vector<int64_t> all;
  for (const Stratum& s : strata) all.insert(all.end(), (s.*side).begin(), (s.*side).end());
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

ShiftTest compare_strata(std::vector<Stratum> strata) {
  ShiftTest t;
  for (Stratum& s : strata) {
    keep_positive(&s.a, &t.left_out_a);
    keep_positive(&s.b, &t.left_out_b);
  }
  std::vector<int64_t> all_a = merged(strata, &Stratum::a), all_b = merged(strata, &Stratum::b);
  t.n_a = all_a.size();
  t.n_b = all_b.size();
  t.median_a = median_of_sorted(all_a);
  t.median_b = median_of_sorted(all_b);
  // A stratum with nothing on a side has no pairs and no ranks to compare.
  strata.erase(std::remove_if(strata.begin(), strata.end(), [](const Stratum& s) { return s.a.empty() || s.b.empty(); }),
               strata.end());
  if (strata.empty()) return t;
  t.strata = strata.size();
  t.digest = digest_of(strata);
  double variance = 0;
  for (const Stratum& s : strata) {
    double na = static_cast<double>(s.a.size()), nb = static_cast<double>(s.b.size());
    variance += na * nb * (na + nb + 1) / 12.0;
  }
  Estimate ratio = estimate<RatioOrder>(strata, variance, true);
  t.ratio = ratio.centre;
  t.ratio_lo = ratio.lo;
  t.ratio_hi = ratio.hi;
  t.shift = estimate<DifferenceOrder>(strata, variance, false, false).centre;
  t.tested = t.n_a >= kMinTestedValues && t.n_b >= kMinTestedValues;
  if (t.tested) t.p = strata.size() == 1 ? mann_whitney_p(strata.front()) : van_elteren_p(strata);
  return t;
}

ShiftTest compare_samples(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::vector<Stratum> one(1);
  one.front().a = std::move(a);
  one.front().b = std::move(b);
  return compare_strata(std::move(one));
}

namespace {

/// Wilson's 95% score interval of a share hits / n (n > 0).
std::pair<double, double> wilson(double hits, double n) {
  constexpr double z = 1.959964;
  double share = hits / n, z2 = z * z;
  double centre = (share + z2 / (2 * n)) / (1 + z2 / n);
  double half = z / (1 + z2 / n) * std::sqrt(share * (1 - share) / n + z2 / (4 * n * n));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace

ProportionTest compare_proportions(std::size_t hits_a, std::size_t n_a, std::size_t hits_b, std::size_t n_b) {
  ProportionTest t{hits_a, n_a, hits_b, n_b};
  if (n_a == 0 || n_b == 0) return t;
  double na = static_cast<double>(n_a), nb = static_cast<double>(n_b);
  double pa = static_cast<double>(hits_a) / na, pb = static_cast<double>(hits_b) / nb;
  t.delta_pp = 100 * (pb - pa);
  // Newcombe's hybrid score interval of pb - pa: each side's Wilson interval, combined.
  auto [lo_a, hi_a] = wilson(static_cast<double>(hits_a), na);
  auto [lo_b, hi_b] = wilson(static_cast<double>(hits_b), nb);
  t.ci_lo_pp = 100 * ((pb - pa) - std::sqrt((pb - lo_b) * (pb - lo_b) + (hi_a - pa) * (hi_a - pa)));
  t.ci_hi_pp = 100 * ((pb - pa) + std::sqrt((hi_b - pb) * (hi_b - pb) + (pa - lo_a) * (pa - lo_a)));
  t.tested = n_a >= kMinTestedValues && n_b >= kMinTestedValues;
  if (!t.tested) return t;
  double pooled = static_cast<double>(hits_a + hits_b) / (na + nb);
  double sigma = std::sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb));
  if (sigma <= 0) return t;  // every unit or none, both sides: no change (p = 1)
  double z = std::max(0.0, std::fabs(pb - pa) - 0.5 * (1 / na + 1 / nb)) / sigma;
  t.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return t;
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - k) * p[order[k]]));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

std::vector<double> holm_adjust_distinct(const std::vector<double>& p, const std::vector<uint64_t>& keys) {
  std::map<uint64_t, std::size_t> test_of;  // key -> its index among the distinct tests
  std::vector<double> distinct;
  std::vector<std::size_t> which(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    auto [it, added] = test_of.try_emplace(keys[i], distinct.size());
    if (added) distinct.push_back(p[i]);
    which[i] = it->second;
  }
  std::vector<double> adjusted = holm_adjust(distinct), out(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[i] = adjusted[which[i]];
  return out;
}

}  // namespace jqtrace
