#include "utf8.h"

namespace jqtrace {
namespace {

/// The length of the well-formed sequence starting at s[i] (1..4), or 0 when it is not one
/// (RFC 3629's table: the second byte's range depends on the first).
std::size_t sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto tail = [&](std::size_t k) { return byte(k) >= 0x80 && byte(k) <= 0xBF; };
  unsigned b0 = byte(0);
  if (b0 >= 0x01 && b0 <= 0x7F) return 1;
  unsigned b1 = byte(1);
  if (b0 >= 0xC2 && b0 <= 0xDF) return tail(1) ? 2 : 0;
  if (b0 == 0xE0) return b1 >= 0xA0 && b1 <= 0xBF && tail(2) ? 3 : 0;
  if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return tail(1) && tail(2) ? 3 : 0;
  if (b0 == 0xED) return b1 >= 0x80 && b1 <= 0x9F && tail(2) ? 3 : 0;  // no surrogates
  if (b0 == 0xF0) return b1 >= 0x90 && b1 <= 0xBF && tail(2) && tail(3) ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3) return tail(1) && tail(2) && tail(3) ? 4 : 0;
  if (b0 == 0xF4) return b1 >= 0x80 && b1 <= 0x8F && tail(2) && tail(3) ? 4 : 0;
  return 0;  // NUL, a stray continuation byte, C0, C1, F5..FF
}

}  // namespace

bool detail::clean_utf8_slow(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string with_replacements(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace jqtrace
