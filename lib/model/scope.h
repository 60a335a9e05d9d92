#pragma once
// Scopes: which part of a trace an analysis looks at (SPEC §2 "Range" and "Units").
// Times are the file's own values. The markers of a kind, sorted by time, either start
// their units (unit i spans [ts_i, ts_{i+1}], the last ending at the trace end) or close
// them (unit i spans [ts_{i-1}, ts_i], the first starting at the trace start): see UnitAt.
#include <algorithm>
#include <cstdint>
#include <functional>
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

/// Where a kind's markers stand in their units: at the start (the viewer's rule; dasLLAMA
/// stamps `token`, `layer` and `step` before the unit's work) or at the end (programs that
/// stamp a unit when it is done).
enum class UnitAt { start, end };

/// --unit-at: a fixed rule, or `automatic` (detect_unit_rule decides per kind).
enum class UnitAtRequest { automatic, start, end };

/// The rule applied to one kind, whether auto chose it, and the evidence auto read.
struct UnitRule {
  UnitAt at = UnitAt::start;
  bool automatic = false;
  /// Auto found neither stretch clearly larger and fell back to start: gates and
  /// baselines on these units then need an explicit --unit-at.
  bool ambiguous = false;
  /// Auto's evidence (measured: there were markers): the trace before the first marker
  /// (head) and after the last (tail), in median marker gaps (the trace's length when
  /// there is one marker, or when the markers share one time).
  bool measured = false;
  double head_gaps = 0, tail_gaps = 0;
};

const char* unit_at_name(UnitAt at);
/// "start", "end", "auto"; false for anything else.
bool parse_unit_at(std::string_view text, UnitAtRequest* request);

/// The auto rule, decided by comparison, not by one threshold: the side of the trace that
/// no unit would hold tells the convention. A long head (work before the first marker)
/// means the markers close their units (end); a long tail (work after the last marker)
/// means they start them. One stretch is clearly the longer when it is at least
/// kClearRatio times the other and at least kClearMinGaps median gaps; otherwise the
/// rule is start, marked ambiguous. (Stretches of 2x and 0.2 gaps are called with room
/// to spare: tests sweep both conventions around these edges.)
inline constexpr double kClearRatio = 1.75;
inline constexpr double kClearMinGaps = 0.1;
/// marker_ts must be sorted; whole is the trace's range. No markers: start, not ambiguous
/// (there are no units to cut).
UnitRule detect_unit_rule(const std::vector<int64_t>& marker_ts, Range whole);

/// How a rule reads: "end", "end (auto: head 1.21 gaps, tail 0.05)", "start (auto,
/// ambiguous: head 0.31 gaps, tail 0.28)".
std::string unit_rule_label(const UnitRule& rule);
/// Why a unit metric of an ambiguous kind is not given: "where 'token' markers stand in
/// their units is ambiguous (head 0.31 gaps, tail 0.28); give --unit-at start or end".
std::string ambiguous_units_text(std::string_view kind, const UnitRule& rule);
/// Auto's evidence alone: "head 1.21 gaps, tail 0.05" ("" when nothing was measured).
std::string unit_rule_evidence(const UnitRule& rule);

/// What the user asked for on the command line.
struct ScopeRequest {
  enum class Kind { whole, marker, time } kind = Kind::whole;
  UnitAtRequest unit_at = UnitAtRequest::automatic;  ///< kind == marker
  std::string marker_kind;        ///< kind == marker
  int64_t first_unit = 0;         ///< kind == marker: N
  int64_t last_unit = 0;          ///< kind == marker: M of N..M (N when one unit)
  /// kind == marker: a unit chosen by its duration instead of N ("slowest", "fastest",
  /// "median", "p90": see pick_unit); empty: N..M.
  std::string pick;
  int64_t lo_ns = 0, hi_ns = 0;   ///< kind == time
  bool milliseconds = false;      ///< kind == time: given with --ms (messages say ms)
};

struct Unit {
  int64_t index = 0;
  int64_t arg = 0;     ///< the marker's args.arg
  Range range;
};

/// The marker kinds of a trace: its profile's markers, or (no profile) the names of its
/// instant events; in profile order, else by first appearance in time.
std::vector<std::string> marker_kinds(const Trace& trace);

