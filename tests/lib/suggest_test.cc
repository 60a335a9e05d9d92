#include <doctest/doctest.h>

#include "suggest.h"

using namespace jqtrace;

TEST_CASE("edit distance") {
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("validate", "valdate") == 1);
  CHECK(edit_distance("token", "tokne") == 1);  // a swap of two neighbours is one edit
  CHECK(edit_distance("stast", "stats") == 1);
  CHECK(edit_distance("abc", "cba") == 2);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("closest match suggests near names only") {
  std::vector<std::string> kinds = {"token", "layer", "step"};
  CHECK(closest_match("tokn", kinds) == "token");
  CHECK(closest_match("layr", kinds) == "layer");
  CHECK(closest_match("banana", kinds).empty());
  CHECK(closest_match("stast", {"validate", "stats", "markers"}) == "stats");
}
