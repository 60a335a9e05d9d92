#include <doctest/doctest.h>

#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
ReadRun read_profile(const std::string& profile) {
  ReadRun run;
  read_string(R"({"traceEvents":[],"jobqueProfile":)" + profile + "}", run);
  return run;
}
std::vector<std::string> messages(const ReadRun& run) {
  std::vector<std::string> out;
  for (const Diagnostic& d : run.got.diagnostics) out.push_back(std::string(d.rule) + ": " + d.message);
  return out;
}
}  // namespace

TEST_CASE("a well-formed profile gives categories with colors and markers") {
  ReadRun run = read_profile(kProfile);
  CHECK(run.got.diagnostics.empty());
  const JobqueProfile& p = run.got.profile;
  CHECK(p.version == 1);
  CHECK(p.lanes == 3);
  REQUIRE(p.categories.size() == 2);
  CHECK(p.category(3)->name == "ffn chain");
  CHECK(p.category(3)->color == "#43B08A");
  CHECK(p.category(2) == nullptr);
  CHECK(p.has_marker("layer"));
}

TEST_CASE("profile shape problems are reported / and good entries kept") {
  ReadRun run = read_profile(R"({"version":"1","lanes":0,"categories":[{"id":0,"name":"x"},7,)"
                             R"({"id":4,"name":"ok","color":"#ABCDEF"}],"markers":{}})");
  std::vector<std::string> expected = {
      "profile-shape: jobqueProfile.version is not an integer",
      "profile-shape: jobqueProfile.lanes is not a positive integer",
      "profile-shape: category id is missing or not an integer >= 1",
      "profile-shape: category entry is not an object",
      "profile-shape: jobqueProfile.markers is not an array",
  };
  CHECK(messages(run) == expected);
  REQUIRE(run.got.profile.categories.size() == 1);
  CHECK(run.got.profile.categories[0].name == "ok");
}

TEST_CASE("unsupported version / bad colors / duplicate ids and names") {
  ReadRun run = read_profile(R"({"version":2,"categories":[{"id":1,"name":"a","color":"red"},)"
                             R"({"id":1,"name":"b"},{"id":2,"name":"a"}],)"
                             R"("markers":[{"id":0,"name":"token"},{"id":0,"name":"step"},{"id":1,"name":"token"}]})");
  std::vector<std::string> expected = {
      "profile-version: unsupported jobqueProfile version 2 (expected 1)",
      "profile-color: category 'a' color is not #RRGGBB",
      "profile-duplicate: category id 1 is defined twice",
      "profile-duplicate: category name 'a' is defined twice",
      "profile-duplicate: marker id 0 is defined twice",
      "profile-duplicate: marker name 'token' is defined twice",
  };
  CHECK(messages(run) == expected);
}

TEST_CASE("a profile that is not an object") {
  ReadRun run = read_profile("[1,2]");
  REQUIRE(run.got.diagnostics.size() == 1);
  CHECK(run.got.diagnostics[0].message == "jobqueProfile is not an object");
}

TEST_CASE("hex colors") {
  CHECK(is_hex_color("#5E96DE"));
  CHECK(is_hex_color("#abcdef"));
  CHECK_FALSE(is_hex_color("#ABCDE"));
  CHECK_FALSE(is_hex_color("5E96DE0"));
  CHECK_FALSE(is_hex_color("#GGGGGG"));
}

TEST_CASE("a jobqueProfile or jqtraceWindow nested half a million deep is refused, not a stack overflow") {
  std::string deep = std::string(500000, '[') + std::string(500000, ']');
  ValidateRun v = validate_string(R"({"traceEvents":[],"jobqueProfile":{"a":)" + deep + "}}");
  CHECK(v.has_rule("too-deep"));  // the reader stops at 1000 levels, before the profile's own bound
  Trace t;
  load_string(R"({"traceEvents":[],"jqtraceWindow":{"lo_us":1,"hi_us":2,"a":)" + deep + "}}", &t);
  CHECK_FALSE(t.window.present);
}
