#include "load.h"

#include <memory>
#include <vector>

#include <fmt/core.h>

namespace jqtrace::cli {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string truncation_text(const std::string& path, const ReadResult& read) {
  return fmt::format("{}: truncated at byte {}{}", display_name(path), read.bytes,
                     read.stream_cut ? fmt::format(" (the {} stream ends early)", compression_name(read.compression)) : "");
}

Trace& trace_for_process() {
  static auto* kept = new std::vector<std::unique_ptr<Trace>>;  // reachable, so no leak report
  kept->push_back(std::make_unique<Trace>());
  return *kept->back();
}

namespace {

/// Parses in parts on -j threads when the file splits; else reads it in one pass.
bool read_model(const std::string& path, const CommonOptions& opts, Trace* trace, const LoadOptions& load,
                ReadResult* r) {
  ParallelRead parallel = parallel_read(path, opts);
  if (parallel.threads &&
      load_trace_parallel(path, parallel.threads, trace, nullptr, load, parallel.progress, r, parallel.min_part_bytes))
    return true;
  auto source = open_input(path, opts);
  if (!source) return false;
  *r = load_trace(*source, trace, nullptr, load);
  return true;
}

}  // namespace

int load_for_analysis(const std::string& path, const CommonOptions& opts, Trace* trace, const LoadOptions& load,
                      const std::string& shown_as) {
  ReadResult r;
  bool read = read_model(path, opts, trace, load, &r);
  end_progress();
  if (!read) return kInput;
  std::string name = display_name(shown_as.empty() ? path : shown_as);
  if (r.status == ReadStatus::input_error) {
    if (r.position.line)
      print_error(fmt::format("{}:{}:{}: {}", name, r.position.line, r.position.column, r.message));
    else
      print_error(fmt::format("{}: {}", name, r.message));
    return kInput;
  }
  if (trace->durations_too_large()) {
    print_error(fmt::format("{}: the spans' durations add up past 2^62 ns (about 146 years), more time than "
                            "jqtrace adds up safely: refused rather than risk a wrong number",
                            name));
    return kInput;
  }
  if (r.status == ReadStatus::truncated)
    print_warning(opts, fmt::format("{}; analysed {} events", truncation_text(name, r), r.events));
  if (trace->malformed)
    print_warning(opts, fmt::format("{}: skipped {} malformed events (jqtrace validate lists them)", name,
                                    trace->malformed));
  if (trace->unclosed_begins)
    print_warning(opts, fmt::format("{}: {} B events never closed; they run to the end of the trace", name,
                                    trace->unclosed_begins));
  if (trace->unmatched_ends)
    print_warning(opts, fmt::format("{}: {} E events close nothing; dropped", name, trace->unmatched_ends));
  return kOk;
}

}  // namespace jqtrace::cli
