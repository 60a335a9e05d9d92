#include "version.h"

#include <fmt/core.h>
#include <rapidjson/rapidjson.h>
#include <zlib.h>

#include "decoders.h"

namespace jqtrace::cli {

std::string version_text() {
  std::string commit = JQTRACE_COMMIT;  // empty when not built from a git checkout
  return fmt::format("jqtrace {}{}\nbuilt with RapidJSON {}, fmt {}.{}.{}, zlib {}; {}", JQTRACE_VERSION,
                     commit.empty() ? "" : " (commit " + commit + ")", RAPIDJSON_VERSION_STRING, FMT_VERSION / 10000,
                     FMT_VERSION / 100 % 100, FMT_VERSION % 100, ZLIB_VERSION, decoders_text());
}

}  // namespace jqtrace::cli
