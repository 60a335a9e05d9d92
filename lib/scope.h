#pragma once
// Scopes: which part of a trace an analysis looks at (SPEC §2 "Range" and "Units").
// Times are the file's own values; a unit i of a marker kind spans [ts_i, ts_{i+1}) of
// that kind's markers sorted by time, the last one ending at the trace end.
#include <cstdint>
#include <string>
#include <vector>

#include "trace.h"

namespace jqtrace {

/// A closed range [lo, hi] in ns. An event overlaps it when ts <= hi && ts + dur >= lo.
struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t length() const { return hi - lo; }
  bool overlaps(int64_t ts, int64_t end) const { return ts <= hi && end >= lo; }
  /// The part of [ts, end] inside the range (0 when they only touch or do not meet).
  int64_t clipped(int64_t ts, int64_t end) const {
    int64_t d = std::min(end, hi) - std::max(ts, lo);
    return d > 0 ? d : 0;
  }
};

/// What the user asked for on the command line.
struct ScopeRequest {
  enum class Kind { whole, marker, time } kind = Kind::whole;
  std::string marker_kind;        ///< kind == marker
  int64_t first_unit = 0;         ///< kind == marker: N
  int64_t last_unit = 0;          ///< kind == marker: M of N..M (N when one unit)
  int64_t lo_ns = 0, hi_ns = 0;   ///< kind == time
};

struct Unit {
  int64_t index = 0;
  int64_t arg = 0;     ///< the marker's args.arg
  Range range;
};

/// The marker kinds of a trace: its profile's markers, or (no profile) the names of its
/// instant events; in profile order, else by first appearance in time.
std::vector<std::string> marker_kinds(const Trace& trace);

/// The units of one kind, in time order (empty when the kind has no markers).
std::vector<Unit> units_of(const Trace& trace, std::string_view kind);

/// True when kind is a marker kind of the trace; else false with a message naming the
/// closest kind (or the kinds there are).
bool check_marker_kind(const Trace& trace, std::string_view kind, std::string* error);

/// The whole trace: [start, end].
Range whole_trace(const Trace& trace);

/// Resolves a request to a range; false with a message (a usage error) when the kind is
/// unknown (with the closest kind suggested), the units do not exist, or LO > HI.
bool resolve_scope(const Trace& trace, const ScopeRequest& request, Range* range, std::string* error);

/// Parses "N" or "N..M" (whole numbers, N <= M).
bool parse_unit_span(std::string_view text, int64_t* first, int64_t* last);

}  // namespace jqtrace
