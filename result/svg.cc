#include "svg.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/core.h>

#include "common_fields.h"
#include "render.h"
#include "text_format.h"
#include "utf8.h"

namespace jqtrace::result {
namespace {

/// The "not recorded" band: a light rose under crossed darker lines, and its label.
constexpr const char* kUnrecordedFill = "#FCE7EC";
constexpr const char* kUnrecordedLine = "#C2185B";
constexpr const char* kUnrecordedText = "#880E4F";

/// One depth of a lane: the lanes share kLanesHeight, each row between these heights.
constexpr int kMinRowHeight = 16, kMaxRowHeight = 40, kLanesHeight = 360;
constexpr int kLanePadding = 4;
constexpr int kTickRowHeight = 10;  ///< a marker kind drawn as ticks on the time axis
constexpr double kCharWidth = 6.6;  ///< of the 11 px sans-serif text, to lay out the legend

/// Where things go, computed once the legend's rows are known.
struct Frame {
  int plot_x = SvgLayout::kLabelWidth;
  int plot_w = 0;
  int legend_y = 44;
  int axis_y = 0;
  int ticks_y = 0;  ///< the rows of marker kinds drawn as ticks, under the axis labels
  int marker_label_y = 0;
  int lanes_y = 0;
  int height = 0;
};

/// "12.5 us" / "3.25 ms" with the decimals the step needs.
std::string tick_label(int64_t t, int64_t step) {
  bool ms = step >= 1000000;
  double unit = ms ? 1e6 : 1e3;
  int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(static_cast<double>(step) / unit) - 1e-9)));
  return fmt::format("{:.{}f} {}", static_cast<double>(t) / unit, decimals, ms ? "ms" : "us");
}

/// A round step (1, 2 or 5 times a power of ten, in ns) giving about one tick per 120 px.
int64_t tick_step(int64_t length, int plot_w) {
  double raw = static_cast<double>(std::max<int64_t>(length, 1)) / std::max(1, plot_w / 120);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * magnitude >= raw) return std::max<int64_t>(1, static_cast<int64_t>(f * magnitude));
  return std::max<int64_t>(1, static_cast<int64_t>(10 * magnitude));
}

std::string us_of(int64_t ns) { return us_fixed(ns) + " us"; }

class SvgWriter {
 public:
  SvgWriter(const Timeline& t, const std::string& title, const SvgLayout& layout)
      : t_(t), title_(title), layout_(layout) {
    f_.plot_w = t.plot_width_px;
    length_ = static_cast<double>(std::max<int64_t>(t.range.length(), 1));
  }

  std::string write() {
    std::string legend = legend_items();
    f_.axis_y = legend_bottom_ + 16;
    f_.ticks_y = f_.axis_y + 4;
    f_.marker_label_y = f_.ticks_y + static_cast<int>(t_.tick_kinds.size()) * kTickRowHeight + 10;
    f_.lanes_y = f_.marker_label_y + (has_marker_lines() ? 8 : -4);
    int rows = 0;
    for (const TimelineLane& lane : t_.lanes) rows += static_cast<int>(lane.depths);
    row_h_ = std::clamp(kLanesHeight / std::max(rows, 1), kMinRowHeight, kMaxRowHeight);
    int y = f_.lanes_y;
    for (const TimelineLane& lane : t_.lanes) y += static_cast<int>(lane.depths) * row_h_ + kLanePadding;
    f_.height = y + 8 + (has_note() ? 16 : 0);
    out_ += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"{2} width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"11\">\n",
        layout_.width_px, f_.height, layout_.id.empty() ? "" : " id=\"" + layout_.id + "\"");
    style();
    out_ += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", layout_.width_px, f_.height);
    // Bold 13 px characters are about 8.5 px wide: a longer title ends in "…" inside the
    // picture (it ran off its right edge), and its tooltip has it whole.
    auto fits = static_cast<std::size_t>(std::max(10.0, (layout_.width_px - 16) / 8.5));
    std::string shown = truncate_to_width(title_, fits);
    out_ += fmt::format("<text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}{}</text>\n", xml_escape(shown),
                        shown == title_ ? "" : "<title>" + xml_escape(title_) + "</title>");
    share_bar();
    out_ += legend;
    axis();
    lanes();
    markers();
    marker_ticks();
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  double x_of(int64_t ts) const {
    return f_.plot_x + (static_cast<double>(ts) - static_cast<double>(t_.range.lo)) * f_.plot_w / length_;
  }

