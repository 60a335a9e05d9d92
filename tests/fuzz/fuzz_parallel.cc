// libFuzzer target: the parallel loader, with parts as small as 64 bytes, must build the
// model one pass builds (or decline and leave the read to one pass) for any bytes; the
// parallel validator likewise reports what the one-pass validator reports.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "trace.h"
#include "validate.h"

using namespace jqtrace;

namespace {

struct CountingSink final : DiagnosticSink {
  std::size_t count = 0;
  void report(Diagnostic) override { ++count; }
};

std::string temp_file(const uint8_t* data, std::size_t size) {
  static std::string path = [] {
    char name[] = "/tmp/jqtrace-fuzz-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return std::string(name);
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

void check(bool ok) {
  if (!ok) std::abort();  // a difference between the parallel and the one-pass result
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string path = temp_file(data, size);
  Trace one, parts;
  auto source = Source::from_string(std::string(reinterpret_cast<const char*>(data), size));
  ReadResult r1 = load_trace(*source, &one, nullptr);
  ReadResult r2;
  if (load_trace_parallel(path, 3, &parts, nullptr, LoadOptions{}, {}, &r2, 64)) {
    check(r1.status == r2.status);
    check(r1.events == r2.events);
    if (r1.status != ReadStatus::input_error) {
      check(one.lanes.size() == parts.lanes.size());
      check(one.counters.size() == parts.counters.size());
      check(one.instants.size() == parts.instants.size());
      check(one.start_ns == parts.start_ns && one.end_ns == parts.end_ns);
      for (std::size_t l = 0; l < one.lanes.size(); ++l) check(one.lanes[l].spans.size() == parts.lanes[l].spans.size());
    }
  }
  CountingSink a, b;
  auto again = Source::from_string(std::string(reinterpret_cast<const char*>(data), size));
  ValidateResult v1 = validate_trace(*again, a);
  ValidateResult v2;
  if (validate_trace_parallel(path, 3, b, {}, 64, &v2)) {
    check(v1.errors == v2.errors && v1.warnings == v2.warnings);
    check(a.count == b.count);
  }
  return 0;
}
