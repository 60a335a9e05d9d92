#pragma once
// Exact distribution summaries, matching the Python scripts jqtrace replaces: p50 is the
// median (mean of the two middle values for an even count); any other pXX is
// statistics.quantiles(values, n=100)[XX-1] with the default "exclusive" method — which
// interpolates, and past the ends extrapolates — when there are more than 3 values, else
// the median.
#include <cstdint>
#include <vector>

namespace jqtrace {

/// A summary of durations in nanoseconds (fractional where the method interpolates).
struct Distribution {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};

/// Durations of one group, kept in 4 bytes each while they fit (almost all spans are
/// shorter than 4.29 s); longer ones go aside. Every long value is larger than every short
/// one, so the sorted whole is sorted(short) followed by sorted(long).
class DurationSample {
 public:
  void add(int64_t ns) {
    if (ns >= 0 && ns <= static_cast<int64_t>(UINT32_MAX)) short_.push_back(static_cast<uint32_t>(ns));
    else long_.push_back(ns);
    sum_ += ns;
  }
  /// Takes in every value of other (samples of slices of a trace walked apart).
  void absorb(DurationSample&& other) {
    if (short_.empty()) short_ = std::move(other.short_);
    else short_.insert(short_.end(), other.short_.begin(), other.short_.end());
    long_.insert(long_.end(), other.long_.begin(), other.long_.end());
    sum_ += other.sum_;
    other = DurationSample{};
  }
  std::size_t size() const { return short_.size() + long_.size(); }
  /// Summarises (reorders the values: call once).
  Distribution summarize();
  /// The values themselves, sorted (for histograms and tests).
  std::vector<int64_t> sorted();

 private:
  std::vector<uint32_t> short_;
  std::vector<int64_t> long_;
  /// Exact whatever the order values come in, so a mean does not depend on how a walk
  /// was split (a double sum rounds differently in each order).
  __extension__ __int128 sum_ = 0;
};

/// d with f applied to every value (not the count): unit changes, percentages.
template <typename F>
Distribution map_values(Distribution d, F&& f) {
  for (double* v : {&d.mean, &d.p50, &d.p90, &d.p95, &d.p99, &d.max}) *v = f(*v);
  return d;
}

/// A summary of any values (ratios, counts, signed gaps): sorts a copy.
Distribution summarize_values(std::vector<double> values);

/// The XX-th percentile (1..99) of sorted values by the exclusive method (see above).
double percentile_exclusive(const std::vector<int64_t>& sorted, int xx);
/// The median of sorted values.
double median(const std::vector<int64_t>& sorted);
/// Python's definition for pXX of a summary: the median for p50 or up to 3 values.
double summary_percentile(const std::vector<int64_t>& sorted, int xx);

}  // namespace jqtrace
