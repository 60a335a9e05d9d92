#include <doctest/doctest.h>

#include "decoders.h"
#include "gzip_points.h"
#include "raw_input.h"
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

/// The inflaters a cursor can use in this build.
std::vector<GzipEngine> engines() {
  std::vector<GzipEngine> all{GzipEngine::zlib};
  if (have_isal()) all.push_back(GzipEngine::isal);
  return all;
}

std::string engine_name(GzipEngine e) { return e == GzipEngine::zlib ? "zlib" : "isal"; }

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
    REQUIRE(build_gzip_points(input_of(file.path), 64 * 1024, &points, &why));
    CAPTURE(points.size());
    REQUIRE(points.size() > 8);
    CHECK(points.front().out == 0);
    bool in_second_member = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const GzipPoint& p = points[i];
      if (i) CHECK(p.out > points[i - 1].out);
      in_second_member = in_second_member || p.out > a.size();
      for (GzipEngine engine : engines()) {
        CAPTURE(engine_name(engine));
        for (uint64_t from : {p.out, p.out + 1000}) {
          uint64_t to = std::min<uint64_t>(from + 70000, text.size());
          std::string got;
          REQUIRE(decode_from_point(input_of(file.path), p, from, to, &got, engine));
          CHECK(got == text.substr(from, to - from));
        }
      }
    }
    CHECK(in_second_member);
    for (GzipEngine engine : engines()) {
      CAPTURE(engine_name(engine));
      for (const GzipPoint* p : {&points[points.size() / 2], &points.back(), &points.front()}) {
        std::string rest;
        REQUIRE(decode_from_point(input_of(file.path), *p, p->out, UINT64_MAX, &rest, engine));
        CHECK(rest == text.substr(p->out));
      }
    }
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
  REQUIRE(build_gzip_points(input_of(file.path), 64 * 1024, &points, &why));
  REQUIRE(points.size() > 2);
  for (GzipEngine engine : engines()) {
    CAPTURE(engine_name(engine));
    std::string got;
    REQUIRE(decode_from_point(input_of(file.path), points[1], points[1].out, UINT64_MAX, &got, engine));
    // All the text the cut leaves whole, to within what deflate holds back for its end.
    CHECK(got.size() + 64 * 1024 > text.size() / 2 - points[1].out);
    CHECK(got == text.substr(points[1].out, got.size()));
  }
}

TEST_CASE("a file that is not gzip has no access points") {
  TempFile file(lines_of_text(100, 5));
  std::vector<GzipPoint> points;
  std::string why;
  CHECK_FALSE(build_gzip_points(input_of(file.path), 64 * 1024, &points, &why));
  CHECK_FALSE(why.empty());
}

namespace {

/// Everything a decoder hands out in reads of `chunk` bytes, and its last error.
std::pair<std::string, std::string> drain_text(RawInput& in, std::size_t chunk = 100000) {
  std::string text;
  std::vector<char> buf(chunk);
  for (long n; (n = in.read(buf.data(), buf.size())) > 0;) text.append(buf.data(), static_cast<std::size_t>(n));
  return {text, in.error()};
}

}  // namespace

