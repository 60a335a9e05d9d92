#include "svg.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "render.h"
#include "text_format.h"
#include "utf8.h"

namespace jqtrace::result {
namespace {

constexpr int kRowHeight = 16;   ///< one depth of a lane
constexpr int kSpanHeight = 14;
constexpr int kLanePadding = 4;
constexpr double kCharWidth = 6.6;  ///< of the 11 px sans-serif text, to lay out the legend

/// Where things go, computed once the legend's rows are known.
struct Frame {
  int plot_x = SvgLayout::kLabelWidth;
  int plot_w = 0;
  int legend_y = 44;
  int axis_y = 0;
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
    f_.marker_label_y = f_.axis_y + 14;
    f_.lanes_y = f_.axis_y + (t_.markers.empty() ? 10 : 22);
    int y = f_.lanes_y;
    for (const TimelineLane& lane : t_.lanes) y += static_cast<int>(lane.depths) * kRowHeight + kLanePadding;
    f_.height = y + 8 + (has_note() ? 16 : 0);
    out_ += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"{2} width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"11\">\n",
        layout_.width_px, f_.height, layout_.id.empty() ? "" : " id=\"" + layout_.id + "\"");
    style();
    out_ += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", layout_.width_px, f_.height);
    out_ += fmt::format("<text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", xml_escape(title_));
    share_bar();
    out_ += legend;
    axis();
    lanes();
    markers();
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  double x_of(int64_t ts) const {
    return f_.plot_x + (static_cast<double>(ts) - static_cast<double>(t_.range.lo)) * f_.plot_w / length_;
  }

  /// One class per group: a span is a rect with a class, not a repeated colour.
  void style() {
    // Scoped to this picture when it has an id: a page's style rules apply to every SVG in it.
    std::string scope = layout_.id.empty() ? "" : "#" + layout_.id + " ";
    out_ += "<style>";
    for (std::size_t g = 0; g < t_.groups.size(); ++g)
      out_ += fmt::format("{}.g{}{{fill:{}}}", scope, g, t_.groups[g].color);
    out_ += fmt::format("{0}.w{{fill-opacity:.45}}{0}.lane{{fill:#f4f5f7}}{0}.tick{{stroke:#e3e5e8}}"
                        "{0}.mk{{stroke:#6b7280;stroke-dasharray:3 2}}{0}.lbl{{fill:#374151}}</style>\n",
                        scope);
    out_ += "<defs><pattern id=\"" + wait_pattern() + "\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
            "<path d=\"M0 4L4 0\" stroke=\"#6b7280\" stroke-width=\"1\"/></pattern></defs>\n";
  }
  std::string wait_pattern() const { return layout_.id.empty() ? "wait" : layout_.id + "-wait"; }

  /// The groups' shares of busy time as one bar across the plot, in legend order.
  void share_bar() {
    out_ += fmt::format("<text class=\"lbl\" x=\"{}\" y=\"34\" text-anchor=\"end\">busy share</text>\n", f_.plot_x - 6);
    double x = f_.plot_x;
    for (std::size_t g = 0; g < t_.groups.size(); ++g) {
      double w = t_.groups[g].share_pct / 100.0 * f_.plot_w;
      if (w <= 0) continue;
      out_ += fmt::format("<rect class=\"g{}\" x=\"{:.2f}\" y=\"24\" width=\"{:.2f}\" height=\"12\"><title>{} {:.1f}%</title></rect>\n",
                          g, x, w, xml_escape(t_.groups[g].name), t_.groups[g].share_pct);
      x += w;
    }
  }

