#include "quantile.h"

#include <algorithm>

#include "parallel.h"

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

namespace {

__extension__ typedef __int128 ExactSum;  // as DurationSample's sum_

/// mean, p50, p90/95/99 and max of n values whose sum is sum, from value_at(rank), asked
/// for in ascending rank order.
template <typename Lookup>
Distribution summary_of(std::size_t n, ExactSum sum, QuantileMethod method, Lookup&& value_at) {
  Distribution d;
  d.count = n;
  if (n == 0) return d;
  d.mean = static_cast<double>(sum) / static_cast<double>(n);
  d.p50 = median_of(n, value_at);
  auto pct = [&](int xx) { return n <= 3 ? d.p50 : interpolate(n, xx, method, value_at); };
  d.p90 = pct(90);
  d.p95 = pct(95);
  d.p99 = pct(99);
  d.max = static_cast<double>(value_at(n - 1));
  return d;
}

/// Order statistics of the short values of several samples together, without joining
/// them: the values fall in 65,536 buckets by their offset from the least (a histogram a
/// thread, summed); a rank's value is selected among its bucket's values alone, gathered
/// on the threads. Ranks come in ascending order, so a bucket is gathered once.
class BucketedOrderStatistics {
 public:
  BucketedOrderStatistics(const std::vector<const std::vector<uint32_t>*>& parts, unsigned threads)
      : threads_(std::max(threads, 1u)) {
    for (const auto* p : parts)
      for (std::size_t at = 0; at < p->size(); at += kChunk) chunks_.push_back({p->data() + at, std::min(kChunk, p->size() - at)});
    find_range();
    count_buckets();
  }

  int64_t at(std::size_t rank) {
    std::size_t b = static_cast<std::size_t>(std::upper_bound(below_.begin(), below_.end(), rank) - below_.begin()) - 1;
    if (b != bucket_) gather(b);
    std::size_t r = rank - below_[b];
    if (r + 1 > from_) {
      std::nth_element(values_.begin() + static_cast<std::ptrdiff_t>(from_), values_.begin() + static_cast<std::ptrdiff_t>(r),
                       values_.end());
      from_ = r + 1;
    }
    return static_cast<int64_t>(values_[r]);
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 16, kBuckets = std::size_t{1} << 16;
  struct Chunk {
    const uint32_t* v;
    std::size_t size;
  };
  std::size_t bucket_of(uint32_t v) const { return static_cast<std::size_t>((v - least_) >> shift_); }

  void find_range() {
    std::vector<uint32_t> lo(chunks_.size(), UINT32_MAX), hi(chunks_.size(), 0);
    run_parallel(chunks_.size(), threads_, [&](std::size_t k) {
      auto [a, b] = std::minmax_element(chunks_[k].v, chunks_[k].v + chunks_[k].size);
      lo[k] = *a;
      hi[k] = *b;
    });
    least_ = *std::min_element(lo.begin(), lo.end());
    uint32_t span = *std::max_element(hi.begin(), hi.end()) - least_;
    while ((span >> shift_) >= kBuckets) ++shift_;
  }

  /// below_[b]: how many values fall in buckets before b.
  void count_buckets() {
    std::vector<std::vector<uint64_t>> counts(threads_, std::vector<uint64_t>(kBuckets, 0));
    run_parallel(threads_, threads_, [&](std::size_t t) {
      for (std::size_t k = t; k < chunks_.size(); k += threads_)
        for (std::size_t i = 0; i < chunks_[k].size; ++i) ++counts[t][bucket_of(chunks_[k].v[i])];
    });
    below_.assign(kBuckets + 1, 0);
    for (std::size_t b = 0; b < kBuckets; ++b) {
      uint64_t in = 0;
      for (const auto& c : counts) in += c[b];
      below_[b + 1] = below_[b] + in;
    }
  }

  void gather(std::size_t b) {
    std::vector<std::vector<uint32_t>> found(chunks_.size());
    run_parallel(chunks_.size(), threads_, [&](std::size_t k) {
      for (std::size_t i = 0; i < chunks_[k].size; ++i)
        if (bucket_of(chunks_[k].v[i]) == b) found[k].push_back(chunks_[k].v[i]);
    });
    values_.clear();
    for (const auto& f : found) values_.insert(values_.end(), f.begin(), f.end());
    bucket_ = b;
    from_ = 0;
  }

  unsigned threads_;
  std::vector<Chunk> chunks_;
  uint32_t least_ = 0;
  unsigned shift_ = 0;
  std::vector<uint64_t> below_;
  std::size_t bucket_ = SIZE_MAX;  ///< whose values are in values_
  std::vector<uint32_t> values_;
  std::size_t from_ = 0;           ///< as OrderStatistics' from, within values_
};

}  // namespace

Distribution DurationSample::summarize(QuantileMethod method) {
  OrderStatistics order(short_, long_);
  return summary_of(size(), sum_, method, [&](std::size_t rank) { return order.at(rank); });
}

Distribution DurationSample::summarize_together(const std::vector<DurationSample*>& parts, QuantileMethod method,
                                                unsigned threads) {
  std::size_t n = 0, shorts = 0;
  ExactSum sum = 0;
  std::vector<const std::vector<uint32_t>*> short_parts;
  std::vector<int64_t> longs;
  for (DurationSample* p : parts) {
    n += p->size();
    shorts += p->short_.size();
    sum += p->sum_;
    if (!p->short_.empty()) short_parts.push_back(&p->short_);
    longs.insert(longs.end(), p->long_.begin(), p->long_.end());
  }
  std::vector<uint32_t> none;
  OrderStatistics long_order(none, longs);
  if (shorts == 0)  // nothing for the buckets
    return summary_of(n, sum, method, [&](std::size_t rank) { return long_order.at(rank); });
  BucketedOrderStatistics short_order(short_parts, threads);
  return summary_of(n, sum, method, [&](std::size_t rank) {
    return rank < shorts ? short_order.at(rank) : long_order.at(rank - shorts);
  });
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
