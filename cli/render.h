#pragma once
// Pieces the analysis renderers share: distribution cells and objects, share bars, colors.
#include <string>
#include <vector>

#include "quantile.h"
#include "stats.h"
#include "text_format.h"

namespace jqtrace::cli {

/// Table cells: count mean p50 p90 p99 max (µs, 3 decimals).
std::vector<std::string> distribution_cells(const Distribution& d);
/// CSV/TSV cells: count mean_us p50_us p90_us p95_us p99_us max_us.
std::vector<std::string> distribution_fields(const Distribution& d);
extern const std::vector<std::string> kDistributionTableHeader;   ///< count mean_us p50_us ...
extern const std::vector<std::string> kDistributionFieldHeader;   ///< count mean_us ... p95_us ...

/// What a distribution's values are: nanoseconds (written as µs) or plain numbers.
enum class Units { ns, plain };

/// {"count","mean","p50","p90","p95","p99","max"}, full precision (ns written as µs).
void json_distribution(JsonDocument& doc, std::string_view key, const Distribution& d, Units units = Units::ns);

/// A range's totals as stats and markers write them: events, busy_us, wait_us, idle_pct,
/// parallelism, publishes.
void json_range_totals(JsonDocument& doc, const RangeStats& s);

/// "scope": its label, and for marker scopes "unit_at": "start"|"end" and "unit_at_auto".
void json_scope(JsonDocument& doc, const Scope& scope);

/// How a rule reads in a header line: "units end at their markers, auto".
std::string unit_rule_text(UnitRule rule);

/// What a table's header line says of the scope before its range: "" for the whole trace
/// or a time range (the range says it all), "--marker token 3 (units end at their markers,
/// auto), " for units, "window --marker ... , " for a window's own range.
std::string scope_prefix(const Scope& scope);

/// A bar of `width` cells for pct in [0, 100]: block characters, or '#' without UTF-8.
std::string share_bar(double pct, int width, bool utf8);

/// The ANSI 24-bit foreground for "#RRGGBB" (empty for anything else).
std::string ansi_color(std::string_view hex);

}  // namespace jqtrace::cli