  /// Colour, name and share of every group, in rows across the plot's width.
  std::string legend_items() {
    std::string out;
    double x = f_.plot_x;
    int y = f_.legend_y;
    for (std::size_t g = 0; g < t_.groups.size(); ++g) {
      std::string text = fmt::format("{} {:.1f}%", t_.groups[g].name, t_.groups[g].share_pct);
      double w = 14 + kCharWidth * static_cast<double>(display_width(text)) + 14;
      if (x > f_.plot_x && x + w > f_.plot_x + f_.plot_w) {
        x = f_.plot_x;
        y += 16;
      }
      out += fmt::format("<rect class=\"g{}\" x=\"{:.1f}\" y=\"{}\" width=\"10\" height=\"10\"/>"
                         "<text x=\"{:.1f}\" y=\"{}\">{}</text>\n",
                         g, x, y, x + 14, y + 9, xml_escape(text));
      x += w;
    }
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
      out_ += fmt::format("<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                          "<text class=\"lbl\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"10\">{4}</text>\n",
                          x, f_.axis_y + 3, bottom, f_.axis_y, tick_label(t, step));
      if (hi - t < step) break;  // the next tick would overflow past hi
    }
  }

  void lanes() {
    int y = f_.lanes_y;
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const TimelineLane& lane = t_.lanes[l];
      int h = static_cast<int>(lane.depths) * kRowHeight;
      if (l % 2 == 0)
        out_ += fmt::format("<rect class=\"lane\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", f_.plot_x, y,
                            f_.plot_w, h + kLanePadding / 2);
      std::string name = lane.name.empty() ? lane.label : lane.name;
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{} {}</title></text>\n", f_.plot_x - 6,
                          y + 12, xml_escape(truncate_to_width(name, 28)), xml_escape(lane.label), xml_escape(lane.name));
      for (const TimelineSpan& s : lane.spans) span(s, y);
      runs(lane, y);
      y += h + kLanePadding;
    }
    std::string note;
    if (some_lanes_not_drawn())
      note = fmt::format("{} of {} lanes drawn: those with the most span time in the range", t_.lanes.size(),
                         t_.trace_lanes);
    if (t_.pixels_merged > 1)
      note += fmt::format("{}spans narrower than {} px merged in runs of {} px buckets, to keep the picture small",
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
    int y = lane_y + 1 + static_cast<int>(s.depth) * kRowHeight;
    const std::string& group = s.group_name.empty() ? t_.groups[s.group].name : s.group_name;
    std::string tip = fmt::format("{} ({})\nstart {}\ndur {}", s.name, group, us_of(s.ts), us_of(s.dur));
    if (s.jobque) tip += fmt::format("\nstage {} chain {}", s.stage, s.chain);
    if (s.waiting) {  // waiting, not working: a thin striped bar
      out_ += fmt::format("<rect class=\"g{0} w\" x=\"{1:.1f}\" y=\"{2}\" width=\"{3:.1f}\" height=\"6\"><title>{4}</title></rect>"
                          "<rect x=\"{1:.1f}\" y=\"{2}\" width=\"{3:.1f}\" height=\"6\" fill=\"url(#{5})\"/>\n",
                          s.group, x0, y + 4, std::max(1.0, x1 - x0), xml_escape(tip), wait_pattern());
      return;
    }
    out_ += fmt::format("<rect class=\"g{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}</title></rect>\n",
                        s.group, x0, y, std::max(1.0, x1 - x0), kSpanHeight, xml_escape(tip));
  }

  /// Merged runs: one path per group and kind on the lane, its tooltip the counts.
  void runs(const TimelineLane& lane, int lane_y) {
    struct Path {
      std::string d;
      uint64_t spans = 0;
      int64_t covered = 0;
    };
    std::map<std::pair<uint32_t, bool>, Path> paths;
    for (const TimelineRun& r : lane.runs) {
      int y = lane_y + 1 + static_cast<int>(r.depth) * kRowHeight + (r.waiting ? 4 : 0);
      Path& p = paths[{r.group, r.waiting}];
      p.d += fmt::format("M{} {}h{}v{}h-{}z", f_.plot_x + r.x0, y, r.x1 - r.x0, r.waiting ? 6 : kSpanHeight, r.x1 - r.x0);
      p.spans += r.spans;
      p.covered += r.covered_ns;
    }
    for (const auto& [key, p] : paths)
      out_ += fmt::format("<path class=\"g{}{}\" d=\"{}\"><title>{}: {} spans narrower than a pixel, {} in all</title></path>\n",
                          key.first, key.second ? " w" : "", p.d, xml_escape(t_.groups[key.first].name), p.spans,
                          us_of(p.covered));
  }

  /// A dashed line per marker across the lanes; labels where they do not collide.
  void markers() {
    int bottom = f_.height - 8;
    double last_label_end = -1e9;
    for (const TimelineMarker& m : t_.markers) {
      double x = x_of(m.ts);
      std::string label = fmt::format("{} {}", m.kind, m.index);
      out_ += fmt::format("<line class=\"mk\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"><title>{3} at {4}</title></line>\n",
                          x, f_.lanes_y - 6, bottom, xml_escape(label), us_of(m.ts));
      double label_w = 5.4 * static_cast<double>(display_width(label));
      bool flip = x + 2 + label_w > f_.plot_x + f_.plot_w;  // at the right edge: left of the line
      double start = flip ? x - 2 - label_w : x + 2;
      if (start < last_label_end + 4) continue;
      out_ += fmt::format("<text class=\"lbl\" x=\"{:.1f}\" y=\"{}\" font-size=\"9\"{}>{}</text>\n", flip ? x - 2 : x + 2,
                          f_.marker_label_y, flip ? " text-anchor=\"end\"" : "", xml_escape(label));
      last_label_end = start + label_w;
    }
  }

  const Timeline& t_;
  std::string title_;
  SvgLayout layout_;
  Frame f_;
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
                       x, w, g.color, xml_escape(g.name), g.share_pct);
    x += w;
  }
  return out + "</svg>\n";
}

