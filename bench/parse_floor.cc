// The parse floor: RapidJSON 1.1.0's Reader over a 64 KiB FileReadStream with a handler
// that does nothing, using the same parse flags as jqtrace's reader. No trace reader can
// be faster than this on one thread; bench/run.sh reports jqtrace as a ratio of it.
#include <cstdio>

#include <rapidjson/filereadstream.h>
#include <rapidjson/reader.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: parse-floor FILE\n");
    return 2;
  }
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f) {
    std::perror(argv[1]);
    return 3;
  }
  static char buffer[64 * 1024];
  rapidjson::FileReadStream stream(f, buffer, sizeof buffer);
  rapidjson::BaseReaderHandler<> nothing;
  rapidjson::Reader reader;
  constexpr unsigned kFlags =
      rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseTrailingCommasFlag;
  rapidjson::ParseResult r = reader.Parse<kFlags>(stream, nothing);
  std::fclose(f);
  if (r.IsError()) {
    std::fprintf(stderr, "parse-floor: error %d at offset %zu\n", static_cast<int>(r.Code()), r.Offset());
    return 1;
  }
  return 0;
}
