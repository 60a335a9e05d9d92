#include "scope.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "flat_map.h"
#include "numbers.h"
#include "suggest.h"

namespace jqtrace {

const char* unit_at_name(UnitAt at) { return at == UnitAt::start ? "start" : "end"; }

bool parse_unit_at(std::string_view text, UnitAtRequest* request) {
  if (text == "auto") *request = UnitAtRequest::automatic;
  else if (text == "start") *request = UnitAtRequest::start;
  else if (text == "end") *request = UnitAtRequest::end;
  else return false;
  return true;
}

std::string unit_rule_evidence(const UnitRule& rule) {
  if (!rule.measured) return "";
  char text[160];
  std::snprintf(text, sizeof text, "head %.2f gaps, tail %.2f; evidence %lld start, %lld end", rule.head_gaps,
                rule.tail_gaps, static_cast<long long>(rule.starts), static_cast<long long>(rule.closes));
  return text;
}

std::string ambiguity_reason(const UnitRule& rule) {
  if (!rule.ambiguous || !rule.measured) return "";
  auto wins = [](int64_t a, int64_t b) { return a > 0 && static_cast<double>(a) >= kClearVotes * static_cast<double>(b); };
  char text[240];
  if (wins(rule.closes, rule.starts) && rule.head_gaps < kClearMinGaps)
    std::snprintf(text, sizeof text,
                  "the pauses say end (%d to %d), but the first marker opens the lane's work (head %.2f gaps): under "
                  "end the first unit would hold none of it",
                  rule.closes, rule.starts, rule.head_gaps);
  else if (wins(rule.starts, rule.closes) && rule.tail_gaps < kClearMinGaps)
    std::snprintf(text, sizeof text,
                  "the pauses say start (%d to %d), but the last marker closes the lane's work (tail %.2f gaps): under "
                  "start the last unit would hold none of it",
                  rule.starts, rule.closes, rule.tail_gaps);
  else
    std::snprintf(text, sizeof text, "neither start nor end has %g times the other's evidence (%d start, %d end)",
                  kClearVotes, rule.starts, rule.closes);
  return text;
}

bool units_have_args(const std::vector<Unit>& units) {
  return std::any_of(units.begin(), units.end(), [](const Unit& u) { return u.arg != 0 && u.arg != kNoArg; });
}

std::string unit_arg_label(std::string_view kind, const Unit& unit, bool labelled) {
  if (!labelled || unit.arg == unit.index || unit.arg == kNoArg) return "";
  return std::string(kind) + " " + std::to_string(unit.arg);
}

std::string unit_name(std::string_view kind, int64_t index, const std::string& arg_label) {
  if (arg_label.empty()) return std::string(kind) + " " + std::to_string(index);
  return arg_label + " (unit " + std::to_string(index) + ")";
}

std::string unit_name(std::string_view kind, const Unit& unit, bool labelled) {
  return unit_name(kind, unit.index, unit_arg_label(kind, unit, labelled));
}

std::string ambiguous_units_text(std::string_view kind, const UnitRule& rule) {
  std::string evidence = rule.recorded ? "so recorded from the window's source" : unit_rule_evidence(rule);
  return "where '" + std::string(kind) + "' markers stand in their units is ambiguous (" + evidence +
         "); give --unit-at start or end";
}

std::string unit_rule_label(const UnitRule& rule, bool with_evidence) {
  std::string label = unit_at_name(rule.at);
  if (rule.recorded) label += rule.ambiguous ? " (the window's record, ambiguous)" : " (the window's record)";
  else if (rule.automatic && !rule.measured) label += " (auto)";
  else if (rule.automatic)
    label += std::string(rule.ambiguous ? " (auto, ambiguous" : " (auto") +
             (with_evidence ? ": " + unit_rule_evidence(rule) : "") + ")";
  if (!rule.nested_in.empty()) label += ", in " + std::string(rule.nested_in);
  return label;
}

std::vector<std::string> marker_kinds(const Trace& trace) {
  std::vector<std::string> kinds;
  if (trace.profile.present && trace.profile.unread.empty()) {  // an unread profile's kinds are the instants'
    for (const ProfileMarker& m : trace.profile.markers) kinds.push_back(m.name);
    return kinds;
  }
  std::vector<bool> seen(trace.names.size(), false);  // by name id (a hash set of a million names: ~50 MB)
  for (std::size_t i = 0; i < trace.instants.size(); ++i) {
    auto name = static_cast<uint32_t>(trace.instants.name[i]);
    if (name < seen.size() && !seen[name]) {
      seen[name] = true;
      kinds.emplace_back(trace.names.view(name));
    }
  }
  return kinds;
}

namespace {

/// By name id: the index + 1 of the kind of that name (0: not a kind; kinds are distinct
/// names). An array over the names: 4 bytes a name, where a hash map of a million kinds
/// took ~50 MB.
std::vector<uint32_t> kind_of_names(const Trace& trace, const std::vector<std::string>& kinds) {
  std::vector<uint32_t> kind_of(trace.names.size(), 0);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    uint32_t id = trace.names.find(kinds[k]);
    if (id != Interner::kNone) kind_of[id] = static_cast<uint32_t>(k + 1);
  }
  return kind_of;
}

/// The kind (index + 1; 0: none) of the instant in row i.
uint32_t kind_at(const Trace& trace, const std::vector<uint32_t>& kind_of, std::size_t i) {
  int64_t name = trace.instants.name[i];
  return name >= 0 && static_cast<uint64_t>(name) < kind_of.size() ? kind_of[static_cast<std::size_t>(name)] : 0;
}

}  // namespace

