// The parse floor: RapidJSON 1.1.0's Reader over a 64 KiB FileReadStream with a handler
// that does nothing. No trace reader can be faster than this on one thread; bench/run.sh
// reports jqtrace as a ratio of it.
//
//   parse-floor --fast FILE   RapidJSON's fastest configuration for these bytes: default
//                             flags (numbers parsed natively). The honest floor.
//   parse-floor FILE          the flags jqtrace's reader uses (numbers as strings,
//                             iterative, trailing commas): ~10% more work for the same bytes.
// FILE "-" is standard input (for `zcat trace.json.gz | parse-floor --fast -`).
#include <cstdio>
#include <cstring>

#include <rapidjson/filereadstream.h>
#include <rapidjson/reader.h>

namespace {

template <unsigned kFlags>
rapidjson::ParseResult parse(std::FILE* f) {
  static char buffer[64 * 1024];
  rapidjson::FileReadStream stream(f, buffer, sizeof buffer);
  rapidjson::BaseReaderHandler<> nothing;
  rapidjson::Reader reader;
  return reader.Parse<kFlags>(stream, nothing);
}

}  // namespace

int main(int argc, char** argv) {
  bool fast = argc == 3 && std::strcmp(argv[1], "--fast") == 0;
  if (argc != 2 && !fast) {
    std::fprintf(stderr, "usage: parse-floor [--fast] FILE\n");
    return 2;
  }
  const char* path = argv[argc - 1];
  std::FILE* f = std::strcmp(path, "-") == 0 ? stdin : std::fopen(path, "rb");
  if (!f) {
    std::perror(path);
    return 3;
  }
  constexpr unsigned kJqtraceFlags =
      rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseTrailingCommasFlag;
  rapidjson::ParseResult r = fast ? parse<rapidjson::kParseDefaultFlags>(f) : parse<kJqtraceFlags>(f);
  if (f != stdin) std::fclose(f);
  if (r.IsError()) {
    std::fprintf(stderr, "parse-floor: error %d at offset %zu\n", static_cast<int>(r.Code()), r.Offset());
    return 1;
  }
  return 0;
}
