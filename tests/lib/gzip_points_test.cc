#include <doctest/doctest.h>

#include "gzip_points.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

/// Text that compresses into many deflate blocks: JSON-like lines with varying numbers.
std::string lines_of_text(std::size_t n, unsigned seed) {
  std::string t;
  uint64_t x = seed;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t += "{\"ph\":\"X\",\"ts\":" + std::to_string(i * 17 + (x >> 60)) + ",\"dur\":" + std::to_string((x >> 40) % 9973) +
         ",\"name\":\"n" + std::to_string((x >> 20) % 37) + "\"},\n";
  }
  return t;
}

}  // namespace

TEST_CASE("text decoded from any access point is the text decoded from the start") {
  std::string a = lines_of_text(20000, 1), b = lines_of_text(15000, 2);
  // Two members, as concatenated gzip files are: points in both, reads across the seam.
  std::string text = a + b;
  for (int level : {1, 6, 9}) {
    CAPTURE(level);
    TempFile file(gzip_bytes(a, level) + gzip_bytes(b, level));
    std::vector<GzipPoint> points;
    std::string why;
    REQUIRE(build_gzip_points(file.path, 64 * 1024, &points, &why));
    CAPTURE(points.size());
    REQUIRE(points.size() > 8);
    CHECK(points.front().out == 0);
    bool in_second_member = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const GzipPoint& p = points[i];
      if (i) CHECK(p.out > points[i - 1].out);
      in_second_member = in_second_member || p.out > a.size();
      for (uint64_t from : {p.out, p.out + 1000}) {
        uint64_t to = std::min<uint64_t>(from + 70000, text.size());
        std::string got;
        REQUIRE(decode_from_point(file.path, p, from, to, &got));
        CHECK(got == text.substr(from, to - from));
      }
    }
    CHECK(in_second_member);
    std::string rest;
    REQUIRE(decode_from_point(file.path, points[points.size() / 2], points[points.size() / 2].out, UINT64_MAX, &rest));
    CHECK(rest == text.substr(points[points.size() / 2].out));
    CHECK(point_before(points, text.size() - 1) == &points.back());
    CHECK(point_before(points, 0) == &points.front());
  }
}

TEST_CASE("a gzip stream cut short keeps the points before the cut and decodes as far as it goes") {
  std::string text = lines_of_text(30000, 3);
  std::string gz = gzip_bytes(text);
  TempFile file(gz.substr(0, gz.size() / 2));
  std::vector<GzipPoint> points;
  std::string why;
  REQUIRE(build_gzip_points(file.path, 64 * 1024, &points, &why));
  REQUIRE(points.size() > 2);
  std::string got;
  REQUIRE(decode_from_point(file.path, points[1], points[1].out, UINT64_MAX, &got));
  CHECK(!got.empty());
  CHECK(got == text.substr(points[1].out, got.size()));
}

TEST_CASE("a file that is not gzip has no access points") {
  TempFile file(lines_of_text(100, 5));
  std::vector<GzipPoint> points;
  std::string why;
  CHECK_FALSE(build_gzip_points(file.path, 64 * 1024, &points, &why));
  CHECK_FALSE(why.empty());
}