  bool has_marker_lines() const {
    return std::any_of(t_.markers.begin(), t_.markers.end(), [](const TimelineMarker& m) { return m.line; });
  }
  int span_height() const { return row_h_ - 2; }
  int wait_height() const { return std::max(6, row_h_ / 3); }
  int wait_offset() const { return (span_height() - wait_height()) / 2; }

  /// One class per group: a span is a rect with a class, not a repeated colour.
  void style() {
    // Scoped to this picture when it has an id: a page's style rules apply to every SVG in it.
    std::string scope = layout_.id.empty() ? "" : "#" + layout_.id + " ";
    out_ += "<style>";
    for (std::size_t g = 0; g < t_.groups.size(); ++g)
      out_ += fmt::format("{}.g{}{{fill:{}}}", scope, g, t_.groups[g].color);
    out_ += fmt::format("{0}.w{{fill-opacity:.45}}{0}.lane{{fill:#f4f5f7}}{0}.tick{{stroke:#e3e5e8}}"
                        "{0}.mk{{stroke:#6b7280;stroke-dasharray:3 2;stroke-opacity:.7}}{0}.mt{{stroke:#4b5563}}"
                        "{0}.lbl{{fill:#374151}}{0}.q1{{fill-opacity:.3}}{0}.q2{{fill-opacity:.55}}"
                        "{0}.q3{{fill-opacity:.8}}</style>\n",
                        scope);
    out_ += "<defs><pattern id=\"" + wait_pattern() + "\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
            "<path d=\"M0 4L4 0\" stroke=\"#6b7280\" stroke-width=\"1\"/></pattern>";
    // Not recorded: a lane whose ring filled, from its stop on; crossed rose lines, unlike
    // idle (nothing) and waiting (grey lines one way).
    if (any_stopped())
      out_ += "<pattern id=\"" + unrecorded_pattern() + "\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\">"
              "<rect width=\"8\" height=\"8\" fill=\"" + std::string(kUnrecordedFill) + "\"/>"
              "<path d=\"M0 8L8 0M0 0L8 8\" stroke=\"" + std::string(kUnrecordedLine) + "\" stroke-width=\"1\" "
              "stroke-opacity=\".5\"/></pattern>";
    out_ += "</defs>\n";
  }
  std::string wait_pattern() const { return layout_.id.empty() ? "wait" : layout_.id + "-wait"; }
  std::string unrecorded_pattern() const { return layout_.id.empty() ? "unrecorded" : layout_.id + "-unrecorded"; }
  bool any_stopped() const {
    return std::any_of(t_.lanes.begin(), t_.lanes.end(), [](const TimelineLane& l) { return l.stopped_ns != INT64_MAX; });
  }

  /// A stopped lane's stretch from its stop to the range's end: not recorded, not idle.
  void unrecorded(const TimelineLane& lane, int y, int h) {
    if (lane.stopped_ns == INT64_MAX) return;
    double x0 = x_of(std::max(lane.stopped_ns, t_.range.lo)), x1 = f_.plot_x + f_.plot_w;
    if (x1 - x0 < 0.5) return;
    std::string name = lane.name.empty() ? lane.label : lane.name;
    out_ += fmt::format("<rect class=\"unrecorded\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"url(#{})\">"
                        "<title>{} stopped recording at {} us (its ring filled): not recorded from here, not idle</title></rect>\n",
                        x0, y, x1 - x0, h, unrecorded_pattern(), xml_escape(name), us_text(lane.stopped_ns));
    if (x1 - x0 >= 110)
      out_ += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" font-weight=\"bold\" fill=\"{}\" stroke=\"{}\" "
                          "stroke-width=\"4\" paint-order=\"stroke\">not recorded</text>\n",
                          x0 + 6, y + std::min(h, 20) / 2 + 5, kUnrecordedText, kUnrecordedFill);
  }

