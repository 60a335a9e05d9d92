#pragma once
// The report page: one self-contained HTML file (inline CSS and SVG, a few lines of inline
// JavaScript that only sort tables; everything reads with scripts off), light and dark by
// prefers-color-scheme.
#include <string>
#include <vector>

namespace jqtrace::result {

struct ReportSection {
  std::string id;       ///< the anchor
  std::string heading;
  std::string intro;    ///< one sentence of what the section shows (plain text)
  std::string body;     ///< HTML: charts (SVG) and tables (render_html_fragment)
};

std::string render_report_html(const std::string& title, const std::vector<ReportSection>& sections);

}  // namespace jqtrace::result
