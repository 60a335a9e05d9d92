#include "diagnostic.h"

#include <cstdlib>

namespace jqtrace {

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> table = {
      // Container
      {"unreadable", Severity::error, "the file cannot be read or decompressed"},
      {"json-syntax", Severity::error, "the file is not well-formed JSON"},
      {"not-a-trace", Severity::error, "the JSON is not a trace (no traceEvents array or event list)"},
      {"too-deep", Severity::error, "objects and arrays nest deeper than 1000 levels (jqtrace stops reading)"},
      {"truncated", Severity::error, "the file ends in the middle of the trace (a writer died)"},
      {"trace-events-not-array", Severity::error, "traceEvents is not an array"},
      {"event-not-object", Severity::error, "an element of traceEvents is not an object"},
      // Every event
      {"missing-field", Severity::error, "an event lacks a field its phase requires"},
      {"bad-field-type", Severity::error, "a field has the wrong JSON type"},
      {"bad-ts", Severity::error, "ts is negative, not a number, or out of range"},
      {"bad-dur", Severity::error, "dur is negative, not a number, or out of range"},
      {"unknown-phase", Severity::error, "ph is not a phase of the Trace Event Format"},
      {"bad-instant-scope", Severity::error, "an instant's s is not g, p or t"},
      {"bad-counter-args", Severity::error, "a counter's args are missing or not all numbers"},
      {"duplicate-key", Severity::warning, "an event gives a field twice (the last value counts, everywhere)"},
      {"duplicate-root-key", Severity::warning,
       "the top-level object gives traceEvents or jobqueProfile twice (both arrays are read; the last profile counts)"},
      {"bad-string", Severity::error, "a string is not valid UTF-8 or holds a NUL (read with \\xHH escapes in place of its bad bytes)"},
      {"unknown-metadata", Severity::warning, "a metadata event with a name jqtrace does not know"},
      {"unclosed-begin", Severity::warning, "a B event never closed by an E on its lane"},
      {"overlapping-spans", Severity::warning,
       "an X span starts inside the X span before it on its lane and ends after it (they neither nest nor follow)"},
      {"unmatched-end", Severity::warning, "an E event with no open B on its lane"},
      // jobque
      {"profile-shape", Severity::error, "jobqueProfile is not shaped as the tracer writes it"},
      {"profile-version", Severity::error, "jobqueProfile.version is not 1"},
      {"profile-duplicate", Severity::error, "two categories or two markers share an id or a name"},
      {"profile-color", Severity::error, "a category color is not #RRGGBB"},
      {"jobque-args", Severity::error, "a jobque span lacks integer args.stage, args.arg or args.chain"},
      {"marker-unregistered", Severity::error, "a global instant whose name is not a registered marker"},
      {"nstages-range", Severity::error, "a publish declares a stage count outside 1..6"},
      {"stage-range", Severity::error, "a chunk or stage_wait stage is not below its chain's stage count"},
      {"duplicate-publish", Severity::error, "a chain has more than one publish"},
      {"tid-range", Severity::error, "a lane's tid is not below jobqueProfile.lanes"},
      {"orphan-chain", Severity::warning, "a chain has chunks but no publish (its lane's ring was full)"},
      {"unregistered-tag", Severity::warning, "a publish tag with no category in jobqueProfile"},
      {"lane-stopped-early", Severity::warning, "a lane stops recording long before the trace ends (ring full)"},
  };
  return table;
}

const RuleInfo& rule_info(std::string_view id) {
  for (const RuleInfo& r : rules())
    if (r.id == id) return r;
  std::abort();
}

Diagnostic make_diagnostic(std::string_view rule, std::string message, uint64_t offset) {
  const RuleInfo& info = rule_info(rule);
  return Diagnostic{info.severity, info.id, std::move(message), offset, {}};
}

}  // namespace jqtrace
