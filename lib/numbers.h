#pragma once
// Exact number conversion for trace fields. RapidJSON hands every number to us as text
// (kParseNumbersAsStringsFlag) so that timestamps become integer nanoseconds without a
// detour through binary floating point: "12.345" µs is exactly 12345 ns.
#include <cstdint>
#include <string_view>

namespace jqtrace {

enum class NumberStatus { ok, malformed, out_of_range };

/// The one place where microseconds (the file's unit) become integer nanoseconds.
/// Digits past the third decimal are rounded half away from zero.
NumberStatus parse_us_to_ns(std::string_view text, int64_t* ns);

/// An integer-valued JSON number ("3", "-7", "2.0", "1e3"). Fractions are malformed.
NumberStatus parse_integer(std::string_view text, int64_t* value);

/// Nanoseconds back to the file's microseconds, exact, shortest form ("12.345", "7", "0.5").
void format_ns_as_us(int64_t ns, char* out, std::size_t out_size);

}  // namespace jqtrace
