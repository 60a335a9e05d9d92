#include <doctest/doctest.h>

#include "utf8.h"

using namespace jqtrace;

TEST_CASE("plain ASCII is the fast path, NUL and high bytes leave it") {
  CHECK(plain_ascii("chunk"));
  CHECK(plain_ascii(""));
  CHECK_FALSE(plain_ascii(std::string_view("a\0b", 3)));
  CHECK_FALSE(plain_ascii("caf\xC3\xA9"));
}

TEST_CASE("well-formed UTF-8 by RFC 3629, without NUL") {
  CHECK(clean_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
  CHECK_FALSE(clean_utf8("\xFF\xFE"));                          // never in UTF-8
  CHECK_FALSE(clean_utf8("\xC3"));                              // a lone lead byte
  CHECK_FALSE(clean_utf8("\xC0\xAF"));                          // overlong '/'
  CHECK_FALSE(clean_utf8("\xED\xA0\x80"));                      // an encoded surrogate (U+D800)
  CHECK_FALSE(clean_utf8("\xF4\x90\x80\x80"));                  // above U+10FFFF
  CHECK_FALSE(clean_utf8("\x80"));                              // a stray continuation byte
  CHECK_FALSE(clean_utf8(std::string_view("a\0", 2)));
}

TEST_CASE("what is not UTF-8 becomes an \\xHH escape per bad byte, the rest stays") {
  CHECK(with_escapes("ok") == "ok");
  CHECK(with_escapes("a\xFF\xFE" "b") == "a\\xff\\xfe" "b");
  CHECK(with_escapes("\xC3") == "\\xc3");
  CHECK(with_escapes(std::string_view("x\0y", 3)) == "x\\x00y");
  CHECK(with_escapes("caf\xC3\xA9\xED\xA0\x80") == "caf\xC3\xA9\\xed\\xa0\\x80");
  // Names that differ only in a bad byte stay apart (U+FFFD merged them into one group).
  CHECK(with_escapes("x\xFF") != with_escapes("x\xFE"));
  CHECK(with_escapes(std::string_view("x\0", 2)) != with_escapes("x\xFF"));
  CHECK(clean_utf8(with_escapes("\xF4\x90\x80\x80\xC0\xAF\x80")));
}

namespace {

/// RFC 3629 from its definition, for checking the table-driven scanner: the code point the
/// first bytes of s encode in as few bytes as they allow, or nothing.
bool reference_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t length = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > s.size()) return false;
    char32_t cp = length == 1 ? b0 : b0 & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp == 0 || cp < least[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += length;
  }
  return true;
}

}  // namespace

TEST_CASE("the scanner agrees with RFC 3629 on every lead and second byte, at every length") {
  const unsigned char tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};
  std::size_t checked = 0, mismatched = 0;
  for (unsigned b0 = 0; b0 < 256; ++b0) {
    for (unsigned b1 = 0; b1 < 256; ++b1) {
      for (std::size_t more = 0; more <= 2; ++more) {
        for (unsigned char t : tails) {
          std::string s{static_cast<char>(b0), static_cast<char>(b1)};
          s.append(more, static_cast<char>(t));
          s.resize(s.size() - (b1 & 1) * more);  // also cut short: a sequence the text ends inside
          bool clean = clean_utf8(s);
          mismatched += clean != reference_utf8(s);
          // Well-formed text stays as it is; the rest comes out well-formed.
          std::string replaced = with_escapes(s);
          mismatched += clean ? replaced != s : !reference_utf8(replaced);
          ++checked;
          if (more == 0) break;
        }
      }
    }
  }
  CHECK(checked > 500000);
  CHECK(mismatched == 0);
}