std::string unit_bars_svg(const std::vector<UnitBar>& bars, double p50_ns, double p90_ns, int width_px) {
  constexpr int kHeight = 160, kTop = 10, kLeft = 56;
  int plot_w = width_px - kLeft - 8;
  double max_ns = 1;
  for (const UnitBar& b : bars) max_ns = std::max(max_ns, static_cast<double>(b.dur_ns));
  max_ns = std::max(max_ns, p90_ns);
  auto y_of = [&](double ns) { return kTop + kHeight - ns / max_ns * kHeight; };
  std::string out = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"units\" width=\"{0}\" height=\"{1}\" "
                                "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"10\" role=\"img\" "
                                "aria-label=\"unit durations by category\">\n",
                                width_px, kTop + kHeight + 16);
  double slot = bars.empty() ? 0 : static_cast<double>(plot_w) / static_cast<double>(bars.size());
  double bar_w = std::max(0.5, slot * 0.8);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const UnitBar& b = bars[i];
    double x = kLeft + slot * static_cast<double>(i) + (slot - bar_w) / 2;
    double base = static_cast<double>(kTop + kHeight);
    double total = static_cast<double>(b.dur_ns);
    out += "<g><title>" + xml_escape(b.tip) + "</title>";
    double filled = 0;
    for (const auto& [color, pct] : b.parts) {  // the duration split by the busy shares
      double h = total * pct / 100.0 / max_ns * kHeight;
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
  for (auto [label, ns] : {std::pair<const char*, double>{"p50", p50_ns}, {"p90", p90_ns}}) {
    double y = y_of(ns);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"pline\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"axis\">{}</text>\n",
                       kLeft, y, kLeft + plot_w, y, kLeft - 4, y + 3, label);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"axis\">{} {} us</text>\n",
                       kLeft + plot_w, y - 3, label, us_fixed(ns));
  }
  return out + "</svg>\n";
}

std::string render_timeline_svg(const Timeline& timeline, const std::string& title, const SvgLayout& layout) {
  return SvgWriter(timeline, title, layout).write();
}

}  // namespace jqtrace::result
