#include <doctest/doctest.h>

#include <string>

#include "interner.h"

using namespace jqtrace;

TEST_CASE("the same name gets the same id / different names different ids") {
  Interner names;
  uint32_t chunk = names.intern("chunk");
  uint32_t publish = names.intern("publish");
  CHECK(chunk != publish);
  CHECK(names.intern("chunk") == chunk);
  CHECK(names.view(publish) == "publish");
}

TEST_CASE("short and long names / and names that differ only past 8 bytes") {
  Interner names;
  uint32_t a = names.intern("stage_wait");
  uint32_t b = names.intern("stage_waiT");
  uint32_t c = names.intern("a name that is much longer than sixteen bytes");
  CHECK(a != b);
  CHECK(names.intern("a name that is much longer than sixteen bytes") == c);
  CHECK(names.intern("") == names.intern(""));
  CHECK(names.find("stage_wait") == a);
  CHECK(names.find("missing") == Interner::kNone);
}

TEST_CASE("many names survive table growth and keep stable views") {
  Interner names;
  std::string_view first = names.view(names.intern("name-0"));
  for (int i = 0; i < 20000; ++i) REQUIRE(names.intern("name-" + std::to_string(i)) == static_cast<uint32_t>(i));
  CHECK(names.size() == 20000);
  CHECK(first == "name-0");
  CHECK(names.find("name-19999") == 19999u);
}
