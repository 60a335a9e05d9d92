#pragma once
// Scopes: which part of a trace an analysis looks at (SPEC §2 "Range" and "Units").
// Times are the file's own values. The markers of a kind, sorted by time, either start
// their units (unit i spans [ts_i, ts_{i+1}], the last ending at the trace end, or where
// the marker lane stopped recording) or close them (unit i spans [ts_{i-1}, ts_i], the
// first starting at the trace start): see UnitAt and KindUnits::outer.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace.h"

namespace jqtrace {

/// A closed range [lo, hi] in ns. An event overlaps it when ts <= hi && ts + dur >= lo.
struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t length() const { return hi - lo; }
  bool overlaps(int64_t ts, int64_t end) const { return ts <= hi && end >= lo; }
  /// r lies wholly inside (a unit the range's edge cuts is not one of its).
  bool holds(Range r) const { return r.lo >= lo && r.hi <= hi; }
  /// The part of [ts, end] inside the range (0 when they only touch or do not meet).
  int64_t clipped(int64_t ts, int64_t end) const {
    int64_t d = std::min(end, hi) - std::max(ts, lo);
    return d > 0 ? d : 0;
  }
};

/// Where a kind's markers stand in their units: at the start (the viewer's rule; dasLLAMA
/// stamps `token`, `layer` and `step` before the unit's work) or at the end (programs that
/// stamp a unit when it is done).
enum class UnitAt : uint8_t { start, end };

/// --unit-at: a fixed rule, or `automatic` (detect_unit_rule decides per kind).
enum class UnitAtRequest { automatic, start, end };

/// The rule applied to one kind, whether auto chose it, the evidence auto read, and what
/// else shapes the kind's units: the kind they nest in, a marker lane that stopped.
struct UnitRule {
  // Packed: a trace can have a kind an instant, and every kind's summary holds one.
  UnitAt at = UnitAt::start;
  UnitAt nested_in_at = UnitAt::start;  ///< the coarser kind's rule (nested_in set)
  bool automatic = false;
  /// Auto found no clear evidence (or evidence both ways) and fell back to start: gates
  /// and baselines on these units then need an explicit --unit-at.
  bool ambiguous = false;
  /// Taken from the window's record of how its units were cut (not detected again).
  bool recorded = false;
  /// Auto's evidence (measured: there were markers). head and tail: the marker lane's busy
  /// time before the first marker and after the last (wall time when the markers' lanes
  /// hold no spans), in median marker gaps (the extent's length when there is one marker,
  /// or when the markers share one time). starts and closes: the samples that said the
  /// markers start or close their units (a marker with a clear pause on one side, a
  /// stretch at the head or tail of the extent or of a coarser unit clearly the longer).
  bool measured = false;
  /// A lane holding the markers stopped recording (its ring filled) before the trace
  /// ended: the units end where it stopped (stop_ns), not at the trace's end.
  bool lane_stopped = false;
  int32_t starts = 0, closes = 0;
  double head_gaps = 0, tail_gaps = 0;
  int64_t stop_ns = 0;
  /// The coarser kind whose boundaries also end these units ("" when not nested). Owned:
  /// summaries outlive their trace (diff frees a run's trace before reading the next).
  std::string nested_in;
};

const char* unit_at_name(UnitAt at);
/// "start", "end", "auto"; false for anything else.
bool parse_unit_at(std::string_view text, UnitAtRequest* request);

/// The auto rule, decided by comparison, not by one threshold (SPEC §2 "Units"). A starter
/// is followed at once by its unit's work and a closer follows its unit's last work at
/// once, so the program's pauses sit before starters and after closers; and the work no
/// unit would hold (before the first starter, after the last closer) is the smaller of the
/// head and the tail. Each sample is one stretch against another: clearly the longer when
/// at least kClearRatio times the other and at least kClearMinGaps median gaps (a head
/// and tail also need the smaller under kUnheldMaxGaps: see Evidence::vote_ends). The rule
/// is the side with at least kClearVotes times the samples of the other; a rule whose
/// first (end) or last (start) unit would hold under kClearMinGaps of the lane's work is
/// never chosen. Anything less is ambiguous, taken as start. (Stretches of 2x and 0.2
/// gaps are called with room to spare: tests sweep both conventions around these edges.)
inline constexpr double kClearRatio = 1.75;
inline constexpr double kClearMinGaps = 0.1;
inline constexpr double kClearVotes = 3.0;
inline constexpr double kUnheldMaxGaps = 0.5;