/// The markers of one kind, in time order: their times and args.
struct Markers {
  std::vector<int64_t> ts, arg;
};

/// Calls f(i, range) for every unit cut_units makes of markers, without making them (a
/// kind with hundreds of thousands of units is summarised without a table of them).
template <typename F>
void for_each_unit(const Markers& markers, Range whole, UnitAt at, F&& f) {
  const std::vector<int64_t>& ts = markers.ts;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    Range r{ts[i], ts[i]};
    if (at == UnitAt::start) r.hi = i + 1 < ts.size() ? ts[i + 1] : std::max(whole.hi, r.lo);
    else r.lo = i > 0 ? ts[i - 1] : std::min(whole.lo, r.hi);
    f(i, r);
  }
}


/// The markers of one kind (none when the trace has no such instants).
Markers markers_of(const Trace& trace, std::string_view kind);
/// The markers of every kind in one pass over the instants, in the order of kinds: a
/// trace with many kinds (every instant name is a kind without a profile) costs one pass,
/// not one per kind.
std::vector<Markers> markers_of_kinds(const Trace& trace, const std::vector<std::string>& kinds);
/// f(k, markers of kinds[k]) for every kind in order, from one pass that sorts the instants
/// by kind: a kind's markers exist while f runs (a trace can have a kind an instant).
void for_each_kind_markers(const Trace& trace, const std::vector<std::string>& kinds,
                           const std::function<void(std::size_t, const Markers&)>& f);
/// How many markers each kind has, in the order of kinds.
std::vector<uint64_t> marker_counts(const Trace& trace, const std::vector<std::string>& kinds);

/// The rule for one kind: the request's, or detect_unit_at's for auto.
UnitRule unit_rule(const Trace& trace, std::string_view kind, UnitAtRequest request);
UnitRule unit_rule(const Markers& markers, Range whole, UnitAtRequest request);

/// The units of one kind under a rule, in time order (empty when the kind has no markers).
std::vector<Unit> units_of(const Trace& trace, std::string_view kind, UnitAt at);
/// The units markers cut the range whole into.
std::vector<Unit> cut_units(const Markers& markers, Range whole, UnitAt at);

/// True when kind is a marker kind of the trace; else false with a message naming the
/// closest kind (or the kinds there are).
bool check_marker_kind(const Trace& trace, std::string_view kind, std::string* error);

/// The whole trace: [start, end]; for a window jqtrace wrote, the window's own range
/// (its jqtraceWindow record), so that analyses of a window see what its scope saw.
Range whole_trace(const Trace& trace);

/// A request resolved against a trace.
struct Scope {
  ScopeRequest::Kind kind = ScopeRequest::Kind::whole;
  bool window = false;      ///< kind == whole, on a window jqtrace wrote: the window's range
  Range range;
  UnitRule rule;           ///< marker scopes: the rule their units were cut by
  std::string marker_kind;  ///< marker scopes: the kind
  int64_t first_unit = 0, last_unit = 0;  ///< marker scopes: the units (N..M)
  std::string picked;       ///< marker scopes chosen by duration: the pick ("slowest"); the label has the unit
  /// How the scope reads on a command line, comparable between runs: "whole trace",
  /// "--marker token 2..6 --unit-at end", "--us 1000 2000" (a window's: its recorded one).
  std::string label;
};

/// Resolves a request to a scope; false with a message (a usage error) when the kind is
/// unknown (with the closest kind suggested), the units do not exist, LO > HI, or the
/// range lies entirely outside the trace (the message gives the trace's range).
bool resolve_scope(const Trace& trace, const ScopeRequest& request, Scope* scope, std::string* error);

/// Parses "N" or "N..M" (whole numbers, N <= M).
bool parse_unit_span(std::string_view text, int64_t* first, int64_t* last);

/// True for the words that choose a unit by its duration: slowest, fastest, median, and
/// pXX (XX 0..100).
bool is_unit_pick(std::string_view text);
/// The unit a pick names, so that nobody hunts for a representative unit by hand: the
/// units sorted by duration (ties: the earlier unit first), slowest the last, fastest the
/// first, pXX the one at rank round(XX/100 * (n-1)) (nearest by rank), median p50. units
/// must not be empty.
std::size_t pick_unit(const std::vector<Unit>& units, std::string_view pick);

}  // namespace jqtrace
