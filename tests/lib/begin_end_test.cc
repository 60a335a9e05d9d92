#include "begin_end.h"

#include <doctest/doctest.h>

namespace jqtrace {

TEST_CASE("B/E pairing: an E closes the innermost open B, unclosed Bs and unmatched Es are kept") {
  BeginEndPairing<int> p;
  CHECK_FALSE(p.end(1));  // closes nothing
  p.begin(2);
  p.begin(3);
  CHECK(p.end(4) == 3);
  p.begin(5);
  CHECK(p.unclosed() == std::vector<int>{2, 5});
  CHECK(p.unmatched() == std::vector<int>{1});
}

TEST_CASE("B/E pairing in parts: the later part's unmatched Es close the earlier part's Bs, as one pass") {
  // One pass over B1 B2 | E3 E4 E5 B6 closes 2 with 3 and 1 with 4; 5 closes nothing; 6 stays open.
  BeginEndPairing<int> first, second;
  first.begin(1);
  first.begin(2);
  for (int e : {3, 4, 5}) CHECK_FALSE(second.end(e));
  second.begin(6);
  std::vector<std::pair<int, int>> closed;
  first.absorb(std::move(second), [&](int b, int e) { closed.push_back({b, e}); });
  CHECK(closed == std::vector<std::pair<int, int>>{{2, 3}, {1, 4}});
  CHECK(first.unmatched() == std::vector<int>{5});
  CHECK(first.unclosed() == std::vector<int>{6});
}

}  // namespace jqtrace