  /// The groups' shares of busy time as one bar across the plot, in legend order.
  void share_bar() {
    out_ += fmt::format("<text class=\"lbl\" x=\"{}\" y=\"34\" text-anchor=\"end\">busy share</text>\n", f_.plot_x - 6);
    double x = f_.plot_x;
    for (std::size_t g = 0; g < t_.groups.size(); ++g) {
      double w = t_.groups[g].share_pct / 100.0 * f_.plot_w;
      if (w <= 0) continue;
      out_ += fmt::format("<rect class=\"g{}\" x=\"{:.2f}\" y=\"24\" width=\"{:.2f}\" height=\"12\"><title>{} {:.1f}%</title></rect>\n",
                          g, x, w, xml_escape(marked_name(t_.groups[g].name, t_.groups[g].guessed)), t_.groups[g].share_pct);
      x += w;
    }
  }

  /// Whether each group has a span or a run in the picture.
  std::vector<bool> drawn_groups() const {
    std::vector<bool> drawn(t_.groups.size(), false);
    for (const TimelineLane& lane : t_.lanes) {
      for (const TimelineSpan& s : lane.spans) drawn[s.group] = true;
      for (const TimelineRun& r : lane.runs) drawn[r.group] = true;
    }
    return drawn;
  }

  /// Colour, name and share of every group with time or something drawn in the scope, in
  /// rows across the plot's width; then the not-recorded band's entry when it is drawn.
  std::string legend_items() {
    std::string out;
    double x = f_.plot_x;
    int y = f_.legend_y;
    // One entry: a 10 px swatch (its fill attributes) and the text, on a new row when full.
    auto entry = [&](const std::string& swatch, const std::string& text) {
      double w = 14 + kCharWidth * static_cast<double>(display_width(text)) + 14;
      if (x > f_.plot_x && x + w > f_.plot_x + f_.plot_w) {
        x = f_.plot_x;
        y += 16;
      }
      out += fmt::format("<rect {} x=\"{:.1f}\" y=\"{}\" width=\"10\" height=\"10\"/><text x=\"{:.1f}\" y=\"{}\">{}</text>\n",
                         swatch, x, y, x + 14, y + 9, xml_escape(text));
      x += w;
    };
    std::vector<bool> drawn = drawn_groups();
    for (std::size_t g = 0; g < t_.groups.size(); ++g) {
      if (t_.groups[g].share_pct <= 0 && !drawn[g]) continue;  // nothing of it in the scope
      entry(fmt::format("class=\"g{}\"", g),
            fmt::format("{} {:.1f}%", marked_name(t_.groups[g].name, t_.groups[g].guessed), t_.groups[g].share_pct));
    }
    if (any_stopped()) entry(fmt::format("fill=\"url(#{})\"", unrecorded_pattern()), "not recorded (a ring filled)");
    legend_bottom_ = y + 12;
    return out;
  }

  void axis() {
    int64_t step = tick_step(t_.range.length(), f_.plot_w);
    int64_t lo = t_.range.lo, hi = t_.range.hi;
    int64_t first = lo >= 0 ? (lo + step - 1) / step * step : lo / step * step;
    int bottom = f_.height - 8;
    for (int64_t t = first; t <= hi; t += step) {
      double x = x_of(t);
      std::string label = tick_label(t, step);
      // A label at the right edge ends at its tick instead of being cut off.
      bool at_edge = x + 3.0 * static_cast<double>(label.size()) > layout_.width_px - 2;
      out_ += fmt::format("<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                          "<text class=\"lbl\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"{5}\" font-size=\"10\">{4}</text>\n",
                          x, f_.axis_y + 3, bottom, f_.axis_y, label, at_edge ? "end" : "middle");
      if (hi - t < step) break;  // the next tick would overflow past hi
    }
  }

