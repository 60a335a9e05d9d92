// libFuzzer target: the small text grammars jqtrace reads besides traces: gate
// expressions and gate files, phase log lines, saved baseline JSON (stats --format json),
// and the jqtraceWindow record.
#include <cstdint>
#include <string>
#include <string_view>

#include "gate.h"
#include "gate_metrics.h"
#include "phases.h"
#include "stats_schema.h"

using namespace jqtrace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Gate gate;
  GateError error;
  if (parse_gate(text, &gate, &error)) {
    for (double v : {0.0, -1.0, 1e300, 41.6954}) format_gate_value(v, gate);
  }
  std::vector<GateSource> gates;
  std::string why;
  parse_gate_file("g.txt", text, &gates, &why);
  PhaseLog log;
  PhaseLogError phase_error;
  std::size_t line_number = 0, start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    log.add_line(text.substr(start, end - start), ++line_number, &phase_error);
    start = end + 1;
  }
  log.summarize(QuantileMethod::inclusive);
  log.summarize(QuantileMethod::exclusive);
  BaselineShares shares;
  result::read_stats_json(text, &shares, &why);
  return 0;
}
