// Parallel parsing of a decoded stream (gzip, zstd, stdin): the parts must add up to what
// one pass reads, whatever the layout, the damage, or a cut that proves wrong.
#include <doctest/doctest.h>

#include <memory>

#include "stream_parts.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

std::string event(int i) {
  return "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i % 3) + ",\"ts\":" + std::to_string(i * 10) +
         ",\"dur\":5,\"name\":\"e" + std::to_string(i % 7) + "\"}";
}

std::string lines_trace(int n) {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < n; ++i) text += event(i) + (i + 1 < n ? ",\n" : "\n");
  return text + "]}\n";
}

/// Pretty-printed, with arrays of objects inside args: many lines that look like event
/// starts are not, so cuts prove wrong and the rest is read in one pass.
std::string pretty_trace(int n) {
  std::string text = "{\n  \"traceEvents\": [\n";
  for (int i = 0; i < n; ++i) {
    text += "    {\n      \"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(i % 2) + ", \"ts\": " +
            std::to_string(i * 10) + ", \"dur\": 4, \"name\": \"p" + std::to_string(i % 5) + "\",\n";
    text += "      \"args\": {\"list\": [\n";
    for (int j = 0; j < 3; ++j) text += std::string("        {\"k\": ") + std::to_string(j) + "}" + (j < 2 ? ",\n" : "\n");
    text += "      ]}\n    }" + std::string(i + 1 < n ? ",\n" : "\n");
  }
  return text + "  ]\n}\n";
}

/// Loads bytes (a file's) in one pass and in stream parts of part_bytes; both must agree.
void check_parts_match_one_pass(const std::string& bytes, uint64_t part_bytes, unsigned threads = 3) {
  TempFile file(bytes);
  Trace one, parts;
  auto src = Source::from_string(bytes);
  ReadResult expected = load_trace(*src, &one, nullptr);
  ReadResult r;
  REQUIRE(load_trace_parallel(input_of(file.path), threads, &parts, nullptr, LoadOptions{}, {}, &r, part_bytes));
  CHECK(r.status == expected.status);
  CHECK(r.events == expected.events);
  CHECK(r.message == expected.message);
  CHECK(r.offset == expected.offset);
  CHECK(r.stream_cut == expected.stream_cut);
  if (expected.status != ReadStatus::input_error) check_same_model(one, parts);
}

/// What a validation found, a line each ("line:col rule message"), and its counts.
std::vector<std::string> lines_of(const Collected& found, const ValidateResult& result) {
  std::vector<std::string> lines;
  for (const Diagnostic& d : found.diagnostics)
    lines.push_back(std::to_string(d.position.line) + ":" + std::to_string(d.position.column) + " " +
                    std::string(d.rule) + " " + d.message);
  lines.push_back(std::to_string(result.errors) + " errors " + std::to_string(result.warnings) + " warnings");
  return lines;
}

std::vector<std::string> validate_lines(const std::string& bytes, unsigned threads, uint64_t part_bytes) {
  TempFile file(bytes);
  Collected found;
  ValidateResult result;
  if (threads > 1) {
    REQUIRE(validate_trace_parallel(input_of(file.path), threads, found, {}, part_bytes, &result));
  } else {
    auto src = Source::open(file.path, nullptr);
    result = validate_trace(*src, found);
  }
  return lines_of(found, result);
}

/// validate_lines for a text in memory cut into parts (validate_text_parallel).
std::vector<std::string> validate_text_lines(const std::string& text, unsigned threads, uint64_t part_bytes) {
  Collected found;
  ValidateResult result;
  REQUIRE(validate_text_parallel(std::make_shared<const std::string>(text), 4, threads, found, part_bytes, &result));
  return lines_of(found, result);
}

}  // namespace

TEST_CASE("a text in memory is validated in parts as its file is: the same problems, where they are") {
  std::string text = lines_trace(2000);
  // Problems in several parts: a negative duration, an unknown phase, a duplicate key.
  for (std::size_t at : {text.size() / 5, text.size() / 2, text.size() * 4 / 5}) {
    std::size_t line = text.find("\"dur\":", at);
    REQUIRE(line != std::string::npos);
    text.insert(line, at == text.size() / 5 ? "\"dur\":-5," : at == text.size() / 2 ? "\"ph\":\"Q\"," : "\"dur\":1,");
  }
  std::vector<std::string> one = validate_lines(text, 1, 0);
  REQUIRE(one.size() > 1);
  CHECK(validate_text_lines(text, 1, 4096) == one);
  CHECK(validate_text_lines(text, 3, 4096) == one);
  CHECK(validate_lines(text, 3, 4096) == one);
}

