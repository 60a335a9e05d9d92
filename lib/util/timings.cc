#include "timings.h"

#include <time.h>

#include <algorithm>
#include <thread>

#include <fmt/core.h>

namespace jqtrace {
namespace {

struct Clocks {
  double wall = 0, cpu = 0;

  static Clocks now() {
    timespec w{}, c{};
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);  // every thread of the process
    return {static_cast<double>(w.tv_sec) + static_cast<double>(w.tv_nsec) * 1e-9,
            static_cast<double>(c.tv_sec) + static_cast<double>(c.tv_nsec) * 1e-9};
  }
};

/// A phase being timed: when it started and what the phases inside it took so far.
struct Open {
  std::size_t phase = 0;
  Clocks start, inner;
};

struct Recorder {
  bool on = false;
  std::thread::id main;  ///< the thread that enabled timings: phases are its own
  unsigned threads = 1;
  Clocks start;
  std::vector<PhaseTime> phases;
  std::vector<Open> open;

  std::size_t phase_of(const char* name, PhaseKind kind) {
    for (std::size_t p = 0; p < phases.size(); ++p)
      if (phases[p].name == name) return p;
    phases.push_back({name, kind, 0, 0, 0});
    return phases.size() - 1;
  }
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

}  // namespace

void enable_timings() {
  Recorder& r = recorder();
  r.on = true;
  r.main = std::this_thread::get_id();
  r.start = Clocks::now();
}

bool timings_enabled() { return recorder().on; }

void note_timed_threads(unsigned threads) { recorder().threads = threads; }

PhaseClock::PhaseClock(const char* name, PhaseKind kind) {
  Recorder& r = recorder();
  // A clock on a worker thread (compute_stats of many ranges runs on the pool) records
  // nothing: its time is inside the main thread's phase that started the workers.
  if (!r.on || std::this_thread::get_id() != r.main) return;
  on_ = true;
  r.open.push_back({r.phase_of(name, kind), Clocks::now(), {}});
}

PhaseClock::~PhaseClock() {
  if (!on_) return;
  Recorder& r = recorder();
  Open done = r.open.back();
  r.open.pop_back();
  Clocks now = Clocks::now();
  double wall = now.wall - done.start.wall, cpu = now.cpu - done.start.cpu;
  PhaseTime& p = r.phases[done.phase];
  p.wall_s += wall - done.inner.wall;
  p.cpu_s += cpu - done.inner.cpu;
  ++p.count;
  if (!r.open.empty()) {  // the enclosing phase's own time leaves this one out
    r.open.back().inner.wall += wall;
    r.open.back().inner.cpu += cpu;
  }
}

std::vector<PhaseTime> phase_times() {
  const Recorder& r = recorder();
  std::vector<PhaseTime> out = r.phases;
  if (!r.on) return out;
  Clocks now = Clocks::now();
  PhaseTime other{"other", PhaseKind::serial, now.wall - r.start.wall, now.cpu - r.start.cpu, 1};
  for (const PhaseTime& p : r.phases) {
    other.wall_s -= p.wall_s;
    other.cpu_s -= p.cpu_s;
  }
  other.wall_s = std::max(other.wall_s, 0.0);
  other.cpu_s = std::max(other.cpu_s, 0.0);
  out.push_back(other);
  return out;
}

std::string timings_report() {
  unsigned threads = recorder().threads;
  std::vector<PhaseTime> phases = phase_times();
  double wall = 0, cpu = 0, serial_wall = 0, scaling_cpu = 0;
  for (const PhaseTime& p : phases) {
    wall += p.wall_s;
    cpu += p.cpu_s;
    if (p.kind == PhaseKind::serial) serial_wall += p.wall_s;
    else scaling_cpu += p.cpu_s;
  }
  std::size_t name_width = 10;  // the longest phase's name ("finish trees") sets the column
  for (const PhaseTime& p : phases) name_width = std::max(name_width, p.name.size());
  std::string out = fmt::format("jqtrace: timings, -j {} (seconds; cpu/wall is how many cores a phase kept busy):\n", threads);
  out += fmt::format("  {:<{}} {:>9} {:>9} {:>8}  {}\n", "phase", name_width, "wall", "cpu", "cpu/wall", "threads");
  for (const PhaseTime& p : phases)
    out += fmt::format("  {:<{}} {:>9.4f} {:>9.4f} {:>8.2f}  {}\n", p.name, name_width, p.wall_s, p.cpu_s,
                       p.wall_s > 0 ? p.cpu_s / p.wall_s : 0.0, p.kind == PhaseKind::scales ? "-j" : "one");
  out += fmt::format("  {:<{}} {:>9.4f} {:>9.4f} {:>8.2f}\n", "total", name_width, wall, cpu, wall > 0 ? cpu / wall : 0.0);
  // Amdahl's s: the one-thread phases against all the work on one core (the -j phases' CPU
  // time is what one thread would take for them). At -j 1 it is the serial phases' share of
  // the wall time; at -j N it also counts what only a parallel read does (the join).
  double one_core = serial_wall + scaling_cpu;
  double s = one_core > 0 ? serial_wall / one_core : 0;
  out += fmt::format("  serial share {:.1f}% (one-thread phases of the work on one core): at most {:.1f}x on 16 "
                     "threads, {:.1f}x on 64 (Amdahl)\n",
                     100 * s, 1 / (s + (1 - s) / 16), 1 / (s + (1 - s) / 64));
  return out;
}

}  // namespace jqtrace
