#pragma once
// Exact distribution summaries (SPEC §2 "Quantiles"): p50 is the median (mean of the two
// middle values for an even count); any other pXX is Python's
// statistics.quantiles(values, n=100, method=M)[XX-1] when there are more than 3 values,
// else the median. M is "inclusive" (never outside the data; numpy's default) everywhere
// but gaps, which keeps "exclusive" (it extrapolates past the ends) for parity with the
// scripts it replaces.
#include <cstdint>
#include <string_view>
#include <vector>

namespace jqtrace {

enum class QuantileMethod { inclusive, exclusive };

const char* quantile_method_name(QuantileMethod m);
/// "inclusive" or "exclusive"; false for anything else.
bool parse_quantile_method(std::string_view text, QuantileMethod* m);

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
  /// Room for n values (most durations fit 32 bits).
  void reserve(std::size_t n) { short_.reserve(n); }
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
  Distribution summarize(QuantileMethod method);
  /// The summary of the values of several samples taken together (a group's tallies of
  /// slices walked apart), as summarize() of them joined would give, without joining them:
  /// a histogram of the values made on `threads` threads, and selection in the buckets
  /// that hold the ranks asked for. Leaves the samples as they were.
  static Distribution summarize_together(const std::vector<DurationSample*>& parts, QuantileMethod method,
                                         unsigned threads);
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
Distribution summarize_values(std::vector<double> values, QuantileMethod method);

/// The XX-th percentile (1..99) of sorted values (at least 2) by method (see above).
double percentile(const std::vector<int64_t>& sorted, int xx, QuantileMethod method);
/// The median of sorted values.
double median(const std::vector<int64_t>& sorted);
/// Python's definition for pXX of a summary: the median for p50 or up to 3 values.
double summary_percentile(const std::vector<int64_t>& sorted, int xx, QuantileMethod method);

}  // namespace jqtrace
