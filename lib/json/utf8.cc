#include "utf8.h"

#include <array>

namespace jqtrace {
namespace {

/// What a lead byte allows (RFC 3629's table): the sequence's length (0: not a lead byte;
/// NUL, a stray continuation byte, C0, C1 and F5..FF) and the range of its second byte,
/// which rules out overlong forms, surrogates and code points above U+10FFFF.
struct Lead {
  unsigned char length, low, high;
};

constexpr Lead lead_of(unsigned b) {
  if (b >= 0x01 && b <= 0x7F) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

constexpr std::array<Lead, 256> kLeads = [] {
  std::array<Lead, 256> leads{};
  for (unsigned b = 0; b < 256; ++b) leads[b] = lead_of(b);
  return leads;
}();

/// The length of the well-formed sequence starting at s[i] (1..4), or 0 when it is not one.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  Lead lead = kLeads[byte(0)];
  if (lead.length <= 1) return lead.length;
  if (s.size() - i < lead.length) return 0;
  if (byte(1) < lead.low || byte(1) > lead.high) return 0;
  for (std::size_t k = 2; k < lead.length; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 0;
  return lead.length;
}

/// The length of the well-formed sequence at s[i], with ASCII (not NUL) answered inline:
/// most bytes of even a malformed name are ASCII.
inline std::size_t next_length(std::string_view s, std::size_t i) {
  unsigned char b = static_cast<unsigned char>(s[i]);
  return b - 1u < 0x7Fu ? 1 : sequence_length(s, i);
}

}  // namespace

bool detail::clean_utf8_slow(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = next_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string with_escapes(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t copied = 0;  // s[copied, i) is well-formed and not yet in out: copied in runs
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = next_length(s, i);
    if (n != 0) {
      i += n;
      continue;
    }
    out.append(s.substr(copied, i - copied));
    static constexpr char kHex[] = "0123456789abcdef";
    auto byte = static_cast<unsigned char>(s[i]);
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
    copied = ++i;
  }
  out.append(s.substr(copied));
  return out;
}

}  // namespace jqtrace
