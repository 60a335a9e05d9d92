#include "scope.h"

#include <algorithm>

#include "numbers.h"
#include "suggest.h"

namespace jqtrace {

std::vector<std::string> marker_kinds(const Trace& trace) {
  std::vector<std::string> kinds;
  if (trace.profile.present) {
    for (const ProfileMarker& m : trace.profile.markers) kinds.push_back(m.name);
    return kinds;
  }
  for (std::size_t i = 0; i < trace.instants.size(); ++i) {
    std::string name(trace.names.view(static_cast<uint32_t>(trace.instants.name[i])));
    if (std::find(kinds.begin(), kinds.end(), name) == kinds.end()) kinds.push_back(name);
  }
  return kinds;
}

std::vector<Unit> units_of(const Trace& trace, std::string_view kind) {
  std::vector<Unit> units;
  uint32_t id = trace.names.find(kind);
  if (id == Interner::kNone) return units;
  const InstantTable& in = trace.instants;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in.name[i] != id) continue;
    Unit u;
    u.index = static_cast<int64_t>(units.size());
    u.arg = in.arg[i];
    u.range.lo = in.ts[i];
    units.push_back(u);
  }
  for (std::size_t i = 0; i < units.size(); ++i)
    units[i].range.hi = i + 1 < units.size() ? units[i + 1].range.lo : std::max(trace.end_ns, units[i].range.lo);
  return units;
}

Range whole_trace(const Trace& trace) { return {trace.start_ns, trace.end_ns}; }

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

bool resolve_scope(const Trace& trace, const ScopeRequest& request, Range* range, std::string* error) {
  switch (request.kind) {
    case ScopeRequest::Kind::whole: *range = whole_trace(trace); return true;
    case ScopeRequest::Kind::time:
      if (request.lo_ns > request.hi_ns) {
        *error = "the range's start is after its end";
        return false;
      }
      *range = {request.lo_ns, request.hi_ns};
      return true;
    case ScopeRequest::Kind::marker: break;
  }
  if (!check_marker_kind(trace, request.marker_kind, error)) return false;
  std::vector<Unit> units = units_of(trace, request.marker_kind);
  int64_t n = static_cast<int64_t>(units.size());
  if (request.first_unit < 0 || request.last_unit >= n) {
    *error = "'" + request.marker_kind + "' has " + std::to_string(n) + " units" +
             (n ? " (0.." + std::to_string(n - 1) + ")" : "") + "; unit " +
             std::to_string(request.last_unit >= n ? request.last_unit : request.first_unit) + " does not exist";
    return false;
  }
  *range = {units[static_cast<std::size_t>(request.first_unit)].range.lo,
            units[static_cast<std::size_t>(request.last_unit)].range.hi};
  return true;
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