  void lanes() {
    int y = f_.lanes_y;
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const TimelineLane& lane = t_.lanes[l];
      int h = static_cast<int>(lane.depths) * row_h_;
      if (l % 2 == 0)
        out_ += fmt::format("<rect class=\"lane\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", f_.plot_x, y,
                            f_.plot_w, h + kLanePadding / 2);
      std::string name = lane.name.empty() ? lane.label : lane.name;
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{} {}</title></text>\n", f_.plot_x - 6,
                          y + std::min(row_h_, 20) / 2 + 5, xml_escape(truncate_to_width(name, 28)), xml_escape(lane.label), xml_escape(lane.name));
      for (const TimelineSpan& s : lane.spans) span(s, y);
      runs(lane, y);
      unrecorded(lane, y, h);
      y += h + kLanePadding;
    }
    std::string note;
    if (some_lanes_not_drawn())
      note = fmt::format("{} of {} lanes drawn: those with the most span time in the range", t_.lanes.size(),
                         t_.trace_lanes);
    if (t_.pixels_merged > 1)
      note += fmt::format("{}spans narrower than {} px summed up by columns of {} px, to keep the picture small",
                          note.empty() ? "" : "; ", t_.pixels_merged, t_.pixels_merged);
    if (t_.drawn_kinds < t_.trace_kinds)
      note += fmt::format("{}markers of {} of {} kinds drawn: those with the most markers", note.empty() ? "" : "; ",
                          t_.drawn_kinds, t_.trace_kinds);
    if (t_.marker_spacing_px > 1)
      note += fmt::format("{}marker lines of a kind at least {} px apart", note.empty() ? "" : "; ", t_.marker_spacing_px);
    if (!note.empty()) out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lbl\">{}</text>\n", f_.plot_x, y + 12, note);
  }
  bool some_lanes_not_drawn() const { return t_.trace_lanes > t_.lanes.size(); }
  bool has_note() const {
    return some_lanes_not_drawn() || t_.pixels_merged > 1 || t_.drawn_kinds < t_.trace_kinds || t_.marker_spacing_px > 1;
  }

  void span(const TimelineSpan& s, int lane_y) {
    double x0 = x_of(std::max(s.ts, t_.range.lo)), x1 = x_of(std::min(s.ts + s.dur, t_.range.hi));
    int y = lane_y + 1 + static_cast<int>(s.depth) * row_h_;
    const std::string& group = s.group_name.empty() ? t_.groups[s.group].name : s.group_name;
    std::string tip = fmt::format("{} ({})\nstart {}\ndur {}", s.name, group, us_of(s.ts), us_of(s.dur));
    if (s.jobque) tip += fmt::format("\nstage {} chain {}", s.stage, s.chain);
    if (s.waiting) {  // waiting, not working: a thin striped bar
      out_ += fmt::format("<rect class=\"g{0} w\" x=\"{1:.1f}\" y=\"{2}\" width=\"{3:.1f}\" height=\"{6}\"><title>{4}</title></rect>"
                          "<rect x=\"{1:.1f}\" y=\"{2}\" width=\"{3:.1f}\" height=\"{6}\" fill=\"url(#{5})\"/>\n",
                          s.group, x0, y + wait_offset(), std::max(1.0, x1 - x0), xml_escape(tip), wait_pattern(),
                          wait_height());
      return;
    }
    out_ += fmt::format("<rect class=\"g{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}</title></rect>\n",
                        s.group, x0, y, std::max(1.0, x1 - x0), span_height(), xml_escape(tip));
  }

  /// The overview of spans too narrow to draw alone: one path per group, kind and
  /// busy quarter on the lane (fainter where the columns are less busy), its tooltip the counts.
  void runs(const TimelineLane& lane, int lane_y) {
    struct Path {
      std::string d;
      uint64_t spans = 0;
      int64_t covered = 0;
      int columns = 0;
    };
    std::map<std::tuple<uint32_t, bool, int>, Path> paths;
    for (const TimelineRun& r : lane.runs) {
      int y = lane_y + 1 + static_cast<int>(r.depth) * row_h_ + (r.waiting ? wait_offset() : 0);
      Path& p = paths[{r.group, r.waiting, r.busy_quarters}];
      p.d += fmt::format("M{} {}h{}v{}h-{}z", f_.plot_x + r.x0, y, r.x1 - r.x0, r.waiting ? wait_height() : span_height(),
                         r.x1 - r.x0);
      p.spans += r.spans;
      p.covered += r.covered_ns;
      p.columns += r.x1 - r.x0;
    }
    for (const auto& [key, p] : paths) {
      auto [group, waiting, quarters] = key;
      std::string busy = quarters == 4 ? "over 3/4" : fmt::format("up to {}/4", quarters);
      out_ += fmt::format("<path class=\"g{}{}{}\" d=\"{}\"><title>{} px where spans narrower than a pixel are mostly {}"
                          "{}, {} busy: {} spans, {} in all</title></path>\n",
                          group, waiting ? " w" : "", quarters < 4 && !waiting ? fmt::format(" q{}", quarters) : "", p.d,
                          p.columns, xml_escape(t_.groups[group].name), waiting ? " (waiting)" : "", busy, p.spans,
                          us_of(p.covered));
    }
  }

  /// A dashed line per marker across the lanes; labels where they do not collide.
  void markers() {
    int bottom = f_.height - 8;
    double last_label_end = -1e9;
    for (const TimelineMarker& m : t_.markers) {
      if (!m.line) continue;
      double x = x_of(m.ts);
      std::string label = m.label();
      out_ += fmt::format("<line class=\"mk\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"><title>{3} at {4}</title></line>\n",
                          x, f_.lanes_y - 6, bottom, xml_escape(label), us_of(m.ts));
      double label_w = 5.4 * static_cast<double>(display_width(label));
      // A closer's label stands left of its line, over the unit it closes; any label at
      // the right edge does too, and a closer's at the left edge goes right.
      bool flip = m.closes ? x - 2 - label_w >= f_.plot_x : x + 2 + label_w > f_.plot_x + f_.plot_w;
      double start = flip ? x - 2 - label_w : x + 2;
      if (start < last_label_end + 4) continue;
      out_ += fmt::format("<text class=\"lbl\" x=\"{:.1f}\" y=\"{}\" font-size=\"9\"{}>{}</text>\n", flip ? x - 2 : x + 2,
                          f_.marker_label_y, flip ? " text-anchor=\"end\"" : "", xml_escape(label));
      last_label_end = start + label_w;
    }
  }

  /// The markers of kinds whose units are too narrow to label: a row of ticks a kind under
  /// the axis labels, the kind's name left of it, one path a kind.
  void marker_ticks() {
    for (std::size_t k = 0; k < t_.tick_kinds.size(); ++k) {
      int y = f_.ticks_y + static_cast<int>(k) * kTickRowHeight;
      std::string d;
      std::size_t count = 0;
      for (const TimelineMarker& m : t_.markers)
        if (!m.line && m.kind == t_.tick_kinds[k]) {
          d += fmt::format("M{:.1f} {}v7", x_of(m.ts), y);
          ++count;
        }
      out_ += fmt::format("<text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"9\">{} markers</text>\n",
                          f_.plot_x - 6, y + 7, xml_escape(truncate_to_width(t_.tick_kinds[k], 20)));
      if (!d.empty())
        out_ += fmt::format("<path class=\"mt\" d=\"{}\"><title>{} {} markers (too close to label)</title></path>\n", d,
                            count, xml_escape(t_.tick_kinds[k]));
    }
  }

  const Timeline& t_;
  std::string title_;
  SvgLayout layout_;
  Frame f_;
  int row_h_ = kMinRowHeight;
  double length_ = 1;
  int legend_bottom_ = 0;
  std::string out_;
};

}  // namespace

