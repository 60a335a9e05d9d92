// Per-event work is O(1) amortised or O(log n): doubling a hostile input roughly doubles
// the work. Work is counted, not timed: the CPU's count of retired user-space
// instructions (perf_event_open), which noise on a shared machine does not move. Where
// the kernel refuses the counter (a container that forbids it) these tests say so and
// skip.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "markers.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

/// Instructions f retires in user space, or -1 when the counter is not available.
int64_t instructions(const std::function<void()>& f) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  if (fd < 0) return -1;
  ioctl(fd, PERF_EVENT_IOC_RESET, 0);
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  f();
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  int64_t count = -1;
  if (read(fd, &count, sizeof count) != sizeof count) count = -1;
  close(fd);
  return count;
}

/// The work of f(n) and f(2n): their ratio is ~2 for linear work, ~4 for quadratic.
double doubling_ratio(const std::function<void(int)>& f, int n) {
  f(n / 4);  // warm up allocators and caches
  int64_t once = instructions([&] { f(n); });
  int64_t twice = instructions([&] { f(2 * n); });
  if (once <= 0 || twice <= 0) return -1;
  return static_cast<double>(twice) / static_cast<double>(once);
}

std::string process_names_trace(int n) {
  std::string json = "[";
  for (int i = 0; i < n; ++i)
    json += R"({"ph":"M","name":"process_name","pid":)" + std::to_string(i) + R"(,"args":{"name":"p"}},)";
  return json + R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":1}])";
}

std::string instant_kinds_trace(int n) {
  std::string json = "[";
  for (int i = 0; i < n; ++i)
    json += R"({"ph":"i","name":"k)" + std::to_string(i) + R"(","pid":0,"tid":0,"ts":)" + std::to_string(i) + "},";
  return json + R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":1}])";
}

}  // namespace

TEST_CASE("process_name metadata: doubling the events doubles the work") {
  std::string small = process_names_trace(20000), large = process_names_trace(40000);
  int64_t once = instructions([&] {
    Trace t;
    load_string(small, &t);
  });
  int64_t twice = instructions([&] {
    Trace t;
    load_string(large, &t);
  });
  if (once <= 0 || twice <= 0) {
    MESSAGE("SKIP: no instruction counter here (perf_event_open refused)");
    return;
  }
  double ratio = static_cast<double>(twice) / static_cast<double>(once);
  INFO("instructions " << once << " -> " << twice);
  CHECK(ratio < 2.6);  // a scan of the names so far made it ~4
  Trace t;
  load_string(small, &t);
  CHECK(t.process_names.size() == 20000);
}

TEST_CASE("marker kinds of a trace with as many kinds as instants: doubling doubles the work") {
  double ratio = doubling_ratio(
      [](int n) {
        Trace t;
        load_string(instant_kinds_trace(n), &t);
        std::vector<KindSummary> kinds = summarize_kinds(t, UnitAtRequest::automatic, QuantileMethod::inclusive);
        REQUIRE(kinds.size() == static_cast<std::size_t>(n));
      },
      10000);
  if (ratio < 0) {
    MESSAGE("SKIP: no instruction counter here (perf_event_open refused)");
    return;
  }
  CHECK(ratio < 2.6);  // one pass per kind made it ~4
}