TEST_CASE("the ISA-L decoder takes access points as it decodes, and each decodes to the text after it") {
  if (!have_isal()) {
    MESSAGE("skipped: this build has no ISA-L (the zlib pass makes the points)");
    return;
  }
  std::string a = lines_of_text(20000, 1), b = lines_of_text(15000, 2);
  std::string text = a + b;
  for (int level : {0, 1, 6, 9}) {
    CAPTURE(level);
    std::string gz = gzip_bytes(a, level) + gzip_bytes(b, level);
    TempFile file(gz);
    GzipPointHunt hunt(64 * 1024);
    auto in = gzip_decoder(memory_input(gz), GzipEngine::isal, &hunt);
    auto [got, error] = drain_text(*in);
    CHECK(error.empty());
    CHECK(got == text);
    in.reset();
    const std::vector<GzipPoint>& points = hunt.points;
    CAPTURE(points.size());
    REQUIRE(points.front().out == 0);
    // The same points as zlib's pass finds: the first block boundary a spacing after the
    // last point. Stored blocks (level 0) have headers too short to catch every time.
    std::vector<GzipPoint> zlib_points;
    std::string why;
    REQUIRE(build_gzip_points(input_of(file.path), hunt.spacing, &zlib_points, &why));
    if (level == 0) {
      CHECK(points.size() <= zlib_points.size());
    } else {
      REQUIRE(points.size() == zlib_points.size());
      CHECK(points.size() > 8);
      for (std::size_t i = 0; i < points.size(); ++i) {
        CHECK(points[i].out == zlib_points[i].out);
        CHECK(points[i].in == zlib_points[i].in);
        CHECK(points[i].bits == zlib_points[i].bits);
        CHECK(points[i].window == zlib_points[i].window);
      }
    }
    bool in_second_member = false;
    for (std::size_t i = 1; i < points.size(); ++i) {
      const GzipPoint& p = points[i];
      CAPTURE(i);
      CHECK(p.out >= points[i - 1].out + hunt.spacing);
      CHECK(p.bits < 8);
      GzipPoint unpacked;
      REQUIRE(unpack_point(p, &unpacked));
      CHECK(unpacked.window.size() == std::min<uint64_t>(32768, p.out < a.size() ? p.out : p.out - a.size()));
      in_second_member = in_second_member || p.out > a.size();
      uint64_t to = std::min<uint64_t>(p.out + 70000, text.size());
      std::string from_point;
      REQUIRE(decode_from_point(input_of(file.path), p, p.out, to, &from_point));
      CHECK(from_point == text.substr(p.out, to - p.out));
    }
    if (level != 0) CHECK(in_second_member);
  }
}

TEST_CASE("taking access points changes nothing the ISA-L decoder hands out, before damage or not") {
  if (!have_isal()) {
    MESSAGE("skipped: this build has no ISA-L");
    return;
  }
  std::string text = lines_of_text(30000, 4);
  std::string gz = gzip_bytes(text);
  for (std::size_t at = 20; at + 8 < gz.size(); at += gz.size() / 23) {
    CAPTURE(at);
    std::string damaged = gz;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    GzipPointHunt hunt(16 * 1024);
    auto plain = gzip_decoder(memory_input(damaged), GzipEngine::isal);
    auto hunting = gzip_decoder(memory_input(damaged), GzipEngine::isal, &hunt);
    auto [plain_text, plain_error] = drain_text(*plain, 4096);
    auto [hunted_text, hunted_error] = drain_text(*hunting, 4096);
    CHECK(hunted_text == plain_text);
    CHECK(hunted_error == plain_error);
  }
}

TEST_CASE("damaged gzip read from an access point fails, through either inflater, within its buffers") {
  std::string a = lines_of_text(16000, 7), b = lines_of_text(6000, 8);
  std::string gz = gzip_bytes(a, 6) + gzip_bytes(b, 6);
  std::vector<GzipPoint> points;
  {
    TempFile clean(gz);
    std::string why;
    REQUIRE(build_gzip_points(input_of(clean.path), 16 * 1024, &points, &why));
  }
  REQUIRE(points.size() > 4);
  // The cut stream ISA-L 2.30 leaves with its input count wrapped (decoders_test.cc).
  TempFile wrapped(std::string("\x1f\x8b\x08\x00\x7b\x00\x00\x00\x00\x02\x03\x2a\x28\x4a\x4c\x4e\x75\x2d\x4b\xcd\x4d\x05\x80\x04\x00\x00", 26));
  for (GzipEngine engine : engines()) {
    CAPTURE(engine_name(engine));
    std::string got;
    CHECK_FALSE(decode_from_point(input_of(wrapped.path), GzipPoint{}, 0, UINT64_MAX, &got, engine));
    for (std::size_t at = 40; at < gz.size(); at += gz.size() / 23) {
      CAPTURE(at);
      std::string damaged = gz;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x21);
      TempFile file(damaged);
      for (const GzipPoint& p : points) {
        std::string text;
        // Damage may be found (false) or decode into other bytes (deflate has no check
        // before a member's end); either way within the buffers, which the sanitizers see.
        if (decode_from_point(input_of(file.path), p, p.out, UINT64_MAX, &text, engine)) CHECK(text.size() <= 4 * (a.size() + b.size()));
      }
    }
  }
}
