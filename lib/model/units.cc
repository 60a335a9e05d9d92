// Units that follow the program (SPEC §2 "Units"): where a kind's markers stand in their
// units, decided from the evidence of every marker on the marker lane's own extent; the
// kinds nested in others; and the cutting of units under those rules.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "scope.h"

namespace jqtrace {

UnitAtRequest UnitRequest::of(std::string_view kind) const {
  for (const auto& [name, at] : kinds)
    if (name == kind) return at == UnitAt::start ? UnitAtRequest::start : UnitAtRequest::end;
  return all;
}

bool parse_unit_request(std::string_view text, UnitRequest* request, std::string* error) {
  *request = UnitRequest{};
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t comma = std::min(text.find(',', from), text.size());
    std::string_view item = text.substr(from, comma - from);
    from = comma + 1;
    std::size_t eq = item.find('=');
    UnitAtRequest rule = UnitAtRequest::automatic;
    std::string_view rule_text = eq == std::string_view::npos ? item : item.substr(eq + 1);
    if (!parse_unit_at(rule_text, &rule)) {
      *error = fmt::format("'{}' is not a unit rule (start, end or auto; or KIND=RULE, e.g. token=end,layer=start)",
                           rule_text);
      return false;
    }
    if (eq == std::string_view::npos) {
      request->all = rule;
      continue;
    }
    std::string_view kind = item.substr(0, eq);
    if (kind.empty()) {
      *error = fmt::format("'{}' names no kind (KIND=RULE, e.g. token=end)", item);
      return false;
    }
    if (rule != UnitAtRequest::automatic)
      request->kinds.emplace_back(std::string(kind), rule == UnitAtRequest::start ? UnitAt::start : UnitAt::end);
  }
  return true;
}

std::string unit_request_text(std::string_view kind, const UnitRule& rule) {
  if (rule.nested_in.empty()) return unit_at_name(rule.at);
  return std::string(rule.nested_in) + "=" + unit_at_name(rule.nested_in_at) + "," + std::string(kind) + "=" +
         unit_at_name(rule.at);
}

