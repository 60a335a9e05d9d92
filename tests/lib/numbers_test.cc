#include <doctest/doctest.h>

#include <string>

#include "numbers.h"

using namespace jqtrace;

namespace {
int64_t ns_of(const char* text) {
  int64_t ns = -999;
  REQUIRE(parse_us_to_ns(text, &ns) == NumberStatus::ok);
  return ns;
}
}  // namespace

TEST_CASE("microseconds with three decimals become exact nanoseconds") {
  CHECK(ns_of("12.345") == 12345);
  CHECK(ns_of("175780.914") == 175780914);
  CHECK(ns_of("0.000") == 0);
  CHECK(ns_of("0.001") == 1);
}

TEST_CASE("integer and short-fraction microseconds") {
  CHECK(ns_of("7") == 7000);
  CHECK(ns_of("1.5") == 1500);
  CHECK(ns_of("1.25") == 1250);
  CHECK(ns_of("438877834451") == 438877834451000);  // a Chrome absolute clock
}

TEST_CASE("digits past the nanosecond round half away from zero") {
  CHECK(ns_of("0.0004") == 0);
  CHECK(ns_of("0.0005") == 1);
  CHECK(ns_of("2.0009999") == 2001);
  CHECK(ns_of("-3.2505") == -3251);
}

TEST_CASE("negative and exponent forms") {
  CHECK(ns_of("-3.25") == -3250);
  CHECK(ns_of("1e3") == 1000000);
  CHECK(ns_of("1.5E-3") == 2);  // 1.5 ns rounds to 2
}

TEST_CASE("out-of-range times are refused / not wrapped") {
  int64_t ns = 0;
  CHECK(parse_us_to_ns("1e400", &ns) == NumberStatus::out_of_range);
  CHECK(parse_us_to_ns("99999999999999999999", &ns) == NumberStatus::out_of_range);
  CHECK(parse_us_to_ns("-1e300", &ns) == NumberStatus::out_of_range);
  CHECK(parse_us_to_ns("9999999999999999", &ns) == NumberStatus::out_of_range);  // 16 digits: 1e19 ns
  CHECK(parse_us_to_ns("4611686018427387.904", &ns) == NumberStatus::out_of_range);  // just past 2^62 ns
  CHECK(parse_us_to_ns("999999999999999", &ns) == NumberStatus::ok);
  CHECK(ns == 999999999999999000);
}

TEST_CASE("integers: plain / negative / integral floats - fractions are malformed") {
  int64_t v = 0;
  CHECK((parse_integer("17", &v) == NumberStatus::ok && v == 17));
  CHECK((parse_integer("-1", &v) == NumberStatus::ok && v == -1));
  CHECK((parse_integer("2.0", &v) == NumberStatus::ok && v == 2));
  CHECK((parse_integer("1e3", &v) == NumberStatus::ok && v == 1000));
  CHECK((parse_integer("1234567890123", &v) == NumberStatus::ok && v == 1234567890123));
  CHECK(parse_integer("1.5", &v) == NumberStatus::malformed);
  CHECK(parse_integer("99999999999999999999", &v) == NumberStatus::out_of_range);
}

TEST_CASE("nanoseconds print back as the shortest exact microseconds") {
  char buf[48];
  format_ns_as_us(12345, buf, sizeof buf);
  CHECK(std::string(buf) == "12.345");
  format_ns_as_us(7000, buf, sizeof buf);
  CHECK(std::string(buf) == "7");
  format_ns_as_us(1500, buf, sizeof buf);
  CHECK(std::string(buf) == "1.5");
  format_ns_as_us(-250, buf, sizeof buf);
  CHECK(std::string(buf) == "-0.25");
}

TEST_CASE("epoch-based microseconds keep every nanosecond digit (never through a double)") {
  // A double has 0.25 µs of resolution near 1e15 µs: both of these used to read .000.
  CHECK(ns_of("1733400000000000.100") == 1733400000000000100);
  CHECK(ns_of("1733400000000000.107") == 1733400000000000107);
  CHECK(ns_of("-1733400000000000.107") == -1733400000000000107);
  CHECK(ns_of("2305843009213693.951") == 2305843009213693951);  // 2^61 - 1 ns
  CHECK(ns_of("1733400000000000.1075") == 1733400000000000108);  // the fourth decimal rounds
  CHECK(ns_of("1.7334000000000001075e15") == 1733400000000000108);
  CHECK(ns_of("17334000000000001070e-4") == 1733400000000000107);
  // Every 16-digit epoch time with three decimals round-trips exactly.
  uint64_t state = 88172645463325252ull;
  for (int i = 0; i < 2000; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    int64_t ns = 1000000000000000000 + static_cast<int64_t>(state % 1000000000000000000ull);
    char text[48];
    format_ns_as_us(ns, text, sizeof text);
    REQUIRE(ns_of(text) == ns);
  }
}

TEST_CASE("exponents and long digit strings are exact") {
  CHECK(ns_of("1.5e-3") == 2);
  CHECK(ns_of("1.4999e-3") == 1);
  CHECK(ns_of("2.5E+2") == 250000);
  CHECK(ns_of("0.000000000000000000000000001") == 0);
  CHECK(ns_of("1e-400") == 0);
  CHECK(ns_of("0e400") == 0);
  CHECK(ns_of("12.3450000000000000000000000001") == 12345);
  CHECK(ns_of("0.00050000000000000000000000000") == 1);
  int64_t v = 0;
  CHECK((parse_integer("1.5e1", &v) == NumberStatus::ok && v == 15));
  CHECK((parse_integer("-4e18", &v) == NumberStatus::ok && v == -4000000000000000000));
  CHECK(parse_integer("1.00000000000000000001", &v) == NumberStatus::malformed);
  CHECK(parse_integer("1e-1", &v) == NumberStatus::malformed);
  CHECK(parse_us_to_ns("1e", &v) == NumberStatus::malformed);
  CHECK(parse_us_to_ns("1.e3", &v) == NumberStatus::malformed);
  CHECK(parse_us_to_ns("-", &v) == NumberStatus::malformed);
  CHECK((parse_ms_to_ns("1733400000000.000107", &v) == NumberStatus::ok && v == 1733400000000000107));
  CHECK((parse_ms_to_ns("1.5e-6", &v) == NumberStatus::ok && v == 2));
}
