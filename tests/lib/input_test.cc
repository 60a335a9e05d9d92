#include <doctest/doctest.h>

#include <cstdio>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "input.h"
#include "parts.h"
#include "source.h"
#include "test_util.h"

using namespace jqtrace;
using jqtrace::test::TempFile;
using jqtrace::test::gzip_bytes;
using jqtrace::test::input_of;

namespace {

std::string all_of(RawInput& in) {
  std::string text;
  char buf[7];  // small reads: the edges of every read are crossed
  for (long n; (n = in.read(buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  return text;
}

std::string drain(Source& s) {
  std::string got;
  while (s.Peek() != '\0') got += s.Take();
  return got;
}

/// A pipe whose read end is an Input (the write end filled with bytes and closed first).
std::shared_ptr<Input> pipe_of(const std::string& bytes) {
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  REQUIRE(::write(ends[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(ends[1]);
  std::string err;
  auto input = Input::open("/dev/fd/" + std::to_string(ends[0]), &err);
  ::close(ends[0]);  // the input opened a descriptor of its own
  REQUIRE_MESSAGE(input, err);
  return input;
}

}  // namespace

TEST_CASE("an input is what it was when opened: a file renamed over its path is not read") {
  std::string old_text = "[{\"ph\":\"X\",\"name\":\"old\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]\n";
  TempFile file(old_text);
  auto input = input_of(file.path);
  TempFile other("[{\"ph\":\"X\",\"name\":\"new\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},\n{}]\n");
  REQUIRE(std::rename(other.path.c_str(), file.path.c_str()) == 0);
  CHECK(input->size() == old_text.size());
  auto whole = Source::open(*input);
  REQUIRE(whole);
  CHECK(drain(*whole) == old_text);
  auto part = Source::open_part(*input, 10, "[{");
  REQUIRE(part);
  CHECK(drain(*part) == "[{" + old_text.substr(10));
  auto again = input->text_again();
  REQUIRE(again);
  CHECK(all_of(*again()) == old_text);  // what line positions count in
}

TEST_CASE("a regular file reads at any offset, as often as asked, each reader at its own position") {
  std::string text = "0123456789abcdefghij";
  TempFile file(text);
  auto input = input_of(file.path);
  CHECK(input->regular());
  CHECK(input->splits());
  CHECK(input->size() == text.size());
  CHECK(input->compression() == Compression::none);
  auto a = input->bytes_from(5), b = input->bytes_from(12);
  char one[3];
  REQUIRE(a->read(one, 3) == 3);
  CHECK(std::string(one, 3) == "567");
  CHECK(all_of(*b) == "cdefghij");
  CHECK(all_of(*a) == "89abcdefghij");  // a's position did not move with b's reads
  CHECK(all_of(*input->text()) == text);
  CHECK(all_of(*input->text()) == text);
  char at[4];
  CHECK(input->read_at(18, at, 4) == 2);
  CHECK(input->take_stream() == nullptr);  // a file is no stream
}

TEST_CASE("a compressed file: its magic found once, its text decoded again from the start on asking") {
  std::string text = "[{\"ph\":\"i\",\"name\":\"token\",\"ts\":5,\"pid\":1,\"tid\":1}]\n";
  TempFile file(gzip_bytes(text));
  auto input = input_of(file.path);
  CHECK(input->compression() == Compression::gzip);
  CHECK_FALSE(input->splits());
  CHECK(all_of(*input->text()) == text);
  CHECK(all_of(*input->text_again()()) == text);
  auto source = Source::open(*input);
  REQUIRE(source);
  CHECK(source->compressed());
  CHECK(drain(*source) == text);
}

TEST_CASE("a stream is read once, its sniffed magic handed on ahead of the rest") {
  std::string text = "[{\"ph\":\"i\",\"name\":\"token\",\"ts\":5,\"pid\":1,\"tid\":1}]\n";
  SUBCASE("plain") {
    auto input = pipe_of(text);
    CHECK_FALSE(input->regular());
    CHECK(input->size() == 0);
    CHECK(input->compression() == Compression::none);
    CHECK_FALSE(input->text_again());
    auto source = Source::open(*input);
    REQUIRE(source);
    CHECK(drain(*source) == text);
    CHECK(Source::open(*input) == nullptr);  // read already
    CHECK(input->text() == nullptr);
  }
  SUBCASE("gzip") {
    auto input = pipe_of(gzip_bytes(text));
    CHECK(input->compression() == Compression::gzip);
    CHECK(all_of(*input->text()) == text);
  }
  SUBCASE("shorter than a magic") {
    auto input = pipe_of("[");
    CHECK(input->compression() == Compression::none);
    CHECK(all_of(*input->take_stream()) == "[");
    CHECK(input->take_stream() == nullptr);
  }
  SUBCASE("empty") {
    auto input = pipe_of("");
    CHECK(all_of(*input->text()) == "");
  }
}

TEST_CASE("a stream's copy holds what its reader read, and says when it could not be written") {
  std::string bytes = gzip_bytes("[{\"ph\":\"i\",\"name\":\"token\",\"ts\":5,\"pid\":1,\"tid\":1}]\n");
  SUBCASE("written") {
    TempFile copy("");
    int fd = ::open(copy.path.c_str(), O_WRONLY | O_TRUNC);
    REQUIRE(fd >= 0);
    auto input = pipe_of(bytes);
    input->copy_stream_to(fd);
    CHECK(all_of(*input->text()).size() > 0);
    ::close(fd);
    CHECK_FALSE(input->copy_failed());
    auto again = input_of(copy.path);
    std::string raw(bytes.size() + 1, '\0');
    CHECK(again->read_at(0, raw.data(), raw.size()) == bytes.size());
    CHECK(raw.substr(0, bytes.size()) == bytes);
    CHECK(again->compression() == Compression::gzip);
  }
  SUBCASE("a full disk") {
    int fd = ::open("/dev/full", O_WRONLY);
    REQUIRE(fd >= 0);
    auto input = pipe_of(bytes);
    input->copy_stream_to(fd);
    all_of(*input->take_stream());
    ::close(fd);
    CHECK(input->copy_failed());
  }
}

TEST_CASE("an input that cannot be opened says why") {
  std::string err;
  CHECK(Input::open("/nonexistent/trace.json", &err) == nullptr);
  CHECK(err == "No such file or directory");
  CHECK(Input::open("/tmp", &err) == nullptr);
  CHECK(err == "is a directory");
}

TEST_CASE("a file's cut plan is made from the input, not from its path") {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 400; ++i)
    text += "{\"ph\":\"X\",\"name\":\"n\",\"ts\":" + std::to_string(i) + ",\"dur\":1,\"pid\":1,\"tid\":1},\n";
  text += "{}]}\n";
  TempFile file(text);
  auto input = input_of(file.path);
  REQUIRE(std::remove(file.path.c_str()) == 0);  // gone from its folder; the input still reads it
  PartPlan plan = plan_file(*input, 4, 1024);
  CHECK(plan.starts.size() > 2);
  CHECK(plan.starts == plan_parts(text, 4 * kPartsPerThread, 1024).starts);
  TempFile gz(gzip_bytes(text));
  CHECK(plan_file(*input_of(gz.path), 4, 1024).starts.size() == 1);  // compressed: cut as a stream
}
