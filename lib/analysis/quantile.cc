#include "quantile.h"

#include <algorithm>

namespace jqtrace {
namespace {

/// The values at sorted positions `ranks` (ascending) of short ++ long, each found with
/// nth_element on what is left after the previous one: O(n) overall, no full sort.
class OrderStatistics {
 public:
  OrderStatistics(std::vector<uint32_t>& short_values, std::vector<int64_t>& long_values)
      : short_(short_values), long_(long_values) {}

  int64_t at(std::size_t rank) {
    if (rank < short_.size()) return select(short_, rank, short_from_);
    return select(long_, rank - short_.size(), long_from_);
  }

 private:
  /// `from` is where the unsearched part starts: everything before it is <= every value
  /// after it, and v[from - 1] is in its final sorted place. Ranks come in ascending order.
  template <typename T>
  static int64_t select(std::vector<T>& v, std::size_t rank, std::size_t& from) {
    if (rank + 1 > from) {
      std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(rank),
                       v.end());
      from = rank + 1;
    }
    return static_cast<int64_t>(v[rank]);
  }

  std::vector<uint32_t>& short_;
  std::vector<int64_t>& long_;
  std::size_t short_from_ = 0, long_from_ = 0;
};

/// Where Python puts pXX among n sorted values: between data[j] and data[j+1] with weights
/// (100-delta) and delta, in exact integer arithmetic (statistics.quantiles, n=100).
struct Interpolation {
  std::size_t j;
  int64_t delta;
};
Interpolation position(std::size_t n, int xx, QuantileMethod method) {
  if (method == QuantileMethod::inclusive) {  // j, delta = divmod(xx * (n - 1), 100)
    int64_t m = static_cast<int64_t>(n) - 1;
    return {static_cast<std::size_t>(xx * m / 100), xx * m % 100};
  }
  // exclusive: j, delta = divmod(xx * (n + 1), 100), j clamped to 1..n-1, then data[j-1]
  int64_t m = static_cast<int64_t>(n) + 1;
  int64_t j = xx * m / 100;
  j = std::clamp<int64_t>(j, 1, static_cast<int64_t>(n) - 1);
  return {static_cast<std::size_t>(j - 1), xx * m - j * 100};
}

template <typename Lookup>
double interpolate(std::size_t n, int xx, QuantileMethod method, Lookup&& value_at) {
  Interpolation p = position(n, xx, method);
  double lo = static_cast<double>(value_at(p.j)), hi = static_cast<double>(value_at(p.j + 1));
  return (lo * static_cast<double>(100 - p.delta) + hi * static_cast<double>(p.delta)) / 100.0;
}

template <typename Lookup>
double median_of(std::size_t n, Lookup&& value_at) {
  if (n % 2 == 1) return static_cast<double>(value_at(n / 2));
  return (static_cast<double>(value_at(n / 2 - 1)) + static_cast<double>(value_at(n / 2))) / 2.0;
}

}  // namespace

double median(const std::vector<int64_t>& sorted) {
  if (sorted.empty()) return 0;
  return median_of(sorted.size(), [&](std::size_t i) { return sorted[i]; });
}

const char* quantile_method_name(QuantileMethod m) {
  return m == QuantileMethod::inclusive ? "inclusive" : "exclusive";
}

bool parse_quantile_method(std::string_view text, QuantileMethod* m) {
  if (text == "inclusive") *m = QuantileMethod::inclusive;
  else if (text == "exclusive") *m = QuantileMethod::exclusive;
  else return false;
  return true;
}

double percentile(const std::vector<int64_t>& sorted, int xx, QuantileMethod method) {
  return interpolate(sorted.size(), xx, method, [&](std::size_t i) { return sorted[i]; });
}

double summary_percentile(const std::vector<int64_t>& sorted, int xx, QuantileMethod method) {
  if (xx == 50 || sorted.size() <= 3) return median(sorted);
  return percentile(sorted, xx, method);
}

Distribution DurationSample::summarize(QuantileMethod method) {
  Distribution d;
  std::size_t n = size();
  d.count = n;
  if (n == 0) return d;
  d.mean = static_cast<double>(sum_) / static_cast<double>(n);
  OrderStatistics order(short_, long_);
  // Ranks must be asked for in ascending order: median first, then the percentiles.
  auto value_at = [&](std::size_t rank) { return order.at(rank); };
  d.p50 = median_of(n, value_at);
  auto pct = [&](int xx) { return n <= 3 ? d.p50 : interpolate(n, xx, method, value_at); };
  d.p90 = pct(90);
  d.p95 = pct(95);
  d.p99 = pct(99);
  d.max = static_cast<double>(order.at(n - 1));
  return d;
}

Distribution summarize_values(std::vector<double> values, QuantileMethod method) {
  Distribution d;
  std::size_t n = values.size();
  d.count = n;
  if (n == 0) return d;
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(n);
  // Order statistics by nth_element on what is left, in ascending rank order: O(n).
  std::size_t from = 0;
  auto at = [&](std::size_t rank) {
    if (rank + 1 > from) {
      std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(from),
                       values.begin() + static_cast<std::ptrdiff_t>(rank), values.end());
      from = rank + 1;
    }
    return values[rank];
  };
  d.p50 = median_of(n, at);
  auto pct = [&](int xx) { return n <= 3 ? d.p50 : interpolate(n, xx, method, at); };
  d.p90 = pct(90);
  d.p95 = pct(95);
  d.p99 = pct(99);
  d.max = at(n - 1);
  return d;
}

std::vector<int64_t> DurationSample::sorted() {
  std::vector<int64_t> all(short_.begin(), short_.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> rest = long_;
  std::sort(rest.begin(), rest.end());
  all.insert(all.end(), rest.begin(), rest.end());
  return all;
}

}  // namespace jqtrace
