#include "significance.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace jqtrace {
namespace {

double median_of_sorted(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  std::size_t mid = v.size() / 2;
  if (v.size() % 2) return static_cast<double>(v[mid]);
  return (static_cast<double>(v[mid - 1]) + static_cast<double>(v[mid])) / 2.0;
}

/// The Mann-Whitney p of sorted a and b (SPEC §2): mid-ranks over both, U of b, the normal
/// approximation with the tie correction and the continuity correction.
double mann_whitney_p(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
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
  double u = rank_sum_b - nb * (nb + 1) / 2.0;
  double mu = na * nb / 2.0;
  double variance = na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1)));
  if (!(variance > 0)) return 1.0;
  double z = std::max(0.0, std::fabs(u - mu) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

/// The order statistics of the differences b - a (a and b sorted), without listing them:
/// the k-th smallest (0-based) is the smallest integer x that at least k + 1 differences
/// do not exceed, found by bisection on x with a linear count.
class Differences {
 public:
  Differences(const std::vector<int64_t>& a, const std::vector<int64_t>& b) : a_(a), b_(b) {}
  uint64_t size() const { return static_cast<uint64_t>(a_.size()) * b_.size(); }

  int64_t kth(uint64_t k) const {
    int64_t lo = b_.front() - a_.back(), hi = b_.back() - a_.front();  // min and max difference
    while (lo < hi) {
      // hi - lo can pass int64 for times near its edges: halved as unsigned, then added.
      int64_t mid = lo + static_cast<int64_t>((static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)) / 2);
      if (at_most(mid) >= k + 1) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

 private:
  /// How many b_j - a_i are <= x: for each b_j (ascending) the a_i >= b_j - x, a pointer
  /// that only moves right.
  uint64_t at_most(int64_t x) const {
    uint64_t count = 0;
    std::size_t i = 0;
    for (int64_t bj : b_) {
      while (i < a_.size() && a_[i] < bj - x) ++i;
      count += a_.size() - i;
    }
    return count;
  }
  const std::vector<int64_t>& a_;
  const std::vector<int64_t>& b_;
};

}  // namespace

ShiftTest compare_samples(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  ShiftTest t;
  t.n_a = a.size();
  t.n_b = b.size();
  t.median_a = median_of_sorted(a);
  t.median_b = median_of_sorted(b);
  if (a.empty() || b.empty()) return t;
  Differences d(a, b);
  uint64_t n = d.size();
  t.shift = n % 2 ? static_cast<double>(d.kth(n / 2))
                  : (static_cast<double>(d.kth(n / 2 - 1)) + static_cast<double>(d.kth(n / 2))) / 2.0;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double c = std::floor(na * nb / 2.0 - 1.959964 * std::sqrt(na * nb * (na + nb + 1) / 12.0));
  uint64_t lo = c < 0 ? 0 : static_cast<uint64_t>(c);
  t.ci_lo = static_cast<double>(d.kth(lo));
  t.ci_hi = static_cast<double>(d.kth(n - 1 - lo));
  t.tested = a.size() >= kMinTestedValues && b.size() >= kMinTestedValues;
  if (t.tested) t.p = mann_whitney_p(a, b);
  return t;
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

}  // namespace jqtrace
