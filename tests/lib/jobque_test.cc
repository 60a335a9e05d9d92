#include <doctest/doctest.h>

#include "jobque.h"

using namespace jqtrace;

TEST_CASE("publish stage packs the stage count and the tag") {
  CHECK(publish_nstages(1027) == 3);
  CHECK(publish_tag(1027) == 4);
  CHECK(publish_nstages(770) == 2);
  CHECK(publish_tag(770) == 3);
}

TEST_CASE("untagged chains are named by their stage count") {
  JobqueProfile none;
  CHECK(chain_category(4, 0, none) == "attn chain");
  CHECK(chain_category(3, 0, none) == "attn chain");
  CHECK(chain_category(2, 0, none) == "ffn chain");
  CHECK(chain_category(1, 0, none) == "classifier");
  CHECK(chain_category(0, 0, none) == "std kernel");  // no publish recorded
}

TEST_CASE("tags use the profile's name / else the legacy table / else 'tag N'") {
  JobqueProfile p;
  p.present = true;
  p.categories.push_back({5, "lm head", "#123456"});
  CHECK(chain_category(1, 5, p) == "lm head");
  CHECK(chain_category(2, 6, p) == "moe experts");
  CHECK(chain_category(1, 10, p) == "park/reduce");
  CHECK(chain_category(1, 12, p) == "tag 12");
  CHECK(legacy_tag_name(11) == "deltanet");
}

TEST_CASE("colors come from the profile / else the viewer's palette") {
  JobqueProfile p;
  p.categories.push_back({1, "attn chain", "#000001"});
  CHECK(category_color("attn chain", p) == "#000001");
  JobqueProfile none;
  CHECK(category_color("attn std", none) == "#5E96DE");
  CHECK(category_color("ffn per-op", none) == "#43B08A");
  CHECK(category_color("classifier", none) == "#AC82E4");
  CHECK(category_color("moe experts", none) == "#E08563");
  CHECK(category_color("router", none) == "#4FC3D0");
  CHECK(category_color("park/reduce", none) == "#D678B4");
  CHECK(category_color("deltanet", none) == "#8385E8");
  CHECK(category_color("std kernel", none) == "#C39536");
  CHECK(category_color("tag 40", none) == "#C39536");
}
