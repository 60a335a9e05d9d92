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

TEST_CASE("close_matches: a typo's closest name, else the names holding the word, those starting with it first") {
  std::vector<std::string> groups = {"ffn chain", "attn std", "Attn chain", "moe experts"};
  CHECK(close_matches("ffn chian", groups) == std::vector<std::string>{"ffn chain"});
  CHECK(close_matches("attn", groups) == std::vector<std::string>{"attn std", "Attn chain"});
  CHECK(close_matches("chain", groups) == std::vector<std::string>{"ffn chain", "Attn chain"});
  CHECK(close_matches("xyz", groups).empty());
  CHECK(close_matches("", groups).empty());
  CHECK(close_matches("n", groups, 2).size() == 2);
  CHECK(did_you_mean({}).empty());
  CHECK(did_you_mean({"a"}) == " (did you mean 'a'?)");
  CHECK(did_you_mean({"a", "b", "c"}) == " (did you mean 'a', 'b' or 'c'?)");
}
