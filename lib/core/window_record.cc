#include "window_record.h"

#include <charconv>
#include <cstdio>

#include "numbers.h"

namespace jqtrace {
namespace {

bool time_member(const JsonValue& v, std::string_view key, int64_t* ns) {
  const JsonValue* m = v.member(key);
  return m && m->kind == JsonValue::Kind::number && parse_us_to_ns(m->text, ns) == NumberStatus::ok &&
         time_in_range(*ns);
}

std::string string_member(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.member(key);
  return m && m->kind == JsonValue::Kind::string ? m->text : std::string();
}

/// "units":{"token":"end","layer":"start in token","step":"start (ambiguous)"}: the rules a
/// window's source cut its units by (a value that says neither start nor end is passed over).
std::vector<WindowRecord::KindRule> interpret_unit_rules(const JsonValue* units) {
  std::vector<WindowRecord::KindRule> rules;
  if (!units || units->kind != JsonValue::Kind::object) return rules;
  for (const auto& [kind, v] : units->members) {
    if (v.kind != JsonValue::Kind::string) continue;
    std::string_view text = v.text;
    WindowRecord::KindRule rule{kind, false, "", false, 0};
    constexpr std::string_view kAmbiguous = " (ambiguous)";
    if (text.size() > kAmbiguous.size() && text.substr(text.size() - kAmbiguous.size()) == kAmbiguous) {
      rule.ambiguous = true;
      text.remove_suffix(kAmbiguous.size());
    }
    std::size_t in = text.find(" in ");
    std::string_view at = text.substr(0, in);
    if (at != "start" && at != "end") continue;
    rule.at_end = at == "end";
    if (in != std::string_view::npos) rule.nested_in = std::string(text.substr(in + 4));
    rules.push_back(std::move(rule));
  }
  return rules;
}

/// "first_marker":{"token":2,"layer":64}: where each kind's markers in the window stand in
/// the source's (a value that is not a whole number from 0 is passed over: the kind's units
/// are then numbered from 0).
void interpret_first_markers(const JsonValue* first, std::vector<WindowRecord::KindRule>* rules) {
  if (!first || first->kind != JsonValue::Kind::object) return;
  for (const auto& [kind, v] : first->members) {
    if (v.kind != JsonValue::Kind::number) continue;
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
    if (ec != std::errc() || end != v.text.data() + v.text.size() || n < 0) continue;
    for (WindowRecord::KindRule& rule : *rules)
      if (rule.kind == kind) rule.first_marker = n;
  }
}

/// ,"units":{...},"first_marker":{...} ("" when no kind is recorded).
std::string unit_rules_json(const std::vector<WindowRecord::KindRule>& units) {
  if (units.empty()) return "";
  std::string json = ",\"units\":{";
  for (std::size_t i = 0; i < units.size(); ++i) {
    std::string rule = units[i].at_end ? "end" : "start";
    if (!units[i].nested_in.empty()) rule += " in " + units[i].nested_in;
    if (units[i].ambiguous) rule += " (ambiguous)";
    if (i) json += ',';
    json += json_quote(units[i].kind);
    json += ':';
    json += json_quote(rule);
  }
  json += "},\"first_marker\":{";
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (i) json += ',';
    json += json_quote(units[i].kind);
    json += ':';
    json += std::to_string(units[i].first_marker);
  }
  return json + "}";
}

/// ,"edges":{...} ("" when not measured).
std::string edges_json(const WindowRecord::Edges& edges) {
  if (!edges.present) return "";
  return ",\"edges\":{\"spans_kept_whole\":" + std::to_string(edges.spans_kept_whole) +
         ",\"publishes_outside\":" + std::to_string(edges.publishes_outside) + ",\"extent_us\":[" +
         us_text(edges.extent_lo_ns) + "," + us_text(edges.extent_hi_ns) + "]}";
}

}  // namespace

WindowRecord interpret_window_record(const JsonValue& value) {
  WindowRecord r;
  if (value.kind != JsonValue::Kind::object) return r;
  if (!time_member(value, "lo_us", &r.lo_ns) || !time_member(value, "hi_us", &r.hi_ns) || r.lo_ns > r.hi_ns) return r;
  if (!time_member(value, "rebased_by_us", &r.rebased_by_ns)) r.rebased_by_ns = 0;
  r.source = string_member(value, "source");
  r.scope = string_member(value, "scope");
  if (r.scope.empty()) r.scope = "window";
  r.marker_kind = string_member(value, "kind");
  r.units = interpret_unit_rules(value.member("units"));
  interpret_first_markers(value.member("first_marker"), &r.units);
  r.present = true;
  return r;
}

std::string window_record_json(const WindowRecord& record) {
  std::string kind = record.marker_kind.empty() ? "" : ",\"kind\":" + json_quote(record.marker_kind);
  return "{\"version\":1,\"source\":" + json_quote(record.source) + ",\"scope\":" + json_quote(record.scope) + kind +
         ",\"lo_us\":" + us_text(record.lo_ns) + ",\"hi_us\":" + us_text(record.hi_ns) +
         ",\"rebased_by_us\":" + us_text(record.rebased_by_ns) + unit_rules_json(record.units) +
         (record.view ? ",\"view\":true" : "") + edges_json(record.edges) + "}";
}

}  // namespace jqtrace
