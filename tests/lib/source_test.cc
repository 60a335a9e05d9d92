#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <zlib.h>

#include "source.h"
#include "test_util.h"

using namespace jqtrace;
using jqtrace::test::TempFile;
using jqtrace::test::gzip_bytes;

namespace {

std::string drain(Source& s) {
  std::string got;
  while (s.Peek() != '\0') got += s.Take();
  return got;
}

/// A temporary file removed at scope exit.

}  // namespace

TEST_CASE("a memory source yields its bytes / then NUL at the end / and counts offsets") {
  auto s = Source::from_string("ab\ncd");
  CHECK(s->Tell() == 0);
  CHECK(s->Take() == 'a');
  CHECK(s->Tell() == 1);
  CHECK(drain(*s) == "b\ncd");
  CHECK(s->Tell() == 5);
  CHECK(s->at_end());
  CHECK(s->Take() == '\0');
  CHECK(s->Tell() == 5);
}

TEST_CASE("text longer than one buffer streams through unchanged") {
  std::string big;
  for (int i = 0; i < 50000; ++i) big += "line " + std::to_string(i) + "\n";
  auto s = Source::from_string(big);
  CHECK(drain(*s) == big);
  CHECK(s->text_bytes() == big.size());
}

TEST_CASE("a run of whitespace as long as you like needs no bigger buffer") {
  std::string text = "[" + std::string(8 << 20, ' ') + "\t\r" + std::string(1 << 20, ' ') + "1]";
  auto s = Source::from_string(gzip_bytes(text));
  CHECK(drain(*s) == text);
  CHECK(s->buffer_bytes() <= (1u << 20));  // it grew to 16 MiB when only newlines and brackets were cuts
}

TEST_CASE("a run that is neither a string nor cut by structure is not buffered whole, and is refused past a window") {
  // 64 MiB of NUL bytes (or of 'x'): the window grew to hold all of it, looking for a cut
  // (validate of a gzip of 1 GiB of NULs held 2.1 GB and took 11 s to name byte 0).
  for (char c : {'\0', 'x'}) {
    auto s = Source::from_string(gzip_bytes(std::string(64 << 20, c)));
    CHECK(s->Peek() == c);
    CHECK(s->buffer_bytes() <= (1u << 20));
  }
  // The parser read a whole window of it and asks for more: no JSON token is that long.
  auto s = Source::from_string(std::string(3 << 20, '7'));
  std::string got = drain(*s);
  CHECK(got.size() < (1u << 20));
  CHECK(s->token_too_long_at() == 0);  // where the run began
  CHECK(s->read_error().find("not JSON text") != std::string::npos);
  // A string that long is still read whole.
  std::string text = "[\"" + std::string(3 << 20, 'y') + "\"]";
  auto long_string = Source::from_string(text);
  CHECK(drain(*long_string) == text);
  CHECK(long_string->read_error().empty());
}

TEST_CASE("the first NUL byte is noted with its offset") {
  auto s = Source::from_string(std::string("[1,\0 2]", 7));
  drain(*s);
  CHECK(s->first_nul() == 3);
  auto clean = Source::from_string("[1, 2]");
  drain(*clean);
  CHECK(clean->first_nul() == UINT64_MAX);
}

TEST_CASE("gzip is recognised by its magic bytes and inflated on the fly") {
  std::string text = "{\"traceEvents\":[]}\n";
  auto s = Source::from_string(gzip_bytes(text));
  CHECK(s->compression() == Compression::gzip);
  CHECK(drain(*s) == text);
  CHECK(s->read_error().empty());
}

TEST_CASE("concatenated gzip members read as one text") {
  auto s = Source::from_string(gzip_bytes("first ") + gzip_bytes("second"));
  CHECK(drain(*s) == "first second");
}

TEST_CASE("a truncated gzip stream gives the text before the cut and says it was cut short") {
  std::string text(100000, 'x');
  std::string gz = gzip_bytes(text);
  auto s = Source::from_string(gz.substr(0, gz.size() / 2));
  std::string got = drain(*s);
  CHECK(s->read_error().empty());  // not unreadable: a prefix, which the reader treats as truncated
  CHECK(s->cut_short());
  CHECK(!got.empty());
  CHECK(text.compare(0, got.size(), got) == 0);
  auto whole = Source::from_string(gz);
  drain(*whole);
  CHECK_FALSE(whole->cut_short());
}

TEST_CASE("corrupt gzip data is a read error with zlib's reason") {
  std::string gz = gzip_bytes(std::string(1000, 'y'));
  gz[gz.size() / 2] ^= 0x55;
  gz[gz.size() / 2 + 1] ^= 0x55;
  auto s = Source::from_string(gz);
  drain(*s);
  CHECK(s->read_error().rfind("corrupt gzip data", 0) == 0);
}

TEST_CASE("positions from a recording line index (stdin / memory)") {
  auto s = Source::from_string("ab\ncd\n\nefg");
  drain(*s);
  CHECK(s->locate(0).line == 1);
  CHECK(s->locate(0).column == 1);
  CHECK(s->locate(2).column == 3);  // the newline belongs to its line
  CHECK(s->locate(3).line == 2);
  CHECK(s->locate(4).column == 2);
  CHECK(s->locate(7).line == 4);
  CHECK(s->locate(9).column == 3);
  CHECK(s->locate(10).column == 4);  // end of input
}

TEST_CASE("a recording index stays exact across thousands of lines and buffers") {
  std::string text;
  for (int i = 0; i < 30000; ++i) text += std::string(static_cast<std::size_t>(i % 37), 'x') + "\n";
  auto s = Source::from_string(text);
  drain(*s);
  std::size_t offset = 0;
  for (int i = 0; i < 30000; ++i) {
    if (i % 997 == 0) {
      TextPosition p = s->locate(offset);
      REQUIRE(p.line == static_cast<uint64_t>(i + 1));
      REQUIRE(p.column == 1);
    }
    offset += static_cast<std::size_t>(i % 37) + 1;
  }
}

TEST_CASE("files are read again for positions / in any order / plain or gzip") {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"n\":" + std::to_string(i) + "}\n";
  for (const std::string& bytes : {text, gzip_bytes(text)}) {
    TempFile f(bytes);
    std::string err;
    auto s = Source::open(f.path, &err);
    REQUIRE(s);
    drain(*s);
    TextPosition late = s->locate(text.size() - 2);
    CHECK(late.line == 20000);
    TextPosition early = s->locate(text.find("{\"n\":5}"));
    CHECK(early.line == 6);
    CHECK(early.column == 1);
  }
}

TEST_CASE("opening a missing file or a directory fails with the reason") {
  std::string err;
  CHECK_FALSE(Source::open("/nonexistent/trace.json", &err));
  CHECK(err == "No such file or directory");
  CHECK_FALSE(Source::open("/tmp", &err));
  CHECK(err == "is a directory");
}
