#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

namespace jqtrace::test {
/// The repository's samples/ (test_util.h).
extern const char* const kSamplesDir = JQTRACE_SAMPLES;
}  // namespace jqtrace::test
