#pragma once
// Where to cut a trace file for parallel parsing. A cut is a guess until the part before
// it, parsed, stops exactly there (see ReadOptions::stop_at); the guesses are chosen so
// that in the layout the jobque tracer and Chrome write — one event a line — they are
// always right: a line whose first non-blank character is '{' after a line ending in ','.
// A raw newline never occurs inside a JSON string, so a cut is never inside one.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jqtrace {

struct PartPlan {
  std::vector<uint64_t> starts;  ///< starts[0] = 0; each later start is where an event begins
  /// What puts a parser at an event of the events array, as the file's own start does:
  /// {"traceEvents":[ for the object form, [ for the array form.
  std::string prefix;
};

/// Up to `parts` parts of about equal size, none smaller than min_part bytes. Fewer (one:
/// parse sequentially) when the text has no suitable line starts, e.g. a single huge line.
PartPlan plan_parts(std::string_view text, unsigned parts, uint64_t min_part);

}  // namespace jqtrace