namespace {

/// The median of the gaps between consecutive markers (sorted), in ns; the mean of the
/// two middle gaps when their count is even.
double median_gap(const std::vector<int64_t>& marker_ts) {
  std::vector<int64_t> gaps;
  gaps.reserve(marker_ts.size() - 1);
  for (std::size_t i = 1; i < marker_ts.size(); ++i) gaps.push_back(marker_ts[i] - marker_ts[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  std::size_t mid = gaps.size() / 2;
  if (gaps.size() % 2) return static_cast<double>(gaps[mid]);
  return (static_cast<double>(gaps[mid - 1]) + static_cast<double>(gaps[mid])) / 2.0;
}

/// True when stretch a is clearly longer than stretch b (both in median gaps).
bool clearly_longer(double a, double b) { return a >= kClearMinGaps && a >= kClearRatio * b; }

/// True when the markers' lanes hold spans: their quiet and busy time was measured.
bool has_activity(const Markers& m) {
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m.busy_before[i] + m.busy_after[i] > 0) return true;
  return false;
}

/// The lanes the markers are on, each once.
std::vector<int64_t> marker_lanes(const Markers& m) {
  std::vector<int64_t> lanes(m.lane);
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  return lanes;
}

/// The stretch the units live on: the marker lanes' recorded extent (their first to their
/// last event) within whole; whole when the lanes hold no spans (nothing to follow).
Range marker_extent(const Trace& trace, const Markers& m, Range whole, bool activity) {
  if (!activity) return whole;
  Range extent{INT64_MAX, INT64_MIN};
  for (int64_t l : marker_lanes(m)) {
    const Lane& lane = trace.lanes[static_cast<std::size_t>(l)];
    extent.lo = std::min(extent.lo, lane.first_ts);
    extent.hi = std::max(extent.hi, lane.last_end);
  }
  extent.lo = std::max(extent.lo, whole.lo);
  extent.hi = std::min(extent.hi, whole.hi);
  return extent.lo <= extent.hi ? extent : whole;
}

/// The markers (sorted times ts) a unit r of a coarser kind holds, as [first, end): those
/// in [lo, hi) when its markers start their units, (lo, hi] when they close them; the last
/// unit of starters (ending at the outer end) holds those at hi too.
std::pair<std::size_t, std::size_t> markers_in(const std::vector<int64_t>& ts, Range r, bool start, bool last) {
  auto from = start ? std::lower_bound(ts.begin(), ts.end(), r.lo) : std::upper_bound(ts.begin(), ts.end(), r.lo);
  auto to = start && !last ? std::lower_bound(ts.begin(), ts.end(), r.hi) : std::upper_bound(ts.begin(), ts.end(), r.hi);
  return {static_cast<std::size_t>(from - ts.begin()), static_cast<std::size_t>(std::max(from, to) - ts.begin())};
}

/// One stretch's busy time: the marker lane's (clipped to the wall time it spans), or the
/// wall time when there is no activity to read.
int64_t busy_between(bool activity, int64_t busy, int64_t wall) { return activity ? std::min(busy, wall) : wall; }

/// The samples and the head and tail of one kind, in median gaps.
struct Evidence {
  double gap = 0;  ///< ns
  double head = 0, tail = 0;
  int64_t starts = 0, closes = 0;
  /// One sample: a stretch whose clear length says start against one whose says end.
  void vote(double says_start, double says_end) {
    if (clearly_longer(says_start, says_end)) ++starts;
    else if (clearly_longer(says_end, says_start)) ++closes;
  }
  /// A head and a tail (of the extent, of a coarser unit): the one no unit would hold under
  /// a rule must be the smaller and less than kUnheldMaxGaps (work before the first starter,
  /// a prologue; after the last closer, an epilogue). Both long: no sample (a long
  /// prologue before starters reads like a first unit before closers).
  void vote_ends(double before, double after) {
    if (clearly_longer(after, before) && before < kUnheldMaxGaps) ++starts;
    else if (clearly_longer(before, after) && after < kUnheldMaxGaps) ++closes;
  }
};

/// A coarser unit's head (its start to its first finer marker) and tail (its last finer
/// marker to its end) as samples: the smaller one is the work no finer unit holds.
void vote_coarse_units(const Markers& fine, const Markers& coarse, const KindUnits& coarse_plan, bool activity,
                       Evidence* e) {
  const std::vector<int64_t>& f = fine.ts;
  bool start = coarse_plan.rule.at == UnitAt::start;
  for_each_unit(coarse, coarse_plan, [&](std::size_t, std::size_t c, Range r) {
    if (coarse_plan.rule.lane_stopped && r.hi >= coarse_plan.outer.hi) return;  // cut short: no sample
    auto [first, end] = markers_in(f, r, start, false);
    if (first == end) return;
    std::size_t last = end - 1;
    int64_t head = 0, tail = 0;
    if (activity) {
      // The coarse marker's busy_before is the busy time at its own end of the unit; the
      // other end is an extent edge (busy 0, or the lane's total) or the previous marker.
      if (fine.lane[first] != coarse.lane[c] || fine.lane[last] != coarse.lane[c]) return;
      int64_t total = coarse.busy_before[c] + coarse.busy_after[c];
      bool has_prev = c > 0 && coarse.ts[c - 1] == r.lo, has_next = c + 1 < coarse.size() && coarse.ts[c + 1] == r.hi;
      int64_t busy_lo = start ? coarse.busy_before[c] : has_prev ? coarse.busy_before[c - 1] : 0;
      int64_t busy_hi = start ? (has_next ? coarse.busy_before[c + 1] : total) : coarse.busy_before[c];
      head = busy_between(true, fine.busy_before[first] - busy_lo, f[first] - r.lo);
      tail = busy_between(true, busy_hi - fine.busy_before[last], r.hi - f[last]);
    } else {
      head = f[first] - r.lo;
      tail = r.hi - f[last];
    }
    e->vote_ends(static_cast<double>(head) / e->gap, static_cast<double>(tail) / e->gap);
  });
}

/// The rule the samples say (decide()'s last step): end or start when it clearly wins and
/// is possible, else ambiguous (taken as start).
void choose(int64_t starts, int64_t closes, bool end_possible, bool start_possible, UnitRule* rule) {
  auto wins = [](int64_t a, int64_t b) { return a > 0 && static_cast<double>(a) >= kClearVotes * static_cast<double>(b); };
  rule->at = UnitAt::start;
  rule->ambiguous = false;
  if (end_possible && wins(closes, starts)) rule->at = UnitAt::end;
  else if (!(start_possible && wins(starts, closes))) rule->ambiguous = true;
}

/// Auto's rule from the evidence: every marker's quiet sides, and the head and tail of the
/// extent (standalone) or of every coarser unit (nested: coarse and its plan given).
UnitRule decide(const Markers& m, Range extent, bool activity, const Markers* coarse, const KindUnits* coarse_plan) {
  UnitRule rule;
  rule.automatic = true;
  if (m.ts.empty()) return rule;
  Evidence e;
  e.gap = m.size() >= 2 ? median_gap(m.ts) : 0.0;
  if (e.gap <= 0) e.gap = static_cast<double>(extent.length());
  if (e.gap <= 0) e.gap = 1;  // every marker at one time in an empty extent: nothing to read
  std::size_t last = m.size() - 1;
  e.head = static_cast<double>(busy_between(activity, m.busy_before[0], std::max<int64_t>(0, m.ts[0] - extent.lo))) / e.gap;
  e.tail = static_cast<double>(busy_between(activity, m.busy_after[last], std::max<int64_t>(0, extent.hi - m.ts[last]))) / e.gap;
  if (coarse) vote_coarse_units(m, *coarse, *coarse_plan, activity, &e);
  else e.vote_ends(e.head, e.tail);
  if (activity)  // a pause before a marker says start; after it, end
    for (std::size_t i = 0; i < m.size(); ++i)
      if (m.quiet_before[i] >= 0 && m.quiet_after[i] >= 0)
        e.vote(static_cast<double>(m.quiet_before[i]) / e.gap, static_cast<double>(m.quiet_after[i]) / e.gap);
  rule.measured = true;
  rule.head_gaps = e.head;
  rule.tail_gaps = e.tail;
  rule.starts = static_cast<int32_t>(std::min<int64_t>(e.starts, INT32_MAX));
  rule.closes = static_cast<int32_t>(std::min<int64_t>(e.closes, INT32_MAX));
  // A rule whose outer unit would hold (nearly) none of the lane's work is not the
  // program's: the first unit under end, the last under start.
  choose(e.starts, e.closes, e.head >= kClearMinGaps, e.tail >= kClearMinGaps, &rule);
  return rule;
}

/// True when every unit of coarse holds at least one marker of fine.
bool every_unit_holds(const Markers& coarse, const KindUnits& coarse_plan, const Markers& fine) {
  bool start = coarse_plan.rule.at == UnitAt::start, all = true;
  for_each_unit(coarse, coarse_plan, [&](std::size_t, std::size_t, Range r) {
    auto [first, end] = markers_in(fine.ts, r, start, r.hi == coarse_plan.outer.hi);
    all = all && first != end;
  });
  return all;
}

/// True when the trace has at most `limit` marker kinds (its profile's, else its instants'
/// distinct names), counted without listing them.
bool few_kinds(const Trace& trace, std::size_t limit) {
  if (trace.profile.present && trace.profile.unread.empty()) return trace.profile.markers.size() <= limit;
  std::vector<bool> seen(trace.names.size(), false);
  std::size_t kinds = 0;
  for (std::size_t i = 0; i < trace.instants.size() && kinds <= limit; ++i) {
    auto name = static_cast<std::size_t>(trace.instants.name[i]);
    if (name < seen.size() && !seen[name]) {
      seen[name] = true;
      ++kinds;
    }
  }
  return kinds <= limit;
}

const WindowRecord::KindRule* recorded_rule(const Trace& trace, std::string_view kind) {
  if (!trace.window.present) return nullptr;
  for (const WindowRecord::KindRule& k : trace.window.units)
    if (k.kind == kind) return &k;
  return nullptr;
}

}  // namespace

UnitRule decide_jointly(const std::vector<UnitRule>& rules) {
  UnitRule joint;
  joint.automatic = true;
  joint.measured = true;
  if (rules.empty()) return joint;
  int64_t starts = 0, closes = 0;
  bool end_possible = true, start_possible = true;
  joint.head_gaps = rules.front().head_gaps;
  joint.tail_gaps = rules.front().tail_gaps;
  for (const UnitRule& r : rules) {
    starts += r.starts;
    closes += r.closes;
    end_possible = end_possible && r.head_gaps >= kClearMinGaps;
    start_possible = start_possible && r.tail_gaps >= kClearMinGaps;
    joint.head_gaps = std::min(joint.head_gaps, r.head_gaps);  // the labels show the tightest
    joint.tail_gaps = std::min(joint.tail_gaps, r.tail_gaps);
  }
  joint.starts = static_cast<int32_t>(std::min<int64_t>(starts, INT32_MAX));
  joint.closes = static_cast<int32_t>(std::min<int64_t>(closes, INT32_MAX));
  choose(starts, closes, end_possible, start_possible, &joint);
  return joint;
}

UnitPlanner::UnitPlanner(const Trace& trace, const UnitRequest& request)
    : trace_(trace), request_(request), whole_(whole_trace(trace)), stopped_(lanes_stopped_early(trace)) {
  // A trace of a kind an instant (generic, thousands of names) nests nothing worth finding,
  // and listing its kinds here would cost their names twice over.
  if (!few_kinds(trace, kMaxKindsForNesting)) return;
  std::vector<std::string> kinds = marker_kinds(trace);
  std::vector<uint64_t> counts = marker_counts(trace, kinds);
  // The candidates for nesting: the kinds with the most markers (at least two), fewest first.
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    if (counts[k] >= 2) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return counts[a] > counts[b]; });
  if (order.size() > kNestingKinds) order.resize(kNestingKinds);
  std::reverse(order.begin(), order.end());
  if (order.size() < 2) return;
  std::vector<std::string> names;
  for (std::size_t k : order) names.push_back(kinds[k]);
  std::vector<Markers> markers = markers_of_kinds(trace, names);
  std::vector<KindUnits> plans;
  for (std::size_t i = 0; i < names.size(); ++i) plans.push_back(standalone(names[i], markers[i]));
  for (std::size_t f = 0; f < names.size(); ++f) {
    // The coarser kind: the one with the most markers (the closest) of those with at most
    // half as many whose every unit holds some of these markers, its rule known; or the
    // one the window recorded.
    const WindowRecord::KindRule* recorded = recorded_rule(trace, names[f]);
    std::size_t coarse = SIZE_MAX;
    for (std::size_t c = 0; c < f; ++c) {
      bool named = recorded && recorded->nested_in == names[c];
      bool found = !recorded && 2 * markers[c].size() <= markers[f].size() && !plans[c].rule.ambiguous &&
                   every_unit_holds(markers[c], plans[c], markers[f]);
      if (named || found) coarse = c;
    }
    if (coarse == SIZE_MAX) continue;
    KindUnits& plan = plans[f];
    std::merge(markers[coarse].ts.begin(), markers[coarse].ts.end(), plans[coarse].bounds.begin(),
               plans[coarse].bounds.end(), std::back_inserter(plan.bounds));
    if (plan.rule.automatic) {
      UnitRule rule = decide(markers[f], plan.extent, has_activity(markers[f]), &markers[coarse], &plans[coarse]);
      rule.lane_stopped = plan.rule.lane_stopped;
      rule.stop_ns = plan.rule.stop_ns;
      plan.rule = rule;
    }
    plan.rule.nested_in = names[coarse];
    plan.rule.nested_in_at = plans[coarse].rule.at;
    nested_.emplace_back(names[f], plan);
  }
}

