#include "rounding.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

using jqtrace::round_half_away;

namespace {

/// The cases llround is easiest to get wrong beside: exact halves, the doubles just either
/// side of them, and the ends of the exact range.
bool agrees(double x) { return round_half_away(x) == std::llround(x); }

}  // namespace

TEST_CASE("round_half_away: std::llround's result at halves and their neighbours") {
  int disagreements = 0;
  for (int64_t whole = -2000; whole <= 2000; ++whole)
    for (double offset : {0.0, 0.25, 0.5, -0.5, 0.75, 0.49999999999999994, 0.5000000000000001}) {
      double x = static_cast<double>(whole) + offset;
      for (double y : {x, std::nextafter(x, -INFINITY), std::nextafter(x, INFINITY)}) disagreements += !agrees(y);
    }
  CHECK(disagreements == 0);
  CHECK(round_half_away(2.5) == 3);
  CHECK(round_half_away(-2.5) == -3);
  CHECK(round_half_away(0.49999999999999994) == 0);  // x + 0.5 rounds this to 1
}

TEST_CASE("round_half_away: std::llround's result across the range, scaled durations among them") {
  std::mt19937_64 random(7);
  int disagreements = 0;
  for (int i = 0; i < 200000; ++i) {
    auto ns = static_cast<int64_t>(random() >> (random() % 64));
    double factor = std::uniform_real_distribution<double>(-3, 3)(random);
    disagreements += !agrees(static_cast<double>(ns) * factor);
  }
  for (double edge : {0x1p52, 0x1p52 + 1, 0x1p53, 0x1p62, -0x1p62, 0x1p62 - 1024, 4.5e15 + 0.5})
    disagreements += !agrees(edge);
  CHECK(disagreements == 0);
  // Past 2^62 (a factor of a hostile size) and not-a-number: whatever llround gives.
  CHECK(round_half_away(0x1p62) == std::llround(0x1p62));
  CHECK(round_half_away(std::numeric_limits<double>::quiet_NaN()) ==
        std::llround(std::numeric_limits<double>::quiet_NaN()));
}