/// Auto's rule of one kind on the evidence of several traces together (diff's sides): the
/// samples of every rule given summed and weighed as decide() weighs one trace's, a rule
/// possible only when it is in every trace (each one's outer unit holds some of its work).
/// Each rule given must be automatic and measured.
UnitRule decide_jointly(const std::vector<UnitRule>& rules);

/// --unit-at: one rule for every kind, or a rule per kind ("token=end,layer=start"; the
/// kinds not named take `all`).
struct UnitRequest {
  UnitRequest() = default;
  UnitRequest(UnitAtRequest every) : all(every) {}  // NOLINT(google-explicit-constructor): one rule for all
  UnitRequest(UnitAt every) : all(every == UnitAt::start ? UnitAtRequest::start : UnitAtRequest::end) {}  // NOLINT
  UnitAtRequest all = UnitAtRequest::automatic;
  std::vector<std::pair<std::string, UnitAt>> kinds;
  UnitAtRequest of(std::string_view kind) const;
};
/// "auto", "start", "end", or a comma-separated list of RULE and KIND=RULE items; false
/// with a message otherwise.
bool parse_unit_request(std::string_view text, UnitRequest* request, std::string* error);

/// The markers of one kind, in time order: their times, args, lanes, and what their lanes
/// were doing around them (InstantTable's measures).
struct Markers {
  std::vector<int64_t> ts, arg, lane, quiet_before, quiet_after, busy_before, busy_after;
  std::size_t size() const { return ts.size(); }
};

/// How one kind's markers cut units: the rule, the marker lanes' recorded extent (auto's
/// evidence is read on it), the stretch the outer units reach to, and the coarser kinds'
/// marker times that also end them (nesting).
struct KindUnits {
  UnitRule rule;
  Range extent;
  /// The first unit of closers starts at outer.lo, the last of starters ends at outer.hi:
  /// the trace's (a window's range) start and end, or where a marker lane stopped recording
  /// (SPEC §2 "Units": a unit never runs past it).
  Range outer;
  std::vector<int64_t> bounds;  ///< sorted
  /// A window's: markers at its edges close or start units outside it (not its units).
  bool window = false;
  /// The number in the source of the first of these markers (a window's record): unit i,
  /// the one marker i starts or closes, is numbered first_marker + i, as in the source.
  int64_t first_marker = 0;
};

/// Decides every kind's rule and nesting for a trace, once (kinds nest in others only
/// among the kNestingKinds kinds with the most markers).
inline constexpr std::size_t kNestingKinds = 16;
/// A trace of more kinds than this (generic: an instant name a kind) is not searched for
/// nesting, and a window of it records no rules.
inline constexpr std::size_t kMaxKindsForNesting = 256;
class UnitPlanner {
 public:
  UnitPlanner(const Trace& trace, const UnitRequest& request);
  /// The plan of one kind whose markers are given.
  KindUnits plan(std::string_view kind, const Markers& markers) const;
  KindUnits plan(std::string_view kind) const;

 private:
  const Trace& trace_;
  UnitRequest request_;
  Range whole_;
  std::vector<StoppedLane> stopped_;
  std::vector<std::pair<std::string, KindUnits>> nested_;  ///< the kinds decided with nesting
  KindUnits standalone(std::string_view kind, const Markers& markers) const;
};

/// How a rule reads: "end", "end (auto: head 1.21 gaps, tail 0.05)", "start (auto,
/// ambiguous: head 0.31 gaps, tail 0.28)".
/// Without evidence: "end (auto)", "start (auto, ambiguous)" (markers' table, whose note
/// gives the evidence).
std::string unit_rule_label(const UnitRule& rule, bool with_evidence = true);
/// Why a unit metric of an ambiguous kind is not given: "where 'token' markers stand in
/// their units is ambiguous (head 0.31 gaps, tail 0.28); give --unit-at start or end".
std::string ambiguous_units_text(std::string_view kind, const UnitRule& rule);
/// The --unit-at that cuts a kind's units as rule did: "end", or "token=end,layer=start"
/// for a kind nested in another.
std::string unit_request_text(std::string_view kind, const UnitRule& rule);
/// Auto's evidence alone: "head 1.21 gaps, tail 0.05" ("" when nothing was measured).
std::string unit_rule_evidence(const UnitRule& rule);
/// Why auto's evidence did not decide an ambiguous rule: the markers' pauses say one way
/// while the lane's ends rule it out ("0 start, 35 end, but the first marker opens the
/// lane's work (head 0.00 gaps): under end the first unit would hold none of it"), or
/// neither side wins by kClearVotes to 1. "" for a rule that is not ambiguous.
std::string ambiguity_reason(const UnitRule& rule);