std::vector<uint64_t> marker_counts(const Trace& trace, const std::vector<std::string>& kinds) {
  std::vector<uint32_t> kind_of = kind_of_names(trace, kinds);
  std::vector<uint64_t> counts(kinds.size(), 0);
  for (std::size_t i = 0; i < trace.instants.size(); ++i)
    if (uint32_t k = kind_at(trace, kind_of, i)) ++counts[k - 1];
  return counts;
}

void for_each_kind_markers(const Trace& trace, const std::vector<std::string>& kinds,
                           const std::function<void(std::size_t, const Markers&)>& f) {
  std::vector<uint32_t> kind_of = kind_of_names(trace, kinds);
  const InstantTable& in = trace.instants;  // sorted by ts: so is each kind's share of it
  // The instants' rows kind after kind (a counting sort): kind k's are rows[begin[k], begin[k + 1]).
  std::vector<std::size_t> begin(kinds.size() + 1, 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (uint32_t k = kind_at(trace, kind_of, i)) ++begin[k];
  for (std::size_t k = 1; k <= kinds.size(); ++k) begin[k] += begin[k - 1];
  std::vector<std::size_t> rows(begin.back());
  std::vector<std::size_t> next(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (uint32_t k = kind_at(trace, kind_of, i)) rows[next[k - 1]++] = i;
  std::vector<std::size_t>().swap(next);
  Markers m;  // one kind's at a time: a vector or two a kind cost ~110 bytes each of a million kinds
  auto measured = [&](const IntColumn& c, std::size_t row) { return row < c.size() ? c[row] : -1; };
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    for (auto* v : {&m.ts, &m.arg, &m.lane, &m.quiet_before, &m.quiet_after, &m.busy_before, &m.busy_after}) v->clear();
    for (std::size_t r = begin[k]; r < begin[k + 1]; ++r) {
      std::size_t row = rows[r];
      m.ts.push_back(in.ts[row]);
      m.arg.push_back(marker_arg(in.arg[row]));
      m.lane.push_back(in.lane[row]);
      m.quiet_before.push_back(measured(in.quiet_before, row));
      m.quiet_after.push_back(measured(in.quiet_after, row));
      m.busy_before.push_back(std::max<int64_t>(0, measured(in.busy_before, row)));
      m.busy_after.push_back(std::max<int64_t>(0, measured(in.busy_after, row)));
    }
    f(k, m);
  }
}

std::vector<Markers> markers_of_kinds(const Trace& trace, const std::vector<std::string>& kinds) {
  std::vector<Markers> out(kinds.size());
  for_each_kind_markers(trace, kinds, [&](std::size_t k, const Markers& m) { out[k] = m; });
  return out;
}

Markers markers_of(const Trace& trace, std::string_view kind) {
  return std::move(markers_of_kinds(trace, {std::string(kind)}).front());
}

Range whole_trace(const Trace& trace) {
  if (trace.window.present) return {trace.window.lo_ns, trace.window.hi_ns};
  return {trace.start_ns, trace.end_ns};
}

bool profile_unused(const Trace& trace) {
  const JobqueProfile& p = trace.profile;
  if (!p.present || !p.unread.empty() || p.markers.empty()) return false;
  std::vector<uint64_t> counts = marker_counts(trace, marker_kinds(trace));  // the profile's kinds
  if (std::any_of(counts.begin(), counts.end(), [](uint64_t n) { return n > 0; })) return false;
  if (p.categories.empty()) return true;
  // The profile's categories follow the reserved groups (Trace::categories).
  std::size_t first = std::min(trace.categories.size(), kReservedCategories);
  bool used = false;
  trace.chains.for_each([&](int64_t, const ChainInfo& c) {
    used = used || (c.category >= first && c.category < first + p.categories.size());
  });
  return !used;
}

bool check_marker_kind(const Trace& trace, std::string_view kind, std::string* error) {
  std::vector<std::string> kinds = marker_kinds(trace);
  if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return true;
  std::string hint = closest_match(kind, kinds);
  *error = "unknown marker kind '" + std::string(kind) + "'";
  if (!hint.empty()) {
    *error += "; did you mean '" + hint + "'?";
  } else if (kinds.empty()) {
    *error += " (the trace has no markers)";
  } else {
    *error += " (kinds:";
    for (const auto& k : kinds) *error += " " + k;
    *error += ")";
  }
  return false;
}

namespace {

/// Milliseconds to the microsecond, without trailing zeros ("0", "175.867", "12.5").
std::string ms_text(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

bool resolve_time(const Trace& trace, const ScopeRequest& request, Scope* scope, std::string* error) {
  if (request.lo_ns > request.hi_ns) {
    *error = "the range's start is after its end";
    return false;
  }
  Range whole = whole_trace(trace);
  if (trace.has_time && (request.hi_ns < whole.lo || request.lo_ns > whole.hi)) {
    auto text = request.milliseconds ? ms_text : us_text;
    const char* unit = request.milliseconds ? "ms" : "us";
    *error = "range " + text(request.lo_ns) + ".." + text(request.hi_ns) + " " + unit + " is outside the trace (" +
             text(whole.lo) + " .. " + text(whole.hi) + " " + unit + ")";
    return false;
  }
  scope->range = {request.lo_ns, request.hi_ns};
  scope->label = "--us " + us_text(request.lo_ns) + " " + us_text(request.hi_ns);
  return true;
}

/// The scope of units first..last of a kind cut into units (numbered from units[0].index:
/// a window's keep their source's numbers).
bool cut_scope(const ScopeRequest& request, const std::vector<Unit>& units, Scope* scope, std::string* error) {
  int64_t n = static_cast<int64_t>(units.size());
  int64_t base = units.empty() ? 0 : units.front().index;
  if (request.first_unit < base || request.last_unit >= base + n) {
    *error = "'" + request.marker_kind + "' has " + std::to_string(n) + " units" +
             (n ? " (" + std::to_string(base) + ".." + std::to_string(base + n - 1) + ")" : "") + "; unit " +
             std::to_string(request.last_unit >= base + n ? request.last_unit : request.first_unit) +
             " does not exist";
    return false;
  }
  const Unit& first = units[static_cast<std::size_t>(request.first_unit - base)];
  const Unit& last = units[static_cast<std::size_t>(request.last_unit - base)];
  scope->range = {first.range.lo, last.range.hi};
  scope->first_unit = request.first_unit;
  scope->last_unit = request.last_unit;
  if (request.first_unit == request.last_unit)
    scope->unit_arg_label = unit_arg_label(request.marker_kind, first, units_have_args(units));
  std::string span = std::to_string(request.first_unit);
  if (request.last_unit != request.first_unit) span += ".." + std::to_string(request.last_unit);
  scope->label = "--marker " + request.marker_kind + " " + span + " --unit-at " + unit_request_text(request.marker_kind, scope->rule);
  return true;
}

/// A window of units (its record's kind): the scope is those units, cut by the rule the
/// source cut them by, "ambiguous" included (gates refused on the source are refused here).
/// An explicit --unit-at for the kind decides instead.
void window_units_rule(const Trace& trace, const UnitRequest& asked, Scope* scope) {
  const std::string& kind = trace.window.marker_kind;
  if (!trace.window.present || kind.empty() || asked.of(kind) != UnitAtRequest::automatic) return;
  for (const WindowRecord::KindRule& r : trace.window.units)
    if (r.kind == kind) {
      scope->marker_kind = kind;
      scope->rule.at = r.at_end ? UnitAt::end : UnitAt::start;
      scope->rule.recorded = true;
      scope->rule.ambiguous = r.ambiguous;
    }
}

bool resolve_units(const Trace& trace, const ScopeRequest& request, Scope* scope, std::string* error) {
  if (!check_marker_kind(trace, request.marker_kind, error)) return false;
  Markers markers = markers_of(trace, request.marker_kind);  // one pass: the rule and the units
  KindUnits plan = UnitPlanner(trace, request.unit_at).plan(request.marker_kind, markers);
  scope->rule = plan.rule;
  scope->marker_kind = request.marker_kind;
  std::vector<Unit> units = cut_units(markers, plan);
  ScopeRequest picked = request;
  if (!request.pick.empty()) {
    if (units.empty()) {
      *error = "'" + request.marker_kind + "' has no units to pick the " + request.pick + " of";
      return false;
    }
    picked.first_unit = picked.last_unit = units[pick_unit(units, request.pick)].index;
    scope->picked = request.pick;
  }
  return cut_scope(picked, units, scope, error);
}

}  // namespace

bool resolve_scope(const Trace& trace, const ScopeRequest& request, Scope* scope, std::string* error) {
  *scope = Scope{};
  scope->kind = request.kind;
  switch (request.kind) {
    case ScopeRequest::Kind::whole:
      scope->range = whole_trace(trace);
      scope->label = trace.window.present ? trace.window.scope : "whole trace";
      scope->window = trace.window.present;
      window_units_rule(trace, request.unit_at, scope);
      return true;
    case ScopeRequest::Kind::time: return resolve_time(trace, request, scope, error);
    case ScopeRequest::Kind::marker: return resolve_units(trace, request, scope, error);
  }
  return false;
}
bool is_unit_pick(std::string_view text) {
  if (text == "slowest" || text == "fastest" || text == "median") return true;
  if (text.size() < 2 || text.size() > 4 || text[0] != 'p') return false;
  int64_t q = 0;
  std::string_view digits = text.substr(1);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         parse_integer(digits, &q) == NumberStatus::ok && q <= 100;
}

std::size_t pick_unit(const std::vector<Unit>& units, std::string_view pick) {
  std::vector<std::size_t> by_duration(units.size());
  std::iota(by_duration.begin(), by_duration.end(), std::size_t{0});
  std::stable_sort(by_duration.begin(), by_duration.end(), [&](std::size_t a, std::size_t b) {
    return units[a].range.length() < units[b].range.length();
  });
  double q = pick == "slowest" ? 100 : pick == "fastest" ? 0 : pick == "median" ? 50 : 0;
  if (pick.size() > 1 && pick[0] == 'p') {
    int64_t percent = 0;
    parse_integer(pick.substr(1), &percent);
    q = static_cast<double>(percent);
  }
  auto rank = static_cast<std::size_t>(std::llround(q / 100.0 * static_cast<double>(units.size() - 1)));
  if (pick == "slowest") {  // the slowest: the last of the longest, so that ties pick the earliest unit
    std::size_t longest = by_duration.back();
    for (std::size_t i : by_duration)
      if (units[i].range.length() == units[longest].range.length()) return i;
  }
  return by_duration[std::min(rank, units.size() - 1)];
}

bool parse_unit_span(std::string_view text, int64_t* first, int64_t* last) {
  auto dots = text.find("..");
  std::string_view a = text.substr(0, dots);
  std::string_view b = dots == std::string_view::npos ? a : text.substr(dots + 2);
  bool digits = !a.empty() && !b.empty() &&
                std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                std::all_of(b.begin(), b.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || parse_integer(a, first) != NumberStatus::ok || parse_integer(b, last) != NumberStatus::ok) return false;
  return *first <= *last;
}

}  // namespace jqtrace
