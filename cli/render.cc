#include "render.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/core.h>

#include "profile.h"

namespace jqtrace::cli {

const std::vector<std::string> kDistributionTableHeader = {"count", "mean_us", "p50_us", "p90_us", "p99_us", "max_us"};
const std::vector<std::string> kDistributionFieldHeader = {"count",  "mean_us", "p50_us", "p90_us",
                                                           "p95_us", "p99_us",  "max_us"};

std::vector<std::string> distribution_cells(const Distribution& d) {
  if (d.count == 0) return {"0", "-", "-", "-", "-", "-"};
  return {std::to_string(d.count), us_fixed(d.mean), us_fixed(d.p50), us_fixed(d.p90), us_fixed(d.p99),
          us_fixed(d.max)};
}

std::vector<std::string> distribution_fields(const Distribution& d) {
  if (d.count == 0) return {"0", "", "", "", "", "", ""};
  return {std::to_string(d.count), us_fixed(d.mean), us_fixed(d.p50), us_fixed(d.p90),
          us_fixed(d.p95),         us_fixed(d.p99),  us_fixed(d.max)};
}

void json_distribution(JsonDocument& doc, std::string_view key, const Distribution& d, Units units) {
  doc.key(key);
  doc.w().StartObject();
  doc.field("count", d.count);
  if (d.count) {
    const std::pair<const char*, double> values[] = {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90},
                                                     {"p95", d.p95},   {"p99", d.p99}, {"max", d.max}};
    for (const auto& [name, v] : values) {
      if (units == Units::ns) doc.us(name, v);
      else doc.number(name, v);
    }
  }
  doc.w().EndObject();
}

std::string share_bar(double pct, int width, bool utf8) {
  double cells = std::clamp(pct, 0.0, 100.0) / 100.0 * width;
  int full = static_cast<int>(cells);
  std::string bar;
  if (!utf8) return std::string(static_cast<std::size_t>(full), '#');
  static const char* const kEighths[] = {"", "\u258F", "\u258E", "\u258D", "\u258C", "\u258B", "\u258A", "\u2589"};
  for (int i = 0; i < full; ++i) bar += "\u2588";
  int eighths = static_cast<int>((cells - full) * 8);
  if (full < width) bar += kEighths[eighths];
  return bar;
}

std::string ansi_color(std::string_view hex) {
  if (!is_hex_color(hex)) return "";
  unsigned rgb = static_cast<unsigned>(std::strtoul(std::string(hex.substr(1)).c_str(), nullptr, 16));
  return fmt::format("\x1b[38;2;{};{};{}m", (rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF);
}

void json_scope(JsonDocument& doc, const Scope& scope) {
  doc.field("scope", scope.label);
  if (scope.kind != ScopeRequest::Kind::marker) return;
  doc.field("unit_at", unit_at_name(scope.rule.at));
  doc.field("unit_at_auto", scope.rule.automatic);
}

std::string unit_rule_text(UnitRule rule) {
  return fmt::format("units {} at their markers{}", unit_at_name(rule.at), rule.automatic ? ", auto" : "");
}

std::string scope_prefix(const Scope& scope) {
  if (scope.window) return "window " + scope.label + ", ";
  if (scope.kind != ScopeRequest::Kind::marker) return "";
  std::string label = scope.label.substr(0, scope.label.find(" --unit-at"));
  return fmt::format("{} ({}), ", label, unit_rule_text(scope.rule));
}

void json_range_totals(JsonDocument& doc, const RangeStats& s) {
  doc.field("events", s.events);
  doc.us("busy_us", s.busy_ns);
  doc.us("wait_us", s.wait_ns);
  doc.number("idle_pct", s.idle_pct);
  doc.number("parallelism", s.parallelism);
  doc.field("publishes", s.publishes);
}

}  // namespace jqtrace::cli