/// What the user asked for on the command line.
struct ScopeRequest {
  enum class Kind { whole, marker, time } kind = Kind::whole;
  UnitRequest unit_at;            ///< kind == marker
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
  /// The unit's number (0-based) in its trace; a window's units keep their source's.
  int64_t index = 0;
  int64_t arg = 0;     ///< the marker's args.arg (kNoArg: it had none)
  Range range;
};

/// Whether a kind's markers carry labels (some arg given and not 0): then a unit is named by its
/// marker's arg, the program's own label (SPEC §2 "Units").
bool units_have_args(const std::vector<Unit>& units);

/// The program's label of a unit, "layer 5", when its kind's markers carry labels and its
/// marker's arg is not its index; "" when the index says it all or the marker has no arg.
std::string unit_arg_label(std::string_view kind, const Unit& unit, bool labelled);
/// A unit as people read it: "layer 5 (unit 101)" given its arg label, else "token 3".
std::string unit_name(std::string_view kind, int64_t index, const std::string& arg_label);
/// The same of a unit: unit_name(kind, unit.index, unit_arg_label(kind, unit, labelled)).
std::string unit_name(std::string_view kind, const Unit& unit, bool labelled);

/// The marker kinds of a trace: its profile's markers, or (no profile) the names of its
/// instant events; in profile order, else by first appearance in time.
std::vector<std::string> marker_kinds(const Trace& trace);

/// Calls f(i, marker, range) for every unit cut_units makes of markers (the marker that
/// starts or closes it), without making them (a kind with hundreds of thousands of units
/// is summarised without a table of them).
void for_each_unit(const Markers& markers, const KindUnits& plan,
                   const std::function<void(std::size_t i, std::size_t marker, Range r)>& f);

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

/// Each marker kind's rule and nesting as a window of range records them ("ambiguous"
/// included), with the number of the kind's first marker in the range.
std::vector<WindowRecord::KindRule> unit_rules_to_record(const Trace& trace, const UnitRequest& request, Range range);
/// True when the trace's jobqueProfile registers marker kinds (and categories) that no
/// event uses: no instant of a registered kind and, when the chains were read, no chain of
/// a registered category (profiling was off while recording: every share is "untagged").
bool profile_unused(const Trace& trace);
/// The kind whose units a summary ranks or charts (whatif --rank's median unit, the report's
/// latency and what-if sections): the coarsest (fewest markers) of more than one marker
/// whose rule auto could decide, else the best of the others in that order; "" when no kind
/// has markers. (A kind of one marker cuts a fence post, not units to compare.)
std::string summary_unit_kind(const Trace& trace, const UnitRequest& request);
/// That rule for a caller that has each kind's marker count and whether its rule is
/// ambiguous already: the index of the kind picked; SIZE_MAX when no kind has markers.
struct SummaryKindCandidate {
  uint64_t markers = 0;
  bool ambiguous = false;
};
std::size_t pick_summary_kind(const std::vector<SummaryKindCandidate>& kinds);
/// The rule one kind's units are cut by (UnitPlanner's plan of it).
UnitRule unit_rule(const Trace& trace, std::string_view kind, const UnitRequest& request);
/// The units of one kind, in time order (empty when the kind has no markers).
std::vector<Unit> units_of(const Trace& trace, std::string_view kind, const UnitRequest& request);
/// The units markers cut under a plan.
std::vector<Unit> cut_units(const Markers& markers, const KindUnits& plan);

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
  /// A one-unit marker scope whose marker's arg (the program's label) is not its index:
  /// "layer 2" for --marker layer 6; "" otherwise.
  std::string unit_arg_label;
  /// How the scope reads on a command line, comparable between runs: "whole trace",
  /// "--marker token 2..6 --unit-at end", "--us 1000 2000" (a window's: its recorded one).
  std::string label;

  /// The label without the --unit-at it may end in: "--marker token 2..6".
  std::string label_without_unit_at() const { return label.substr(0, label.find(" --unit-at")); }
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
