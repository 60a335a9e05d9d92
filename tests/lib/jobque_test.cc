#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "jobque.h"

using namespace jqtrace;

TEST_CASE("publish stage packs the stage count and the tag") {
  CHECK(publish_nstages(1027) == 3);
  CHECK(publish_tag(1027) == 4);
  CHECK(publish_nstages(770) == 2);
  CHECK(publish_tag(770) == 3);
}

TEST_CASE("a trace without tags has its chains named by stage count, each name a guess") {
  JobqueProfile none;
  Attribution a = chain_attribution(none, false);
  CHECK(a == Attribution::stage_count);
  CHECK(chain_category(4, 0, none, a).name == "attn chain");
  CHECK(chain_category(3, 0, none, a).name == "attn chain");
  CHECK(chain_category(2, 0, none, a).name == "ffn chain");
  CHECK(chain_category(1, 0, none, a).name == "classifier");
  CHECK(chain_category(1, 0, none, a).guessed);
  CHECK(chain_category(0, 0, none, a).name == "unpublished chain");  // no publish recorded
  CHECK_FALSE(chain_category(0, 0, none, a).guessed);
}

TEST_CASE("tag 0 in a trace whose profile has categories is untagged, never a registered name") {
  JobqueProfile p;
  p.present = true;
  p.categories.push_back({5, "classifier", "#123456"});
  Attribution a = chain_attribution(p, true);
  CHECK(a == Attribution::profile);
  CHECK(chain_category(1, 0, p, a).name == "untagged");
  CHECK_FALSE(chain_category(1, 0, p, a).guessed);
  CHECK(chain_category(1, 5, p, a).name == "classifier");
  CHECK(chain_category(1, 12, p, a).name == "tag 12");  // an id the profile lacks
  CHECK(chain_category(2, 6, p, a).name == "tag 6");    // not the legacy table's name
  CHECK(chain_attribution(p, false) == Attribution::profile);
}

TEST_CASE("tags without profile categories use the legacy table, tag 0 the stage count guess") {
  JobqueProfile p;
  p.present = true;  // a profile with markers but no categories
  Attribution a = chain_attribution(p, true);
  CHECK(a == Attribution::legacy_tags);
  CHECK(chain_category(2, 6, p, a).name == "moe experts");
  CHECK_FALSE(chain_category(2, 6, p, a).guessed);
  CHECK(chain_category(1, 10, p, a).name == "park/reduce");
  CHECK(chain_category(1, 12, p, a).name == "tag 12");
  CHECK(chain_category(1, 0, p, a).name == "classifier");
  CHECK(chain_category(1, 0, p, a).guessed);
  CHECK(legacy_tag_name(11) == "deltanet");
  CHECK(std::string(attribution_name(Attribution::legacy_tags)) == "legacy tags");
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
  CHECK(category_color("untagged", none) == "#9A9A9A");
  // The four groups no tag names are greys far apart (they were 20 levels apart and read
  // as one): every pair at least 80 apart in RGB.
  std::vector<std::string> greys = {category_color("unpublished chain", none), category_color("untagged", none),
                                    category_color("fifo job", none), category_color("wake", none)};
  auto channel = [](const std::string& hex, int i) { return std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16); };
  for (std::size_t a = 0; a < greys.size(); ++a)
    for (std::size_t b = a + 1; b < greys.size(); ++b) {
      double d2 = 0;
      for (int i = 0; i < 3; ++i) d2 += std::pow(channel(greys[a], i) - channel(greys[b], i), 2);
      CHECK_MESSAGE(std::sqrt(d2) >= 80, greys[a], " and ", greys[b]);
    }
  // Tags: the profile's ids, legacy names' tags, "tag N"; none for the groups no tag names.
  JobqueProfile profile;
  profile.categories.push_back({7, "shexp", "#C39536"});
  CHECK(category_tag("shexp", profile) == 7);
  CHECK(category_tag("attn chain", none) == 1);
  CHECK(category_tag("attn std", none) == 2);
  CHECK(category_tag("deltanet", none) == 11);
  CHECK(category_tag("tag 40", none) == 40);
  CHECK(category_tag("untagged", none) == INT64_MAX);
  CHECK(category_color("tag 40", none) == "#C39536");
}
