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

TEST_CASE("what is not UTF-8 becomes U+FFFD, a replacement per bad byte, the rest stays") {
  CHECK(with_replacements("ok") == "ok");
  CHECK(with_replacements("a\xFF\xFE" "b") == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  CHECK(with_replacements("\xC3") == "\xEF\xBF\xBD");
  CHECK(with_replacements(std::string_view("x\0y", 3)) == "x\xEF\xBF\xBDy");
  CHECK(with_replacements("caf\xC3\xA9\xED\xA0\x80") == "caf\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(clean_utf8(with_replacements("\xF4\x90\x80\x80\xC0\xAF\x80")));
}