KindUnits UnitPlanner::standalone(std::string_view kind, const Markers& markers) const {
  KindUnits plan;
  plan.window = trace_.window.present;
  bool activity = has_activity(markers);
  plan.extent = marker_extent(trace_, markers, whole_, activity);
  UnitAtRequest asked = request_.of(kind);
  const WindowRecord::KindRule* recorded = recorded_rule(trace_, kind);
  if (recorded) plan.first_marker = recorded->first_marker;
  if (asked != UnitAtRequest::automatic) {
    plan.rule.at = asked == UnitAtRequest::start ? UnitAt::start : UnitAt::end;
  } else if (recorded) {
    plan.rule.at = recorded->at_end ? UnitAt::end : UnitAt::start;
    plan.rule.recorded = true;
    plan.rule.ambiguous = recorded->ambiguous;
  } else {
    plan.rule = decide(markers, plan.extent, activity, nullptr, nullptr);
  }
  std::vector<int64_t> lanes = marker_lanes(markers);
  for (const StoppedLane& s : stopped_)
    if (std::binary_search(lanes.begin(), lanes.end(), static_cast<int64_t>(s.lane))) {
      plan.rule.lane_stopped = true;
      plan.rule.stop_ns = std::max(plan.rule.stop_ns, s.stop_ns);
    }
  // The outer units reach the trace's ends, not the marker lane's first and last events
  // (work on other lanes after the lane's last event is the last unit's), unless the lane
  // stopped recording: what came after is not known to be any unit's.
  plan.outer = {whole_.lo, plan.rule.lane_stopped ? plan.extent.hi : whole_.hi};
  return plan;
}

