#include "load.h"

#include <fmt/core.h>

namespace jqtrace::cli {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

int load_for_analysis(const std::string& path, const CommonOptions& opts, Trace* trace, const LoadOptions& load) {
  auto source = open_input(path, opts);
  if (!source) return kInput;
  ReadResult r = load_trace(*source, trace, nullptr, load);
  end_progress();
  std::string name = display_name(path);
  if (r.status == ReadStatus::input_error) {
    if (r.position.line)
      print_error(fmt::format("{}:{}:{}: {}", name, r.position.line, r.position.column, r.message));
    else
      print_error(fmt::format("{}: {}", name, r.message));
    return kInput;
  }
  if (r.status == ReadStatus::truncated)
    print_warning(opts, fmt::format("{}: truncated at byte {}; analysed {} events", name, r.bytes, r.events));
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
