#pragma once
// --timings: the wall and CPU time of each phase of a command (plan, parse, join, finish,
// index, analysis, render), so that work which runs on one thread whatever -j says cannot
// creep back unseen. A phase is declared `scales` (it uses the -j threads) or `serial` (one
// thread, whatever -j is); the serial share of a -j 1 run is Amdahl's s, which bounds the
// speedup of any thread count: 1 / (s + (1 - s) / n).
//
// A PhaseClock times the scope it lives in when timings are enabled, and costs two clock
// reads otherwise. Phases nest (the analysis of a report runs a timeline): a phase's time
// excludes the phases inside it, so the phases add up to the run. Phases are opened and
// closed on the thread that enabled timings; elsewhere (a worker of a parallel phase) a
// PhaseClock records nothing, its time being inside the phase that started the workers.
#include <string>
#include <vector>

namespace jqtrace {

enum class PhaseKind { scales, serial };

struct PhaseTime {
  std::string name;
  PhaseKind kind = PhaseKind::serial;
  double wall_s = 0, cpu_s = 0;  ///< without the phases nested inside it
  unsigned count = 0;            ///< times it was entered
};

/// Starts recording (the process's clocks from now); until then PhaseClocks do nothing.
void enable_timings();
bool timings_enabled();
/// The thread count the command runs with (-j), for the report.
void note_timed_threads(unsigned threads);

class PhaseClock {
 public:
  PhaseClock(const char* name, PhaseKind kind);
  ~PhaseClock();
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

 private:
  bool on_ = false;
};

/// The phases so far, in the order they were first entered, and "other" (the time of the
/// run inside no phase: start-up, options, exit), serial.
std::vector<PhaseTime> phase_times();

/// The report --timings prints on stderr: a line a phase (wall, CPU, CPU/wall, its kind),
/// the total, and the serial share with the speedup it allows at 16 threads.
std::string timings_report();

}  // namespace jqtrace
