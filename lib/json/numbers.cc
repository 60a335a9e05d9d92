#include "numbers.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace jqtrace {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Slow path for exponents and huge values: strtod on a bounded copy.
NumberStatus parse_via_double(std::string_view text, double scale, double* out) {
  char buf[64];
  if (text.size() >= sizeof buf) return NumberStatus::out_of_range;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  char* end = nullptr;
  double v = std::strtod(buf, &end);
  if (end != buf + text.size()) return NumberStatus::malformed;
  v *= scale;
  if (!std::isfinite(v) || std::fabs(v) >= 4.6e18) return NumberStatus::out_of_range;
  *out = v;
  return NumberStatus::ok;
}

}  // namespace

NumberStatus detail::parse_us_to_ns_slow(std::string_view text, int64_t* ns) {
  const char* p = text.data();
  const char* end = p + text.size();
  bool negative = p != end && *p == '-';
  if (negative) ++p;
  if (p == end || !is_digit(*p)) return NumberStatus::malformed;
  // Integer microseconds; anything near int64 overflow goes the slow way.
  int64_t whole = 0;
  int digits = 0;
  for (; p != end && is_digit(*p); ++p, ++digits)
    if (digits < 18) whole = whole * 10 + (*p - '0');  // longer goes the double way below
  int64_t frac = 0;  // nanoseconds from the first three decimals
  bool round_up = false;
  if (p != end && *p == '.') {
    ++p;
    if (p == end || !is_digit(*p)) return NumberStatus::malformed;
    int place = 0;
    for (; p != end && is_digit(*p); ++p, ++place) {
      if (place < 3) frac = frac * 10 + (*p - '0');
      else if (place == 3) round_up = *p >= '5';
    }
    for (; place < 3; ++place) frac *= 10;
  }
  if (p != end || digits > 15) {
    if (p != end && *p != 'e' && *p != 'E') return NumberStatus::malformed;
    double v = 0;
    NumberStatus st = parse_via_double(text, 1000.0, &v);
    if (st == NumberStatus::ok) *ns = std::llround(v);
    return st;
  }
  int64_t value = whole * 1000 + frac + (round_up ? 1 : 0);
  *ns = negative ? -value : value;
  return NumberStatus::ok;
}

NumberStatus detail::parse_integer_slow(std::string_view text, int64_t* value) {
  const char* p = text.data();
  const char* end = p + text.size();
  bool negative = p != end && *p == '-';
  if (negative) ++p;
  if (p == end || !is_digit(*p)) return NumberStatus::malformed;
  int64_t v = 0;
  int digits = 0;
  for (; p != end && is_digit(*p); ++p, ++digits)
    if (digits < 18) v = v * 10 + (*p - '0');
  if (p == end && digits <= 18) {
    *value = negative ? -v : v;
    return NumberStatus::ok;
  }
  if (p == end && digits > 18) return NumberStatus::out_of_range;
  double d = 0;
  NumberStatus st = parse_via_double(text, 1.0, &d);
  if (st != NumberStatus::ok) return st;
  if (d != std::floor(d)) return NumberStatus::malformed;
  *value = static_cast<int64_t>(d);
  return NumberStatus::ok;
}

NumberStatus parse_ms_to_ns(std::string_view text, int64_t* ns) {
  if (text.find_first_of("eE") != std::string_view::npos) {
    double v = 0;
    NumberStatus st = parse_via_double(text, 1e6, &v);
    if (st == NumberStatus::ok) *ns = std::llround(v);
    return st;
  }
  std::size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  std::string shifted(whole);
  for (std::size_t i = 0; i < 3; ++i) shifted += i < frac.size() ? frac[i] : '0';
  if (frac.size() > 3) {
    shifted += '.';
    shifted.append(frac.substr(3));
  }
  if (dot != std::string_view::npos && frac.empty()) return NumberStatus::malformed;  // "1."
  return parse_us_to_ns(shifted, ns);
}

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
