// libFuzzer target: trace bytes (plain or gzip) -> model -> every analysis, the window
// selection and rebase, and the validator. Any crash, sanitizer report, or a disagreement
// the code asserts below is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gaps.h"
#include "markers.h"
#include "stats.h"
#include "svg.h"
#include "timeline.h"
#include "validate.h"
#include "window.h"

using namespace jqtrace;

namespace {

struct NullSink final : DiagnosticSink {
  void report(Diagnostic) override {}
};

void analyse(const Trace& trace) {
  SpanIndex index(trace);
  Range whole = whole_trace(trace);
  std::vector<GroupBy> groupings = trace.jobque
                                       ? std::vector<GroupBy>{GroupBy::category, GroupBy::name, GroupBy::lane, GroupBy::kind}
                                       : std::vector<GroupBy>{GroupBy::cat, GroupBy::name, GroupBy::lane};
  for (GroupBy by : groupings) {
    StatsOptions options;
    options.by = by;
    options.hist = true;
    options.slice_rows = 3;  // many slices: the split walk and its joins
    options.threads = 2;
    compute_stats(trace, index, whole, options);
    compute_stats(trace, index, {whole.lo + whole.length() / 3, whole.hi - whole.length() / 3}, options);
  }
  for (UnitAtRequest at : {UnitAtRequest::automatic, UnitAtRequest::end}) {
    std::vector<KindSummary> kinds = summarize_kinds(trace, at, QuantileMethod::inclusive);
    if (!kinds.empty()) unit_rows(trace, index, kinds.front().kind, kinds.front().rule.at, 2);
  }
  if (trace.jobque) {
    GapsReport report;
    std::string error;
    GapsOptions options;
    options.threads = 2;
    compute_gaps(trace, whole, options, &report, &error);
  }
  for (int width : {100, 1400}) {  // the timeline, and its SVG: no NUL whatever the names
    TimelineOptions options;
    options.by = trace.jobque ? GroupBy::category : GroupBy::name;
    options.plot_width_px = width;
    std::string svg = result::render_timeline_svg(compute_timeline(trace, index, whole, options), "t", {});
    if (svg.find('\0') != std::string::npos) std::abort();
  }
}

/// The window of the middle third, each chosen event's ts rewritten as --rebase does.
void window(const uint8_t* data, std::size_t size) {
  Trace trace;
  EventIndex index;
  LoadOptions load;
  load.spans = false;
  load.tee = &index;
  auto source = Source::from_string(std::string(reinterpret_cast<const char*>(data), size));
  if (load_trace(*source, &trace, nullptr, load).status == ReadStatus::input_error) return;
  index.finish(trace.end_ns);
  Range whole = whole_trace(trace);
  bool plain = size < 2 || data[0] != 0x1f || data[1] != 0x8b;  // offsets are into the text
  for (const EventIndex::Entry& e : select_window(index, {whole.lo + whole.length() / 3, whole.hi})) {
    if (!plain || e.end_offset > size || e.offset > e.end_offset) continue;
    std::string text(reinterpret_cast<const char*>(data) + e.offset, e.end_offset - e.offset);
    replace_top_level_number(text, "ts", "0");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  {
    Trace trace;
    auto source = Source::from_string(bytes);
    ReadResult r = load_trace(*source, &trace, nullptr);
    if (r.status != ReadStatus::input_error) analyse(trace);
  }
  window(data, size);
  NullSink sink;
  auto source = Source::from_string(bytes);
  validate_trace(*source, sink);
  return 0;
}
