// Expected values computed with CPython 3.11's statistics module: statistics.median(v) and
// statistics.quantiles(v, n=100, method=M)[XX-1], M "exclusive" (gaps) or "inclusive"
// (everything else).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "quantile.h"

using namespace jqtrace;

namespace {
Distribution summary_of(std::vector<int64_t> values, QuantileMethod method = QuantileMethod::exclusive) {
  DurationSample s;
  for (int64_t v : values) s.add(v);
  return s.summarize(method);
}
Distribution inclusive_summary_of(std::vector<int64_t> values) {
  return summary_of(std::move(values), QuantileMethod::inclusive);
}
}  // namespace

TEST_CASE("percentiles match statistics.quantiles (exclusive) on 10 values") {
  // quantiles([10,20,...,100], n=100): p90 99.0, p95 104.5, p99 108.9; median 55.0
  Distribution d = summary_of({100, 20, 30, 40, 50, 60, 70, 80, 90, 10});
  CHECK(d.count == 10);
  CHECK(d.mean == doctest::Approx(55.0));
  CHECK(d.p50 == 55.0);
  CHECK(d.p90 == doctest::Approx(99.0));
  CHECK(d.p95 == doctest::Approx(104.5));  // past the max: Python extrapolates, and so do we
  CHECK(d.p99 == doctest::Approx(108.9));
  CHECK(d.max == 100.0);
}

TEST_CASE("percentiles of 1..100") {
  // median 50.5, p90 90.9, p95 95.95, p99 99.99
  std::vector<int64_t> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  Distribution d = summary_of(v);
  CHECK(d.p50 == 50.5);
  CHECK(d.p90 == doctest::Approx(90.9));
  CHECK(d.p95 == doctest::Approx(95.95));
  CHECK(d.p99 == doctest::Approx(99.99));
}

TEST_CASE("percentiles with repeats and a long tail") {
  // [1,1,1,2,100,100,1000,5,7,3,2,8]: median 4.0, p90 730.0, p95 1315.0, p99 1783.0
  Distribution d = summary_of({1, 1, 1, 2, 100, 100, 1000, 5, 7, 3, 2, 8});
  CHECK(d.p50 == 4.0);
  CHECK(d.p90 == doctest::Approx(730.0));
  CHECK(d.p95 == doctest::Approx(1315.0));
  CHECK(d.p99 == doctest::Approx(1783.0));
}

TEST_CASE("four and five values: the smallest counts that interpolate") {
  // [1,2,3,4]: median 2.5, p90 4.5, p99 4.95; [5,1,4,2,3]: median 3, p90 5.4, p95 5.7
  Distribution four = summary_of({4, 3, 2, 1});
  CHECK(four.p50 == 2.5);
  CHECK(four.p90 == doctest::Approx(4.5));
  CHECK(four.p99 == doctest::Approx(4.95));
  Distribution five = summary_of({5, 1, 4, 2, 3});
  CHECK(five.p50 == 3.0);
  CHECK(five.p90 == doctest::Approx(5.4));
  CHECK(five.p95 == doctest::Approx(5.7));
}

TEST_CASE("up to three values: every percentile is the median") {
  Distribution d = summary_of({7, 1, 4});
  CHECK(d.p50 == 4.0);
  CHECK(d.p90 == 4.0);
  CHECK(d.p99 == 4.0);
  CHECK(d.max == 7.0);
  Distribution two = summary_of({1, 2});
  CHECK(two.p50 == 1.5);
  CHECK(two.p95 == 1.5);
  Distribution none = summary_of({});
  CHECK(none.count == 0);
}

TEST_CASE("durations beyond 4.29 s keep their order after the short ones") {
  Distribution d = summary_of({5'000'000'000, 3, 1, 2, 6'000'000'000});
  CHECK(d.p50 == 3.0);
  CHECK(d.max == 6e9);
  DurationSample s;
  for (int64_t v : {5'000'000'000ll, 3ll, 6'000'000'000ll, 1ll}) s.add(v);
  CHECK(s.sorted() == std::vector<int64_t>{1, 3, 5'000'000'000, 6'000'000'000});
}

TEST_CASE("the percentile functions on sorted vectors agree with the summary") {
  std::vector<int64_t> v = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  CHECK(percentile(v, 25, QuantileMethod::exclusive) == doctest::Approx(27.5));  // quantiles(...)[24]
  CHECK(percentile(v, 1, QuantileMethod::exclusive) == doctest::Approx(1.1));    // below the min, as Python
  CHECK(percentile(v, 25, QuantileMethod::inclusive) == doctest::Approx(32.5));
  CHECK(percentile(v, 1, QuantileMethod::inclusive) == doctest::Approx(10.9));   // never below the min
  CHECK(summary_percentile(v, 50, QuantileMethod::inclusive) == 55.0);
  CHECK(summary_percentile({1, 2, 3}, 99, QuantileMethod::exclusive) == 2.0);
  CHECK(median({}) == 0.0);
}

