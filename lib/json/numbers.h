#pragma once
// Exact number conversion for trace fields. RapidJSON hands every number to us as text
// (kParseNumbersAsStringsFlag) so that timestamps become integer nanoseconds without a
// detour through binary floating point: "12.345" µs is exactly 12345 ns.
#include <cstdint>
#include <string>
#include <string_view>

namespace jqtrace {

enum class NumberStatus { ok, malformed, out_of_range };

namespace detail {
NumberStatus parse_us_to_ns_slow(std::string_view text, int64_t* ns);
NumberStatus parse_integer_slow(std::string_view text, int64_t* value);
}  // namespace detail

/// The one place where microseconds (the file's unit) become integer nanoseconds.
/// Digits past the third decimal are rounded half away from zero.
/// Inline: every event has a ts and most a dur; the common "digits.ddd" form is handled here.
inline NumberStatus parse_us_to_ns(std::string_view text, int64_t* ns) {
  const char* p = text.data();
  const char* end = p + text.size();
  if (text.size() > 16 || p == end) return detail::parse_us_to_ns_slow(text, ns);
  int64_t whole = 0;
  for (; p != end && static_cast<unsigned>(*p - '0') < 10; ++p) whole = whole * 10 + (*p - '0');
  // A sign, no digits, or 16 integer digits (whole * 1000 could overflow): the slow way.
  if (p == text.data() || p - text.data() > 15) return detail::parse_us_to_ns_slow(text, ns);
  if (p == end) {
    *ns = whole * 1000;
    return NumberStatus::ok;
  }
  if (*p != '.' || end - p != 4) return detail::parse_us_to_ns_slow(text, ns);
  unsigned d1 = static_cast<unsigned>(p[1] - '0'), d2 = static_cast<unsigned>(p[2] - '0'),
           d3 = static_cast<unsigned>(p[3] - '0');
  if (d1 > 9 || d2 > 9 || d3 > 9) return detail::parse_us_to_ns_slow(text, ns);
  *ns = whole * 1000 + d1 * 100 + d2 * 10 + d3;
  return NumberStatus::ok;
}

/// The times jqtrace computes with: a ts (or a dur, or a command-line bound) beyond
/// ±2^61 ns (about ±73 years, past any epoch-based clock) is out of range where it enters,
/// so that every end (ts + dur) and every difference of two starts or ends fits in 64 bits.
constexpr int64_t kMaxTimeNs = int64_t{1} << 61;
/// The most the durations of a trace's spans may add up to: every busy, wait, self or
/// total time is a sum of (clipped) durations, so none can pass 64 bits either.
constexpr int64_t kMaxDurationSumNs = int64_t{1} << 62;
inline bool time_in_range(int64_t ns) { return ns >= -kMaxTimeNs && ns <= kMaxTimeNs; }

/// Milliseconds (command-line ranges) to nanoseconds, exact: the decimal point moves three
/// places, then parse_us_to_ns.
NumberStatus parse_ms_to_ns(std::string_view text, int64_t* ns);

/// An integer-valued JSON number ("3", "-7", "2.0", "1e3"). Fractions are malformed.
inline NumberStatus parse_integer(std::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 9) return detail::parse_integer_slow(text, value);
  int64_t v = 0;
  for (char c : text) {
    if (static_cast<unsigned>(c - '0') > 9) return detail::parse_integer_slow(text, value);
    v = v * 10 + (c - '0');
  }
  *value = v;
  return NumberStatus::ok;
}

/// Nanoseconds back to the file's microseconds, exact, shortest form ("12.345", "7", "0.5").
void format_ns_as_us(int64_t ns, char* out, std::size_t out_size);
/// The same as a string, for messages and labels.
std::string us_text(int64_t ns);

}  // namespace jqtrace
