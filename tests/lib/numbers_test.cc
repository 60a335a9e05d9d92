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