TEST_CASE("a part starts at the last line that starts with '{' after a line ending in ','") {
  std::string text = "[\n{\"a\":1},\n{\"b\":2},\n  {\"c\":3}";
  std::size_t cut = last_part_start(text, 1);
  REQUIRE(cut != std::string_view::npos);
  CHECK(text.substr(cut, 4) == "{\"c\"");
  CHECK(last_part_start(text, cut + 1) == std::string_view::npos);  // not before min_start
  CHECK(last_part_start("{\"a\":[\n1,\n2]}", 0) == std::string_view::npos);
  CHECK(last_part_start("", 0) == std::string_view::npos);
}

TEST_CASE("gzip in stream parts builds the model one pass builds, for any part size") {
  std::string text = lines_trace(3000);
  for (uint64_t part : {64u, 300u, 4096u, 1u << 20}) {
    CAPTURE(part);
    check_parts_match_one_pass(gzip_bytes(text), part);
  }
  check_parts_match_one_pass(gzip_bytes(text), 256, 2);
}

TEST_CASE("cuts that prove wrong (pretty-printed arrays of objects) read the rest in one pass") {
  std::string text = pretty_trace(400);
  for (uint64_t part : {64u, 200u, 1000u}) {
    CAPTURE(part);
    check_parts_match_one_pass(gzip_bytes(text), part);
  }
}

TEST_CASE("stream parts: damage, a cut-short stream, an empty one, and blanks all agree with one pass") {
  std::string text = lines_trace(2000);
  std::string gz = gzip_bytes(text);
  check_parts_match_one_pass(gz.substr(0, gz.size() / 2), 256);  // cut short: a truncated trace
  std::string broken = text;
  broken.replace(broken.find("\"ts\":15000"), 10, "\"ts\":15000,,");
  check_parts_match_one_pass(gzip_bytes(broken), 256);  // the first input error, where one pass finds it
  check_parts_match_one_pass(gzip_bytes(""), 256);
  check_parts_match_one_pass(gzip_bytes(std::string(5000, ' ') + text), 256);
  check_parts_match_one_pass(gzip_bytes("[\n" + text.substr(17, text.size() - 17 - 3)), 256);  // array form, no ']'
  check_parts_match_one_pass(gzip_bytes("\"not a trace\"\n"), 64);
}

TEST_CASE("validate in stream parts reports what one pass reports, with the same positions") {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 1500; ++i) {
    text += event(i) + ",\n";
    if (i % 300 == 5) text += "{\"ph\":\"E\",\"pid\":1,\"tid\":0,\"ts\":" + std::to_string(i * 10) + "},\n";
    if (i % 400 == 7) text += "{\"ph\":\"X\",\"pid\":1,\"ts\":-5,\"dur\":1,\"name\":\"neg\"},\n";
  }
  text += event(1500) + "\n]}\n";
  std::string gz = gzip_bytes(text);
  std::vector<std::string> one = validate_lines(gz, 1, 0);
  CHECK(one.size() > 3);
  for (uint64_t part : {64u, 500u, 1u << 20}) {
    CAPTURE(part);
    CHECK(validate_lines(gz, 3, part) == one);
  }
  std::string pretty = gzip_bytes(pretty_trace(300));
  CHECK(validate_lines(pretty, 2, 128) == validate_lines(pretty, 1, 0));
}

TEST_CASE("validate: a join that cannot be exact (a chain published twice) reads the rest in one pass") {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 600; ++i) {
    text += event(i) + ",\n";
    if (i == 50 || i == 450)  // the same chain published twice, far apart
      text += "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":" + std::to_string(i * 10) +
              ",\"dur\":1,\"name\":\"publish\",\"args\":{\"stage\":2,\"arg\":0,\"chain\":7}},\n";
  }
  text += event(600) + "\n],\"jobqueProfile\":{\"version\":1}}\n";
  std::string gz = gzip_bytes(text);
  CHECK(validate_lines(gz, 3, 256) == validate_lines(gz, 1, 0));
}
