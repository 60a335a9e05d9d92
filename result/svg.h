#pragma once
// The timeline as SVG: one row per lane, spans as rectangles coloured by group (with a
// tooltip each), merged runs of spans too narrow to draw, waits drawn thin and grey-striped,
// marker instants as labelled lines, a time axis with round ticks and a legend with each
// group's share of busy time as a bar. Self-contained: no fonts, scripts or styles from
// outside, valid XML whatever the names hold.
#include <string>

#include "timeline.h"

namespace jqtrace::result {

struct SvgLayout {
  int width_px = 1400;       ///< the whole picture
  /// The picture's id; when set, its style rules and pattern are scoped to it, so that
  /// several pictures in one page (the report) each keep their own colours.
  std::string id;
  static constexpr int kLabelWidth = 190;  ///< lane names, left of the plot
  static constexpr int kRightMargin = 10;
  /// The plot's width for a picture width_px wide.
  int plot_width() const { return std::max(100, width_px - kLabelWidth - kRightMargin); }
};

/// title: the heading line (file and scope).
std::string render_timeline_svg(const Timeline& timeline, const std::string& title, const SvgLayout& layout);

/// The groups' shares of busy time as one horizontal bar width_px wide (legend order), each
/// segment with its name and share as a tooltip; past kMaxDrawnGroups, "N others" in grey.
std::string share_bar_svg(const std::vector<TimelineGroup>& groups, int width_px);

/// One unit of a marker kind as a bar: its duration, split by its categories' shares.
struct UnitBar {
  int64_t index = 0;
  int64_t dur_ns = 0;
  std::vector<std::pair<std::string, double>> parts;  ///< colour, share of the unit's busy time (%)
  std::string tip;                                    ///< the tooltip
};
/// The units' durations as bars stacked by category, on axes (the unit index across, the
/// duration up, at round steps), with dashed lines at p50 and p90.
std::string unit_bars_svg(const std::vector<UnitBar>& bars, double p50_ns, double p90_ns, int width_px,
                          const std::string& kind);

/// The groups' colours, names and shares as a row of HTML swatches (the share bar's
/// legend), folded as the bar is.
/// One line of the rank chart (Coz's causal profile): a thing made cheaper, and the saving
/// of the trace at each speedup (%), from (0, 0).
struct RankLine {
  std::string name;
  std::string color;  ///< "#RRGGBB"
  std::vector<std::pair<double, double>> points;  ///< (speedup %, saving %), speedup rising
};
/// Saving against speedup, a line per thing, labelled at its end.
std::string rank_chart_svg(const std::vector<RankLine>& lines, int width_px);
std::string swatch_legend_html(const std::vector<TimelineGroup>& groups);

}  // namespace jqtrace::result
