#include "numbers.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace jqtrace {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Past this magnitude a scaled number is out of range: every caller's own limit (±2^61 ns
/// for times) is below it, and sums of two such values still fit in 64 bits.
constexpr uint64_t kMaxScaled = uint64_t{1} << 62;

struct ScaledDecimal {
  int64_t value = 0;
  bool had_fraction = false;  // digits were lost below the unit (rounded away)
};

/// A JSON number times 10^scale, exactly, from its digits: never through a double, so an
/// epoch-based "1733400000000000.107" µs is 1733400000000000107 ns to the last digit.
/// Digits below the unit are rounded half away from zero.
NumberStatus parse_decimal_scaled(std::string_view text, int scale, ScaledDecimal* out) {
  const char* p = text.data();
  const char* end = p + text.size();
  bool negative = p != end && *p == '-';
  if (negative) ++p;
  if (p == end || !is_digit(*p)) return NumberStatus::malformed;
  // The significant digits, up to 19 of them (they fit in 64 bits), and the power of ten
  // that the last one kept stands for.
  uint64_t mantissa = 0;
  int kept = 0;
  int64_t exponent = scale;
  // value = (mantissa + 0.<dropped digits>) * 10^exponent
  bool dropped_nonzero = false;  // a digit past the 19th that is not 0
  char first_dropped = 0;        // the 20th significant digit (0: none): from '5', the 19 round up
  auto take = [&](char c, bool fractional) {
    if (kept == 0 && c == '0') {
      if (fractional) --exponent;
      return;
    }
    if (kept < 19) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
      ++kept;
      if (fractional) --exponent;
    } else {
      if (!fractional) ++exponent;
      if (!first_dropped) first_dropped = c;
      dropped_nonzero |= c != '0';
    }
  };
  for (; p != end && is_digit(*p); ++p) take(*p, false);
  if (p != end && *p == '.') {
    ++p;
    if (p == end || !is_digit(*p)) return NumberStatus::malformed;
    for (; p != end && is_digit(*p); ++p) take(*p, true);
  }
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exp_negative = p != end && *p == '-';
    if (p != end && (*p == '-' || *p == '+')) ++p;
    if (p == end || !is_digit(*p)) return NumberStatus::malformed;
    int64_t e = 0;
    for (; p != end && is_digit(*p); ++p)
      if (e < 100000) e = e * 10 + (*p - '0');  // past this every value is 0 or out of range
    exponent += exp_negative ? -e : e;
  }
  if (p != end) return NumberStatus::malformed;
  uint64_t magnitude = 0;
  if (mantissa == 0) {
    magnitude = 0;
  } else if (exponent >= 0) {
    if (exponent > 19) return NumberStatus::out_of_range;
    magnitude = mantissa + (exponent == 0 && first_dropped >= '5' ? 1 : 0);  // (past 0, 19 digits are out of range)
    for (int64_t i = 0; i < exponent; ++i) {
      if (magnitude >= kMaxScaled / 10) return NumberStatus::out_of_range;
      magnitude *= 10;
    }
    out->had_fraction = dropped_nonzero;
  } else if (exponent < -19) {
    magnitude = 0;  // below half a unit: 19 digits are less than 10^19
    out->had_fraction = true;
  } else {
    uint64_t divisor = 1;
    for (int64_t i = 0; i < -exponent; ++i) divisor *= 10;
    magnitude = mantissa / divisor;
    uint64_t rest = mantissa % divisor;
    if (rest >= divisor - rest) ++magnitude;  // half or more: away from zero
    out->had_fraction = rest != 0 || dropped_nonzero;
  }
  if (magnitude >= kMaxScaled) return NumberStatus::out_of_range;
  out->value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  return NumberStatus::ok;
}

/// A number times 10^scale, rounded: microseconds (3) or milliseconds (6) to nanoseconds.
NumberStatus parse_scaled(std::string_view text, int scale, int64_t* out) {
  ScaledDecimal d;
  NumberStatus st = parse_decimal_scaled(text, scale, &d);
  if (st == NumberStatus::ok) *out = d.value;
  return st;
}

}  // namespace

NumberStatus detail::parse_us_to_ns_slow(std::string_view text, int64_t* ns) { return parse_scaled(text, 3, ns); }

NumberStatus detail::parse_integer_slow(std::string_view text, int64_t* value) {
  ScaledDecimal d;
  NumberStatus st = parse_decimal_scaled(text, 0, &d);
  if (st != NumberStatus::ok) return st;
  if (d.had_fraction) return NumberStatus::malformed;
  *value = d.value;
  return NumberStatus::ok;
}

NumberStatus parse_ms_to_ns(std::string_view text, int64_t* ns) { return parse_scaled(text, 6, ns); }

void format_ns_as_us(int64_t ns, char* out, std::size_t out_size) {
  const char* sign = ns < 0 ? "-" : "";
  uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  uint64_t whole = mag / 1000, frac = mag % 1000;
  if (frac == 0) std::snprintf(out, out_size, "%s%llu", sign, static_cast<unsigned long long>(whole));
  else {
    int n = std::snprintf(out, out_size, "%s%llu.%03llu", sign, static_cast<unsigned long long>(whole),
                          static_cast<unsigned long long>(frac));
    while (n > 0 && out[n - 1] == '0') out[--n] = '\0';
  }
}

std::string us_text(int64_t ns) {
  char buf[48];
  format_ns_as_us(ns, buf, sizeof buf);
  return buf;
}

}  // namespace jqtrace
