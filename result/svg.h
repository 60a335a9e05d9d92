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
  int width_px = 1600;       ///< the whole picture
  static constexpr int kLabelWidth = 190;  ///< lane names, left of the plot
  static constexpr int kRightMargin = 10;
  /// The plot's width for a picture width_px wide.
  int plot_width() const { return std::max(100, width_px - kLabelWidth - kRightMargin); }
};

/// title: the heading line (file and scope).
std::string render_timeline_svg(const Timeline& timeline, const std::string& title, const SvgLayout& layout);

/// text with the five XML special characters escaped, valid UTF-8 and no control
/// characters (XML 1.0 allows none of them but tab and line ends).
std::string xml_escape(std::string_view text);

}  // namespace jqtrace::result