KindUnits UnitPlanner::plan(std::string_view kind, const Markers& markers) const {
  for (const auto& [name, plan] : nested_)
    if (name == kind) return plan;
  return standalone(kind, markers);
}

KindUnits UnitPlanner::plan(std::string_view kind) const { return plan(kind, markers_of(trace_, kind)); }

void for_each_unit(const Markers& markers, const KindUnits& plan,
                   const std::function<void(std::size_t i, std::size_t marker, Range r)>& f) {
  const std::vector<int64_t>& ts = markers.ts;
  const std::vector<int64_t>& bounds = plan.bounds;
  bool start = plan.rule.at == UnitAt::start;
  std::size_t first = 0, last = ts.size();
  // In a window, a closer at its start closes a unit before it, a starter at its end
  // starts one after it: neither is a unit of the window.
  if (plan.window && start)
    while (last > first && ts[last - 1] >= plan.outer.hi && last - 1 > first) --last;
  if (plan.window && !start)
    while (first < last && ts[first] <= plan.outer.lo && first + 1 < last) ++first;
  for (std::size_t i = first; i < last; ++i) {
    Range r{ts[i], ts[i]};
    if (start) {
      r.hi = i + 1 < last ? ts[i + 1] : std::max(plan.outer.hi, r.lo);
      auto b = std::upper_bound(bounds.begin(), bounds.end(), ts[i]);  // a coarser unit ends it
      if (b != bounds.end() && *b < r.hi) r.hi = *b;
    } else {
      r.lo = i > first ? ts[i - 1] : std::min(plan.outer.lo, r.hi);
      auto b = std::lower_bound(bounds.begin(), bounds.end(), ts[i]);
      if (b != bounds.begin() && *(b - 1) > r.lo) r.lo = *(b - 1);
    }
    f(i - first, i, r);
  }
}

