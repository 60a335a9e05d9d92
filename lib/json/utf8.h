#pragma once
// Strings jqtrace keeps (names, categories, string pids and tids, thread and process
// names, profile entries) must be valid UTF-8 without NUL bytes, so that every output
// (JSON above all) is valid whatever the input: the reader replaces what is not with
// U+FFFD and validate reports it (rule bad-string).
#include <string>
#include <string_view>

namespace jqtrace {

/// True when every byte is printable-range ASCII or a control other than NUL: the fast
/// path, one compare a byte.
inline bool plain_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(static_cast<unsigned char>(c) - 1u) >= 0x7Fu) return false;  // NUL or >= 0x80
  return true;
}

namespace detail {
bool clean_utf8_slow(std::string_view s);
}  // namespace detail

/// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF) and no NUL;
/// plain ASCII answers on the fast path.
inline bool clean_utf8(std::string_view s) { return plain_ascii(s) || detail::clean_utf8_slow(s); }

/// s with every NUL byte and every byte of a malformed sequence written as the escape
/// \xHH (lowercase hex): valid UTF-8 without NUL, and names that differ only in a bad byte
/// stay apart ("x\xff" and "x\xfe"; with U+FFFD for both they merged into one group).
std::string with_escapes(std::string_view s);

}  // namespace jqtrace
