#pragma once
// The `changes` table of `diff` (issue 42): is a change real? Each side's units of every
// marker kind, pooled over its runs, give samples: the units' durations, and each group's
// busy time in each unit. Sides are compared sample against sample (significance.h), and
// the p values of all rows are adjusted together (Holm), so that a table of many rows does
// not cry wolf.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scope.h"
#include "significance.h"
#include "trace.h"

namespace jqtrace {

class SpanIndex;

/// One kind's samples on one side, pooled over its runs.
struct KindSamples {
  std::string kind;
  bool ambiguous = false;                ///< some run cut its units by an ambiguous auto rule
  std::vector<int64_t> dur_ns;           ///< each unit's duration
  std::vector<int64_t> args;             ///< each unit's marker arg (the program's label: layer 5)
  /// Each group's busy time in each unit (0 where it had none): one vector a group, as
  /// long as dur_ns. Groups: categories of jobque traces, cat of others (as markers --kind).
  std::map<std::string, std::vector<int64_t>> busy_ns;
  /// With latency samples (add_unit_samples' latency): the marker lane's time in each unit
  /// by class and by group (latency.h), keyed by the row's label (latency_row_label).
  std::map<std::string, std::vector<int64_t>> latency_ns;
  std::vector<UnitRule> rules;           ///< each run's rule for the kind, in the order added
  /// Runs whose units of the kind were not measured (MeasurePolicy): their busy_ns and
  /// latency_ns are 0, not measured; the kind is no test until they are read again.
  std::size_t unmeasured_runs = 0;
};

/// Which kinds' units add_unit_samples measures (each group's busy time in each unit, and
/// the latency parts): measuring is a walk over the spans the units cover, and a generic
/// trace can have 20,000 kinds of one marker each. A kind with fewer than kMinTestedValues
/// units is no test, so it is measured only when the side pools runs (its runs together
/// may have enough) and the trace has few kinds (kMaxKindsForNesting); the kinds in `also`
/// always (a side's runs read again for them).
struct MeasurePolicy {
  bool pooled = false;
  std::set<std::string> also;
};

/// Adds one run's samples (add_unit_samples' of that run alone) to a side's, kind by kind.
void pool_unit_samples(std::vector<KindSamples> run, std::vector<KindSamples>* pooled);

/// The label of a latency row of the changes table: "latency: imbalance" (a class),
/// "latency: ffn chain" (a group's wall on the marker lane).
std::string latency_row_label(const std::string& class_or_group);

/// Adds the units of every marker kind of trace (its rule: the request's, or auto's) to
/// pooled, kind by kind, on `threads` threads; with latency, also each unit's latency parts
/// (on the lane holding the kind's markers).
void add_unit_samples(const Trace& trace, const SpanIndex& index, const UnitRequest& unit_at, unsigned threads,
                      std::vector<KindSamples>* pooled, bool latency = false, const MeasurePolicy& policy = {});

/// The group of a kind's own row: the units' durations.
inline constexpr const char* kUnitRow = "(unit)";

/// A group whose share of units moves by more than this many points gets a row of its own
/// (units_row_label): its time rows compare only the units it runs in.
inline constexpr double kShareRowPoints = 10;

/// The label of the row of the share of units a group runs in: "with ffn chain" (layers
/// with ffn chain: 56% of them in A, 81% in B).
std::string units_row_label(const std::string& group);

struct ChangeRow {
  /// What the row compares: the units' durations (group kUnitRow); a group's busy time or a
  /// latency part per unit, over the units in which it has time on each side; the share of
  /// units in which a group runs (a units_row_label row).
  enum class Of { durations, time, units_share };
  std::string kind, group;
  Of of = Of::durations;
  ShiftTest test;           ///< durations and time rows (n_a, n_b: the units compared)
  /// The kind's units on each side, and in how many the row's group or part has time (time
  /// rows); tested with its p and interval for units_share rows.
  ProportionTest runs;
  double p_adj = 1;         ///< Holm over the table's tests (tested rows of units not cut by a guess)
  bool significant = false; ///< tested, p_adj < alpha, and the kind's units not cut by a guess
  bool ambiguous = false;   ///< the kind's units were cut by an ambiguous auto rule
  bool tested() const { return of == Of::units_share ? runs.tested : test.tested; }
  double p() const { return of == Of::units_share ? runs.p : test.p; }
};

/// Both sides have enough units of the kind (kMinTestedValues) for its rows to be tests.
bool can_test(const KindSamples& a, const KindSamples& b);

/// Calls f(a's kind, b's kind) for every kind both sides have, in A's order (B's kinds found
/// by name: a generic trace can have a kind an instant).
template <typename F>
void for_each_common_kind(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b, F f) {
  std::map<std::string, const KindSamples*> b_kinds;
  for (const KindSamples& k : b) b_kinds.emplace(k.kind, &k);
  for (const KindSamples& ka : a)
    if (auto found = b_kinds.find(ka.kind); found != b_kinds.end()) f(ka, *found->second);
}

/// For every kind both sides have that can_test: its unit row, then a row a group with busy
/// time in some unit of either side (busiest first) over the units in which it has busy
/// time on each side, each followed by the share of units it runs in when that moves by
/// more than kShareRowPoints, then the latency rows with time on either side (classes and
/// groups, the most time first, over the units with that part); p adjusted over the rows
/// that are tests (tested, and of units not cut by an ambiguous rule).
std::vector<ChangeRow> unit_changes(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b, double alpha);

/// A kind both sides have that has no rows: fewer than kMinTestedValues units on a side.
struct UntestedKind {
  std::string kind;
  std::size_t units_a = 0, units_b = 0;
};
/// Those kinds, in A's order: unit_changes tabulates only kinds that can_test (a
/// generic trace's 20,000 one-marker kinds were 240,000 rows of "too few units").
std::vector<UntestedKind> untested_kinds(const std::vector<KindSamples>& a, const std::vector<KindSamples>& b);
}  // namespace jqtrace