std::string share_bar_svg(const std::vector<TimelineGroup>& groups, int width_px) {
  std::string out = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sharebar\" width=\"{0}\" height=\"18\" "
                                "viewBox=\"0 0 {0} 18\" role=\"img\" aria-label=\"busy share by category\">\n", width_px);
  double x = 0;
  for (const TimelineGroup& g : fold_groups(groups).groups) {
    double w = g.share_pct / 100.0 * width_px;
    if (w <= 0) continue;
    out += fmt::format("<rect x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" height=\"18\" fill=\"{}\"><title>{} {:.1f}%</title></rect>\n",
                       x, w, g.color, xml_escape(marked_name(g.name, g.guessed)), g.share_pct);
    x += w;
  }
  return out + "</svg>\n";
}

/// The y axis of a chart of durations: a round step for about `ticks` steps and the top
/// of the axis, a whole number of steps at or above max_ns.
std::pair<int64_t, double> duration_axis(double max_ns, int ticks) {
  auto step = tick_step(static_cast<int64_t>(std::ceil(max_ns)), ticks * 120);
  return {step, std::ceil(max_ns / static_cast<double>(step)) * static_cast<double>(step)};
}

std::string rank_chart_svg(const std::vector<RankLine>& lines, int width_px) {
  constexpr int kHeight = 220, kTop = 12, kLeft = 56, kRight = 170, kBottom = 36;
  int plot_w = std::max(100, width_px - kLeft - kRight);
  double top = 1;
  for (const RankLine& l : lines)
    for (const auto& [x, y] : l.points) top = std::max(top, y);
  // A round step of the saving axis (1, 2 or 5 times a power of ten), about four of them.
  double raw = top / 4, magnitude = std::pow(10.0, std::floor(std::log10(raw))), step = 10 * magnitude;
  for (double m : {1.0, 2.0, 5.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  top = std::ceil(top / step) * step;
  auto x_of = [&](double speedup) { return kLeft + speedup / 100.0 * plot_w; };
  auto y_of = [&](double saving) { return kTop + kHeight - std::max(0.0, saving) / top * kHeight; };
  int height = kTop + kHeight + kBottom;
  std::string out = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rank\" width=\"{0}\" height=\"{1}\" "
                                "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"predicted saving against speedup\">\n",
                                width_px, height);
  for (double y = 0; y <= top + step / 2; y += step)
    out += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">{5}%</text>\n",
                       kLeft, kLeft + plot_w, y_of(y), kLeft - 6, y_of(y) + 4, fixed(y, step < 1 ? 1 : 0));
  for (int x : {0, 25, 50, 75, 100})
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}%</text>\n", x_of(x),
                       kTop + kHeight + 16, x);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">cost removed (speedup)</text>\n",
                     kLeft + plot_w / 2.0, kTop + kHeight + 32);
  for (const RankLine& l : lines) {
    std::string path = fmt::format("M{:.1f},{:.1f}", x_of(0), y_of(0));
    for (const auto& [x, y] : l.points) path += fmt::format(" L{:.1f},{:.1f}", x_of(x), y_of(y));
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>\n", path,
                       l.color, xml_escape(l.name));
    for (const auto& [x, y] : l.points)
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {}% cheaper saves {}%</title></circle>\n",
                         x_of(x), y_of(y), l.color, xml_escape(l.name), fixed(x, 0), fixed(y, 2));
  }
  // The labels at the lines' ends, pushed apart (12 px) where the lines end close together.
  std::vector<std::pair<double, const RankLine*>> labels;
  for (const RankLine& l : lines)
    if (!l.points.empty()) labels.emplace_back(y_of(l.points.back().second) + 4, &l);
  std::sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < labels.size(); ++i) labels[i].first = std::max(labels[i].first, labels[i - 1].first + 12);
  // ... and kept above the axis's labels: the stack moved up where it ran past the plot.
  double floor_y = kTop + kHeight + 4;
  for (std::size_t i = labels.size(); i-- > 0;) {
    labels[i].first = std::min(labels[i].first, floor_y);
    floor_y = labels[i].first - 12;
  }
  for (const auto& [y, l] : labels)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"{}\">{} {}%</text>\n",
                       x_of(l->points.back().first) + 6, y, l->color, xml_escape(l->name), fixed(l->points.back().second, 1));
  return out + "</svg>\n";
}