TEST_CASE("inclusive percentiles match statistics.quantiles(method='inclusive') and never pass the max") {
  // quantiles([10,...,100], n=100, method='inclusive'): p90 91.0, p95 95.5, p99 99.1
  Distribution ten = inclusive_summary_of({100, 20, 30, 40, 50, 60, 70, 80, 90, 10});
  CHECK(ten.p50 == 55.0);
  CHECK(ten.p90 == doctest::Approx(91.0));
  CHECK(ten.p95 == doctest::Approx(95.5));
  CHECK(ten.p99 == doctest::Approx(99.1));
  CHECK(ten.p99 <= ten.max);
  // 1..100: p90 90.1, p95 95.05, p99 99.01
  std::vector<int64_t> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  Distribution hundred = inclusive_summary_of(v);
  CHECK(hundred.p90 == doctest::Approx(90.1));
  CHECK(hundred.p95 == doctest::Approx(95.05));
  CHECK(hundred.p99 == doctest::Approx(99.01));
  // a long tail: p90 100.0, p95 505.0, p99 901.0 (exclusive gave 1783, past the max of 1000)
  Distribution tail = inclusive_summary_of({1, 1, 1, 2, 100, 100, 1000, 5, 7, 3, 2, 8});
  CHECK(tail.p50 == 4.0);
  CHECK(tail.p90 == doctest::Approx(100.0));
  CHECK(tail.p95 == doctest::Approx(505.0));
  CHECK(tail.p99 == doctest::Approx(901.0));
  // four and five values: p90 3.7, p95 3.85, p99 3.97; p90 4.6, p95 4.8, p99 4.96
  Distribution four = inclusive_summary_of({4, 3, 2, 1});
  CHECK(four.p90 == doctest::Approx(3.7));
  CHECK(four.p95 == doctest::Approx(3.85));
  CHECK(four.p99 == doctest::Approx(3.97));
  Distribution five = inclusive_summary_of({5, 1, 4, 2, 3});
  CHECK(five.p90 == doctest::Approx(4.6));
  CHECK(five.p95 == doctest::Approx(4.8));
  CHECK(five.p99 == doctest::Approx(4.96));
}

TEST_CASE("summarize_values takes the method too") {
  Distribution in = summarize_values({10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, QuantileMethod::inclusive);
  Distribution ex = summarize_values({10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, QuantileMethod::exclusive);
  CHECK(in.p99 == doctest::Approx(99.1));
  CHECK(ex.p99 == doctest::Approx(108.9));
}

TEST_CASE("quantile methods by name") {
  QuantileMethod m = QuantileMethod::inclusive;
  CHECK(parse_quantile_method("exclusive", &m));
  CHECK(m == QuantileMethod::exclusive);
  CHECK_FALSE(parse_quantile_method("nearest", &m));
  CHECK(std::string(quantile_method_name(QuantileMethod::inclusive)) == "inclusive");
}

TEST_CASE("summarize_together of several samples is summarize of them joined, at any thread count") {
  uint64_t state = 12345;
  auto next = [&]() { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  for (int shape = 0; shape < 5; ++shape) {
    std::vector<DurationSample> parts(4);
    DurationSample joined;
    for (std::size_t p = 0; p < parts.size(); ++p)
      for (int i = 0; i < 40000 + shape * 7 + static_cast<int>(p); ++i) {
        int64_t v = shape == 0 ? static_cast<int64_t>(next() >> 33)                 // wide spread
                    : shape == 1 ? 5000 + static_cast<int64_t>(next() >> 60)        // a narrow cluster
                    : shape == 2 ? 777                                              // all equal
                    : shape == 3 ? (i % 100 == 0 ? (int64_t{5} << 32) + i : i % 3)  // some past 32 bits
                                 : static_cast<int64_t>(next() >> 40) * 65536;      // gaps between buckets
        parts[p].add(v);
        joined.add(v);
      }
    std::vector<DurationSample*> pointers;
    for (DurationSample& p : parts) pointers.push_back(&p);
    for (QuantileMethod method : {QuantileMethod::inclusive, QuantileMethod::exclusive}) {
      DurationSample copy = joined;
      Distribution want = copy.summarize(method);
      for (unsigned threads : {1u, 3u}) {
        Distribution got = DurationSample::summarize_together(pointers, method, threads);
        CHECK(got.count == want.count);
        CHECK(got.mean == want.mean);
        CHECK(got.p50 == want.p50);
        CHECK(got.p90 == want.p90);
        CHECK(got.p95 == want.p95);
        CHECK(got.p99 == want.p99);
        CHECK(got.max == want.max);
      }
    }
  }
}
