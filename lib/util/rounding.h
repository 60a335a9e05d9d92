#pragma once
// Rounding a scaled duration to whole ns, in the replay's innermost loop.
#include <cmath>
#include <cstdint>

namespace jqtrace {

/// x rounded half away from zero: std::llround's result, inline (the libm call was 1 % of a
/// whatif --rank, made for every changed chunk of every pass).
inline int64_t round_half_away(double x) {
  if (!(std::fabs(x) < 0x1p62)) return static_cast<int64_t>(std::llround(x));  // huge, or not a number
  // Truncated, then the fraction compared: both exact (below 2^52 the fraction's bits are
  // x's own; above, x is whole and the fraction 0).
  auto whole = static_cast<int64_t>(x);
  double fraction = x - static_cast<double>(whole);
  return whole + (fraction >= 0.5) - (fraction <= -0.5);
}

}  // namespace jqtrace
