#include "timings.h"

#include <doctest/doctest.h>

#include <chrono>
#include <ctime>
#include <thread>

namespace jqtrace {
namespace {

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// Spins until this thread has run for ms of CPU time: on a loaded host (CI runs tests
/// side by side) a spin for wall time got less CPU than asked.
void busy_for(std::chrono::milliseconds ms) {
  double until = thread_cpu_s() + static_cast<double>(ms.count()) / 1000.0;
  volatile unsigned spin = 0;
  while (thread_cpu_s() < until) spin = spin + 1;
}

const PhaseTime* find(const std::vector<PhaseTime>& phases, const std::string& name) {
  for (const PhaseTime& p : phases)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("timings: a phase's time leaves out the phases inside it, and the phases add up to the run") {
  enable_timings();
  {
    PhaseClock outer("test outer", PhaseKind::serial);
    busy_for(std::chrono::milliseconds(30));
    {
      PhaseClock inner("test inner", PhaseKind::scales);
      busy_for(std::chrono::milliseconds(60));
    }
  }
  { PhaseClock again("test inner", PhaseKind::scales); }
  std::vector<PhaseTime> phases = phase_times();
  const PhaseTime* outer = find(phases, "test outer");
  const PhaseTime* inner = find(phases, "test inner");
  REQUIRE(outer);
  REQUIRE(inner);
  CHECK(inner->count == 2);
  CHECK(inner->kind == PhaseKind::scales);
  // Outer's own time is its 30 ms, not the 90 ms it was open. CPU time: wall time stretches
  // on a loaded host, CPU time is what the phases spun for.
  CHECK(outer->cpu_s >= 0.029);
  CHECK(outer->cpu_s < 0.075);
  CHECK(outer->wall_s >= 0.028);
  CHECK(inner->cpu_s >= 0.059);
  CHECK(inner->wall_s >= 0.058);
  REQUIRE(phases.back().name == "other");
  std::string report = timings_report();
  CHECK(report.find("test outer") != std::string::npos);
  CHECK(report.find("serial share") != std::string::npos);
}

TEST_CASE("timings: a PhaseClock on a worker thread records nothing (compute_stats runs on the pool)") {
  enable_timings();
  {
    PhaseClock outer("test pool", PhaseKind::scales);
    for (int k = 0; k < 4; ++k) std::thread([] { PhaseClock worker("test worker", PhaseKind::serial); }).join();
  }
  std::vector<PhaseTime> phases = phase_times();
  CHECK(find(phases, "test pool") != nullptr);
  CHECK(find(phases, "test worker") == nullptr);  // recorded (and raced) on the shared list before
}

TEST_CASE("timings: a phase's name longer than the column keeps the numbers in their columns") {
  enable_timings();
  { PhaseClock shorter("x", PhaseKind::serial); }
  { PhaseClock longer("a long phase name", PhaseKind::serial); }
  std::string report = timings_report();
  // The decimal point of each row's wall time ("finish trees" pushed its row's two columns right).
  auto wall_point = [&](const std::string& name) {
    std::size_t row = report.find("\n  " + name + " ");
    REQUIRE(row != std::string::npos);
    return report.find('.', row) - row;
  };
  CHECK(wall_point("x") == wall_point("a long phase name"));
  CHECK(wall_point("total") == wall_point("a long phase name"));
}

}  // namespace jqtrace
