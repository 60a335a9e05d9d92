// The common option group: formats a command offers, the format -o's extension picks,
// --columns only where tables are offered.
#include <doctest/doctest.h>

#include "common.h"

namespace jqtrace::cli {
namespace {

/// Parses args (after the program name) into a command offering formats.
CommonOptions parsed(const std::vector<Format>& formats, std::vector<std::string> args) {
  CLI::App app{"test", "jqtrace"};
  CommonOptions opts;
  add_common_options(app, opts, formats);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return opts;
}

}  // namespace

TEST_CASE("the format: --format, else -o's extension when offered, else the command's default") {
  CHECK(parsed(result::kDocumentFormats, {}).format() == Format::table);
  CHECK(parsed(result::kDocumentFormats, {"-o", "x.json"}).format() == Format::json);
  CHECK(parsed(result::kDocumentFormats, {"-o", "out/x.md"}).format() == Format::md);
  CHECK(parsed(result::kDocumentFormats, {"-o", "x.txt"}).format() == Format::table);
  CHECK(parsed(result::kDocumentFormats, {"--format", "csv", "-o", "x.json"}).format() == Format::csv);
  std::vector<Format> window = {Format::trace, Format::compact, Format::csv, Format::tsv};
  CHECK(parsed(window, {"-o", "token3.json"}).format() == Format::trace);  // a trace is JSON
  CHECK(parsed(window, {"-o", "rows.tsv"}).format() == Format::tsv);
}

TEST_CASE("-o naming a format the command does not write is a usage error unless --format says") {
  CHECK_FALSE(check_output_format(parsed(result::kDocumentFormats, {"-o", "x.svg"}), "stats"));
  CHECK(check_output_format(parsed(result::kDocumentFormats, {"--format", "json", "-o", "x.svg"}), "stats"));
  CHECK(check_output_format(parsed(result::kDocumentFormats, {"-o", "x.csv"}), "stats"));
}

TEST_CASE("--format accepts only the offered formats, --columns exists where tables do") {
  CHECK_THROWS_AS(parsed(result::kDocumentFormats, {"--format", "trace"}), CLI::ValidationError);
  CHECK(parsed(result::kDocumentFormats, {"--columns", "name,share_pct"}).columns == "name,share_pct");
  std::vector<Format> window = {Format::trace, Format::compact, Format::csv, Format::tsv};
  CHECK_THROWS(parsed(window, {"--columns", "name"}));
}

}  // namespace jqtrace::cli