std::vector<Unit> cut_units(const Markers& markers, const KindUnits& plan) {
  std::vector<Unit> units;
  units.reserve(markers.size());
  for_each_unit(markers, plan, [&](std::size_t, std::size_t marker, Range r) {
    units.push_back({plan.first_marker + static_cast<int64_t>(marker), markers.arg[marker], r});
  });
  return units;
}

std::vector<WindowRecord::KindRule> unit_rules_to_record(const Trace& trace, const UnitRequest& request, Range range) {
  std::vector<WindowRecord::KindRule> rules;
  if (!few_kinds(trace, kMaxKindsForNesting)) return rules;  // a kind an instant (generic traces): nothing worth recording
  std::vector<std::string> kinds = marker_kinds(trace);
  UnitPlanner planner(trace, request);
  for_each_kind_markers(trace, kinds, [&](std::size_t k, const Markers& markers) {
    if (markers.ts.empty()) return;
    KindUnits plan = planner.plan(kinds[k], markers);
    const UnitRule& rule = plan.rule;
    auto before = std::lower_bound(markers.ts.begin(), markers.ts.end(), range.lo) - markers.ts.begin();
    // An ambiguous rule too: a gate refused on the source must be refused on its window.
    rules.push_back({kinds[k], rule.at == UnitAt::end, std::string(rule.nested_in), rule.ambiguous,
                     plan.first_marker + before});
  });
  return rules;
}

std::size_t pick_summary_kind(const std::vector<SummaryKindCandidate>& kinds) {
  auto better = [](const SummaryKindCandidate& x, const SummaryKindCandidate& y) {
    if (x.ambiguous != y.ambiguous) return !x.ambiguous;
    if ((x.markers > 1) != (y.markers > 1)) return x.markers > 1;
    return x.markers < y.markers;
  };
  std::size_t best = SIZE_MAX;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    if (kinds[k].markers > 0 && (best == SIZE_MAX || better(kinds[k], kinds[best]))) best = k;
  return best;
}

std::string summary_unit_kind(const Trace& trace, const UnitRequest& request) {
  std::vector<std::string> kinds = marker_kinds(trace);
  std::vector<uint64_t> counts = marker_counts(trace, kinds);
  UnitPlanner planner(trace, request);
  std::vector<SummaryKindCandidate> candidates(kinds.size());
  for (std::size_t k = 0; k < kinds.size(); ++k)
    if (counts[k] > 0) candidates[k] = {counts[k], planner.plan(kinds[k]).rule.ambiguous};
  std::size_t best = pick_summary_kind(candidates);
  return best == SIZE_MAX ? "" : kinds[best];
}

UnitRule unit_rule(const Trace& trace, std::string_view kind, const UnitRequest& request) {
  return UnitPlanner(trace, request).plan(kind).rule;
}

std::vector<Unit> units_of(const Trace& trace, std::string_view kind, const UnitRequest& request) {
  Markers markers = markers_of(trace, kind);
  return cut_units(markers, UnitPlanner(trace, request).plan(kind, markers));
}

}  // namespace jqtrace