std::string unit_bars_svg(const std::vector<UnitBar>& bars, double p50_ns, double p90_ns, int width_px,
                          const std::string& kind) {
  constexpr int kHeight = 170, kTop = 12, kLeft = 78, kRight = 112, kBottom = 36;
  int plot_w = std::max(100, width_px - kLeft - kRight);
  double max_ns = 1;
  for (const UnitBar& b : bars) max_ns = std::max(max_ns, static_cast<double>(b.dur_ns));
  max_ns = std::max(max_ns, p90_ns);
  auto [step, top_ns] = duration_axis(max_ns, 4);
  auto y_of = [&, top = top_ns](double ns) { return kTop + kHeight - ns / top * kHeight; };
  int base = kTop + kHeight;
  std::string out = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"units\" width=\"{0}\" height=\"{1}\" "
                                "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"10\" role=\"img\" "
                                "aria-label=\"{2} unit durations by category\">\n",
                                width_px, base + kBottom, xml_escape(kind));
  // The y axis: gridlines and labels at round durations, its title along it.
  for (int64_t t = 0; static_cast<double>(t) <= top_ns; t += step) {
    double y = y_of(static_cast<double>(t));
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"axis\">{}</text>\n",
                       kLeft, y, kLeft + plot_w, y, kLeft - 5, y + 3, tick_label(t, step));
  }
  out += fmt::format("<text x=\"12\" y=\"{0}\" transform=\"rotate(-90 12 {0})\" text-anchor=\"middle\" class=\"axis\">"
                     "unit duration</text>\n", kTop + kHeight / 2);
  double slot = bars.empty() ? 0 : static_cast<double>(plot_w) / static_cast<double>(bars.size());
  double bar_w = std::max(0.5, slot * 0.8);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const UnitBar& b = bars[i];
    double x = kLeft + slot * static_cast<double>(i) + (slot - bar_w) / 2;
    double total = static_cast<double>(b.dur_ns);
    out += "<g><title>" + xml_escape(b.tip) + "</title>";
    double filled = 0;
    for (const auto& [color, pct] : b.parts) {  // the duration split by the busy shares
      double h = total * pct / 100.0 / top_ns * kHeight;
      if (h <= 0) continue;
      // Appended, not fmt::format'ed: 600 bars of up to a dozen parts in each of 16 charts,
      // and fmt's "{:.2f}" took ten times std::to_chars' instructions (same digits).
      out += "<rect x=\"";
      append_fixed(out, x, 2);
      out += "\" y=\"";
      append_fixed(out, base - filled - h, 2);
      out += "\" width=\"";
      append_fixed(out, bar_w, 2);
      out += "\" height=\"";
      append_fixed(out, h, 2);
      out += "\" fill=\"" + color + "\"/>";
      filled += h;
    }
    out += "</g>\n";
  }
  // The x axis: the unit index of a bar every ~50 px (a bar of many units: its slowest's).
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"baseline\"/>\n", kLeft, base, kLeft + plot_w);
  std::size_t every = slot > 0 ? std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(50 / slot))) : 1;
  for (std::size_t i = 0; i < bars.size(); i += every) {
    double x = kLeft + slot * (static_cast<double>(i) + 0.5);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"baseline\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" class=\"axis\">{4}</text>\n",
                       x, base, base + 4, base + 14, bars[i].index);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"axis\">{} unit (index)</text>\n",
                     kLeft + plot_w / 2, base + 30, xml_escape(kind));
  // p50 and p90: dashed lines, labelled right of the plot (moved apart when close).
  double y50 = y_of(p50_ns), y90 = y_of(p90_ns);
  double label50 = y50 + 3, label90 = y90 + 3;
  if (label50 - label90 < 11) {
    double mid = (label50 + label90) / 2;
    label50 = mid + 5.5;
    label90 = mid - 5.5;
  }
  for (auto [label, ns, y, text_y] : {std::tuple<const char*, double, double, double>{"p50", p50_ns, y50, label50},
                                      {"p90", p90_ns, y90, label90}})
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"pline\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" class=\"axis\">{} {} us</text>\n",
                       kLeft, y, kLeft + plot_w, y, kLeft + plot_w + 4, text_y, label, us_fixed(ns));
  return out + "</svg>\n";
}

std::string swatch_legend_html(const std::vector<TimelineGroup>& groups) {
  std::string out = "<div class=\"legend\">";
  for (const TimelineGroup& g : fold_groups(groups).groups)
    out += fmt::format("<span><span class=\"sw\" style=\"background:{}\"></span>{} {:.1f}%</span>", g.color,
                       xml_escape(marked_name(g.name, g.guessed)), g.share_pct);
  return out + "</div>\n";
}

std::string render_timeline_svg(const Timeline& timeline, const std::string& title, const SvgLayout& layout) {
  return SvgWriter(timeline, title, layout).write();
}

}  // namespace jqtrace::result
