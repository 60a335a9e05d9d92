#include "timeline.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>

#include "jobque.h"
#include "largest.h"
#include "parallel.h"
#include "timings.h"

namespace jqtrace {
namespace {

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Nesting deeper than this shares the last row (a million nested Bs must not make a
/// picture a million rows high).
constexpr uint32_t kMaxDepth = 16;

/// Every span's group and the group it is drawn as: the groups stats measured, folded to
/// the kMaxDrawnGroups with the largest shares and "N others" (see fold_groups); a group
/// stats does not count (a wake's, say) is drawn on its own while there is room.
class GroupOf {
 public:
  static constexpr uint32_t kUnknown = UINT32_MAX;

  /// known: how many of the measured groups to know before the threads start (all but in tests).
  GroupOf(const Trace& t, GroupBy by, std::vector<TimelineGroup> measured, std::size_t known)
      : t_(t), by_(by), all_(std::move(measured)), drawn_(fold_groups(all_)) {
    for (std::size_t g = 0; g < all_.size(); ++g) by_name_.emplace(all_[g].name, static_cast<uint32_t>(g));
    know_measured(known);
  }

  /// The span's group, an index into the measured groups (and those added since): a group
  /// met for the first time is added (so the order groups are met in decides their colours).
  uint32_t operator()(const SpanTable& s, std::size_t i) {
    auto slot = static_cast<std::size_t>(key_of(s, i));
    if (slot >= ids_.size()) ids_.resize(slot + 1, kUnknown);
    if (ids_[slot] == kUnknown) ids_[slot] = resolve(static_cast<int64_t>(slot));
    return ids_[slot];
  }
  /// The span's group if it is known already, else kUnknown: reads only, for the threads.
  uint32_t known(const SpanTable& s, std::size_t i) const {
    auto slot = static_cast<std::size_t>(key_of(s, i));
    return slot < ids_.size() ? ids_[slot] : kUnknown;
  }
  uint32_t drawn(uint32_t group) const { return drawn_.drawn_of[group]; }
  bool folded(uint32_t group) const { return drawn_.folded(group); }
  const std::string& name(uint32_t group) const { return all_[group].name; }
  /// The groups drawn, for the legend: at most kMaxDrawnGroups, then "N others".
  const std::vector<TimelineGroup>& drawn_groups() const { return drawn_.groups; }

 private:
  int64_t key_of(const SpanTable& s, std::size_t i) const {
    return by_ == GroupBy::category ? s.category[i] : by_ == GroupBy::cat ? s.cat[i] : s.name[i] + 1;
  }

  /// Every key of a measured group mapped to it, as resolve would (that adds nothing), so
  /// that the spans of measured groups, nearly all of them, are known before the threads start.
  void know_measured(std::size_t known) {
    auto know = [&](int64_t key, uint32_t group) {
      if (group >= known) return;
      auto slot = static_cast<std::size_t>(key);
      if (slot >= ids_.size()) ids_.resize(slot + 1, kUnknown);
      ids_[slot] = group;
    };
    if (by_ == GroupBy::category) {
      for (std::size_t c = 0; c < t_.categories.size(); ++c)
        if (auto it = by_name_.find(t_.categories[c].name); it != by_name_.end()) know(static_cast<int64_t>(c), it->second);
      return;
    }
    for (const auto& [name, group] : by_name_) {
      if (name == name_of(0)) know(0, group);  // "(no cat)": spans without one, and a cat of that name
      if (uint32_t id = t_.names.find(name); id != Interner::kNone) know(int64_t{id} + 1, group);
    }
  }

  std::string name_of(int64_t key) const {
    if (by_ == GroupBy::category) return t_.categories[static_cast<std::size_t>(key)].name;
    if (key == 0) return by_ == GroupBy::cat ? "(no cat)" : "(no name)";
    return std::string(t_.names.view(static_cast<uint32_t>(key - 1)));
  }

  /// The measured group of this name, or a new one (a group stats does not count).
  uint32_t resolve(int64_t key) {
    std::string name = name_of(key);
    auto [it, added] = by_name_.emplace(name, static_cast<uint32_t>(all_.size()));
    if (added) {
      all_.push_back({name, palette_color(name), 0.0});
      drawn_.add(all_.back());
    }
    return it->second;
  }

  const Trace& t_;
  GroupBy by_;
  std::vector<TimelineGroup> all_;  ///< every group met: stats' first, in its order
  DrawnGroups drawn_;               ///< all_ as drawn
  std::vector<uint32_t> ids_;       ///< by stored id: the group, or kUnknown until first seen
  std::unordered_map<std::string, uint32_t> by_name_;  ///< group names: one lookup per new id
};

/// What the SVG writer spends on a marker's line, about.
constexpr std::size_t kMarkerBytes = 120;
/// And what a lane's label and row, a span's rectangle and tooltip, a run's piece of its path take.
constexpr std::size_t kLaneBytes = 300, kSpanBytes = 220, kRunBytes = 30;

/// Sums up the spans too narrow to draw alone per pixel column (a bucket of `scale`
/// pixels) and depth of one lane, and turns the columns into runs (see TimelineRun):
/// spans of a depth come in order of start, so a column is final once a span starts past it.
class ColumnOverview {
 public:
  ColumnOverview(std::vector<TimelineRun>& out, int scale, int plot_width, Range range, double length_ns)
      : out_(out), scale_(scale), plot_width_(plot_width), lo_(range.lo),
        ns_per_px_(length_ns / plot_width), buckets_((plot_width + scale - 1) / scale) {}

  /// A span over pixels [x0, x1), its time inside the range [ts, end).
  void add(double x0, double x1, int64_t ts, int64_t end, uint32_t group, uint32_t depth, bool waiting) {
    if (depth >= rows_.size()) rows_.resize(depth + 1);
    Row& row = rows_[depth];
    int b0 = bucket_of(x0), b1 = std::max(b0, bucket_of(x1));
    std::size_t final_columns = 0;  // the pending columns before b0 are final
    while (final_columns < row.pending.size() && row.pending[final_columns].bucket < b0) ++final_columns;
    for (std::size_t c = 0; c < final_columns; ++c) emit(row, depth, row.pending[c]);
    row.pending.erase(row.pending.begin(), row.pending.begin() + static_cast<std::ptrdiff_t>(final_columns));
    // The pending columns now run from b0 up, one after another (a span covers adjacent ones).
    int64_t t = ts;
    for (int b = b0; b <= b1; ++b) {
      int64_t until = b == b1 ? end : std::min(end, time_of_px((b + 1) * scale_));
      Column& c = column(row, b0, b);
      if (b == b0) {
        ++c.spans;
        if (c.spans == 1) c.first_group = group;
      }
      add_ns(waiting ? c.wait : c.work, group, until - t);
      c.covered += until - t;
      t = until;
    }
  }

  void flush() {
    for (std::size_t d = 0; d < rows_.size(); ++d) {
      for (Column& c : rows_[d].pending) emit(rows_[d], static_cast<uint32_t>(d), c);
      if (rows_[d].open.x1 > rows_[d].open.x0) out_.push_back(rows_[d].open);
    }
    rows_.clear();
  }

 private:
  struct Column {
    int bucket = 0;
    std::vector<int64_t> work, wait;  ///< ns by drawn group
    uint64_t spans = 0;
    int64_t covered = 0;
    uint32_t first_group = 0;         ///< the group of a column of zero-length spans
  };
  struct Row {
    std::vector<Column> pending;      ///< columns a later span may still add to, in order
    TimelineRun open;                 ///< the run the next column may extend (empty: x1 == x0)
  };

  int bucket_of(double x) const { return std::clamp(static_cast<int>(std::floor(x / scale_)), 0, buckets_ - 1); }
  int64_t time_of_px(int px) const { return lo_ + std::llround(px * ns_per_px_); }

  static Column& column(Row& row, int first, int bucket) {
    auto k = static_cast<std::size_t>(bucket - first);
    while (row.pending.size() <= k) {
      row.pending.emplace_back();
      row.pending.back().bucket = first + static_cast<int>(row.pending.size()) - 1;
    }
    return row.pending[k];
  }
  static void add_ns(std::vector<int64_t>& by_group, uint32_t group, int64_t ns) {
    if (by_group.size() <= group) by_group.resize(group + 1, 0);
    by_group[group] += ns;
  }
  /// The group with the most time (ties: the lower index, the larger share) and the sum.
  static std::pair<uint32_t, int64_t> dominant(const std::vector<int64_t>& by_group) {
    uint32_t best = 0;
    int64_t sum = 0;
    for (std::size_t g = 0; g < by_group.size(); ++g) {
      sum += by_group[g];
      if (by_group[g] > by_group[best]) best = static_cast<uint32_t>(g);
    }
    return {best, sum};
  }

  void emit(Row& row, uint32_t depth, const Column& c) {
    auto [group, ns] = dominant(c.work);
    bool waiting = false;
    if (ns == 0) {  // no work in the column: its waits, if any
      auto [wait_group, wait_ns] = dominant(c.wait);
      waiting = wait_ns > 0;
      group = waiting ? wait_group : c.first_group;  // zero-length spans only: still there, faintly
      ns = wait_ns;
    }
    double busy = static_cast<double>(ns) / (ns_per_px_ * scale_);
    int quarters = std::clamp(static_cast<int>(std::ceil(busy * 4 - 1e-9)), 1, 4);
    int x0 = c.bucket * scale_, x1 = std::min(x0 + scale_, plot_width_);
    TimelineRun& open = row.open;
    bool extends = open.x1 == x0 && open.x1 > open.x0 && open.group == group && open.waiting == waiting &&
                   open.busy_quarters == quarters;
    if (!extends) {
      if (open.x1 > open.x0) out_.push_back(open);
      open = TimelineRun{x0, x0, group, depth, waiting, 0, 0, quarters};
    }
    open.x1 = x1;
    open.spans += c.spans;
    open.covered_ns += c.covered;
  }

  std::vector<TimelineRun>& out_;
  int scale_, plot_width_;
  int64_t lo_;
  double ns_per_px_;
  int buckets_;
  std::vector<Row> rows_;  ///< by depth
};

class TimelineBuilder {
 public:
  TimelineBuilder(const Trace& t, const SpanIndex& index, Range r, const TimelineOptions& o)
      : t_(t), index_(index), r_(r), o_(o), names_(JobqueNames::found(t.names)) {
    out_.range = r;
    out_.plot_width_px = o.plot_width_px;
    out_.jobque = t.jobque;
    length_ = static_cast<double>(std::max<int64_t>(r.length(), 1));
  }

  Timeline build() {
    GroupOf group_of(t_, o_.by, measured_groups(), o_.known_groups);
    out_.trace_lanes = t_.lanes.size();
    add_markers();
    std::vector<std::size_t> lanes = drawn_lanes();
    // Past the picture's budget (spans with a tooltip a pixel, runs alternating groups a
    // pixel: 13 MB of SVG for 512 lanes), spans must be twice as wide to be drawn alone and
    // runs snap to buckets twice as wide, until it fits.
    // The markers' lines take their part first (they do not shrink); the lanes keep at
    // least half. (A doubling that saves nothing may still lead to one that does: runs of
    // a group four pixels apart merge at 4, not at 2.) At most log2(plot width) passes.
    std::size_t markers = out_.markers.size() * kMarkerBytes;
    std::size_t budget = o_.max_svg_bytes / 2 > markers ? o_.max_svg_bytes - markers : o_.max_svg_bytes / 2;
    for (scale_ = 1;; scale_ *= 2) {
      lay_out(lanes, group_of);
      ++out_.layout_passes;
      if (lanes_svg_bytes() <= budget || scale_ >= o_.plot_width_px) break;
      if (scale_ == 1) scale_ = first_scale_that_may_fit(lanes, budget) / 2;  // the loop doubles it
    }
    out_.pixels_merged = scale_;
    mark_stopped_lanes(lanes);
    out_.groups = group_of.drawn_groups();
    shade_shared_colors(out_.groups, t_, o_.by);
    return std::move(out_);
  }

 private:
  /// The groups with their shares, as stats computes them over the same range.
  std::vector<TimelineGroup> measured_groups() const {
    StatsOptions stats;
    stats.by = o_.by;
    stats.distributions = false;
    stats.lanes = false;  // shares only: no lane rows (a million lanes' labels for nothing)
    stats.threads = o_.threads;
    RangeStats s = compute_stats(t_, index_, r_, stats);
    std::vector<TimelineGroup> groups;
    groups.reserve(s.groups.size());
    for (const GroupStats& g : s.groups)
      groups.push_back({g.name, g.color.empty() ? palette_color(g.name) : g.color, g.share_pct, g.guessed});
    return groups;
  }

  /// Every lane, or when there are more than max_lanes, the max_lanes with the most span
  /// time in the range (ties: the earlier lane), in trace order.
  std::vector<std::size_t> drawn_lanes() const {
    std::vector<int64_t> time(t_.lanes.size(), 0);
    if (time.size() > o_.max_lanes)
      for (std::size_t l = 0; l < time.size(); ++l)
        for_each_candidate(l, [&](const SpanTable& s, std::size_t i) {
          if (__builtin_add_overflow(time[l], r_.clipped(s.ts[i], s.end(i)), &time[l])) time[l] = INT64_MAX;
          return true;
        });
    return indices_of_largest(time, o_.max_lanes);
  }

  /// The smallest scale past 1 at which the spans wide enough to be drawn alone could fit
  /// the budget by themselves, from one pass that counts them by width: a pass at a smaller
  /// scale cannot fit (spans nested 200,000 deep, most of them wide, made eleven passes).
  int first_scale_that_may_fit(const std::vector<std::size_t>& lanes, std::size_t budget) const {
    constexpr std::size_t kScales = 32;
    std::vector<std::size_t> counts(lanes.size() * kScales, 0);  // per lane, [k]: spans drawn alone up to scale 2^k
    run_parallel(lanes.size(), o_.threads, [&](std::size_t n) {
      std::size_t* widest = &counts[n * kScales];
      for_each_candidate(lanes[n], [&](const SpanTable& s, std::size_t i) {
        int64_t ts = s.ts[i], end = s.end(i);
        if (!r_.overlaps(ts, end)) return true;
        auto [x0, x1] = x_extent(ts, end);
        double width = x1 - x0;
        int k = 0;  // as add_span decides: alone at scale while width >= min_span_px * scale
        while (k + 1 < static_cast<int>(kScales) && width >= o_.min_span_px * static_cast<double>(2 << k)) ++k;
        if (width >= o_.min_span_px) ++widest[k];
        return true;
      });
    });
    std::vector<std::size_t> widest_scale(kScales, 0);
    for (std::size_t n = 0; n < lanes.size(); ++n)
      for (std::size_t k = 0; k < kScales; ++k) widest_scale[k] += counts[n * kScales + k];
    std::size_t alone = 0;  // spans drawn alone at 2^k: those whose widest scale is 2^k or more
    for (std::size_t k = 0; k < widest_scale.size(); ++k) alone += widest_scale[k];
    int scale = 1;
    for (std::size_t k = 0; k + 1 < widest_scale.size() && scale < o_.plot_width_px; ++k) {
      alone -= widest_scale[k];
      scale *= 2;
      if (lanes.size() * kLaneBytes + alone * kSpanBytes <= budget) break;
    }
    return scale;
  }

  /// Roughly what the SVG writer spends on the lanes: a lane's label and row, a span's
  /// rectangle and tooltip, a run's piece of its path.
  std::size_t lanes_svg_bytes() const {
    std::size_t bytes = 0;
    for (const TimelineLane& lane : out_.lanes)
      bytes += kLaneBytes + lane.spans.size() * kSpanBytes + lane.runs.size() * kRunBytes;
    return bytes;
  }

  double x_of(int64_t t) const { return (static_cast<double>(t) - static_cast<double>(r_.lo)) * o_.plot_width_px / length_; }
  /// A span's left and right edges in pixels, clipped to the range.
  std::pair<double, double> x_extent(int64_t ts, int64_t end) const {
    return {x_of(std::max(ts, r_.lo)), x_of(std::min(end, r_.hi))};
  }

  /// Calls f(spans, row) for each span of lane l that may meet the range, in order: from the
  /// first that can end in it (the index) to the last that starts by its end (some of them
  /// end before it). Stops when f returns false, and returns false then.
  template <typename F>
  bool for_each_candidate(std::size_t l, F&& f) const {
    const SpanTable& s = t_.lanes[l].spans;
    for (std::size_t i = index_.first_candidate(l, r_.lo); i < s.size() && s.ts[i] <= r_.hi; ++i)
      if (!f(s, i)) return false;
    return true;
  }

  /// out_.lanes: the lanes laid out, on the threads. A lane with a span of a group not met
  /// yet (one stats does not count: rare) stops; then every lane's groups are met in the
  /// order one walk over them meets them (that order decides which are folded) and the
  /// lanes are laid out again.
  void lay_out(const std::vector<std::size_t>& lanes, GroupOf& group_of) {
    out_.lanes.resize(lanes.size());
    std::vector<char> laid(lanes.size(), 0);
    auto lay = [&](std::size_t k) { laid[k] = add_lane(lanes[k], group_of, out_.lanes[k]); };
    run_parallel(lanes.size(), o_.threads, lay);
    if (std::all_of(laid.begin(), laid.end(), [](char ok) { return ok != 0; })) return;
    for (std::size_t l : lanes) meet_groups(l, group_of);
    run_parallel(lanes.size(), o_.threads, lay);
  }

  /// The drawn lanes that stopped recording before the range's end (rings that filled).
  void mark_stopped_lanes(const std::vector<std::size_t>& lanes) {
    std::unordered_map<std::size_t, int64_t> stop_of;
    for (const StoppedLane& s : lanes_stopped_early(t_)) stop_of.emplace(s.lane, s.stop_ns);
    for (std::size_t k = 0; k < lanes.size() && !stop_of.empty(); ++k)
      if (auto it = stop_of.find(lanes[k]); it != stop_of.end() && it->second < r_.hi) out_.lanes[k].stopped_ns = it->second;
  }

  /// Every group of lane l's spans in range, met in order.
  void meet_groups(std::size_t l, GroupOf& group_of) const {
    for_each_candidate(l, [&](const SpanTable& s, std::size_t i) {
      if (r_.overlaps(s.ts[i], s.end(i))) group_of(s, i);
      return true;
    });
  }

  /// Lays lane l out into out, from scratch (a lane laid out again after a group was met
  /// late starts over); false (out unfinished) at a span of a group not known yet.
  bool add_lane(std::size_t l, const GroupOf& group_of, TimelineLane& out) const {
    out = TimelineLane{};
    out.label = t_.lane_label(l);
    out.name = t_.thread_name(l);
    ColumnOverview runs(out.runs, scale_, o_.plot_width_px, r_, length_);
    std::vector<int64_t> open_ends;  // ends of the spans enclosing the current one
    bool laid = for_each_candidate(l, [&](const SpanTable& s, std::size_t i) {
      int64_t ts = s.ts[i], end = s.end(i);
      while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
      auto depth = static_cast<uint32_t>(std::min<std::size_t>(open_ends.size(), kMaxDepth - 1));
      open_ends.push_back(end);
      if (!r_.overlaps(ts, end)) return true;
      out.depths = std::max(out.depths, depth + 1);
      uint32_t group = group_of.known(s, i);
      if (group == GroupOf::kUnknown) return false;
      add_span(s, i, depth, group, group_of, out, runs);
      return true;
    });
    runs.flush();
    return laid;
  }

  void add_span(const SpanTable& s, std::size_t i, uint32_t depth, uint32_t own_group, const GroupOf& group_of,
                TimelineLane& lane, ColumnOverview& runs) const {
    uint32_t group = group_of.drawn(own_group);
    int64_t ts = s.ts[i], end = s.end(i);
    int64_t name = s.name[i];
    bool waiting = name == names_.stage_wait || name == names_.wake;
    auto [x0, x1] = x_extent(ts, end);
    if (x1 - x0 >= o_.min_span_px * scale_) {
      bool chained = t_.jobque && names_.chained(name);
      lane.spans.push_back({ts, s.dur[i], group, depth, waiting,
                            name >= 0 ? std::string(t_.names.view(static_cast<uint32_t>(name))) : std::string(),
                            group_of.folded(own_group) ? group_of.name(own_group) : std::string(), s.stage[i],
                            s.chain[i], chained});
      return;
    }
    runs.add(x0, x1, std::max(ts, r_.lo), std::max(std::max(ts, r_.lo), std::min(end, r_.hi)), group, depth, waiting);
  }

  /// The instants of the max_marker_kinds kinds with the most markers (all, mostly) in the
  /// range; of several of a kind within `spacing` pixels, the first (a whole-trace picture
  /// of 100,000 tokens draws a line per pixel, not 100,000). The spacing doubles until the
  /// lines take at most half the picture's budget.
  void add_markers() {
    std::vector<std::string> kinds = marker_kinds(t_);
    out_.trace_kinds = kinds.size();
    std::vector<std::size_t> drawn = indices_of_largest(marker_counts(t_, kinds), o_.max_marker_kinds);
    out_.drawn_kinds = drawn.size();
    std::vector<std::string> drawn_kinds;  // only theirs are gathered (a trace can have a kind an instant)
    for (std::size_t k : drawn) drawn_kinds.push_back(std::move(kinds[k]));
    std::vector<Markers> all = markers_of_kinds(t_, drawn_kinds);
    std::vector<bool> as_lines;
    for (std::size_t d = 0; d < drawn.size(); ++d) {
      as_lines.push_back(median_gap_px(all[d]) >= kMarkerLineGapPx);
      if (!as_lines.back()) out_.tick_kinds.push_back(drawn_kinds[d]);
    }
    UnitPlanner planner(t_, UnitRequest{});  // closers' labels stand on the side of the unit they close
    std::vector<bool> closes;
    std::vector<int64_t> first_marker;  // a window's markers keep their source's numbers
    for (std::size_t d = 0; d < drawn.size(); ++d) {
      KindUnits plan = planner.plan(drawn_kinds[d], all[d]);
      closes.push_back(plan.rule.at == UnitAt::end);
      first_marker.push_back(plan.first_marker);
    }
    for (int spacing = 1;; spacing *= 2) {
      out_.markers.clear();
      for (std::size_t d = 0; d < drawn.size(); ++d)
        add_markers_of(drawn_kinds[d], all[d], first_marker[d], spacing, as_lines[d], closes[d]);
      out_.marker_spacing_px = spacing;
      if (out_.markers.size() * kMarkerBytes <= o_.max_svg_bytes / 2 || spacing >= o_.plot_width_px) break;
    }
  }

  /// The median gap in pixels between a kind's markers in the range (the plot's width
  /// when it has fewer than two there): how wide its units are drawn.
  double median_gap_px(const Markers& m) const {
    std::vector<double> gaps;
    double last = NAN;
    for (int64_t ts : m.ts) {
      if (ts < r_.lo || ts > r_.hi) continue;
      double x = x_of(ts);
      if (!std::isnan(last)) gaps.push_back(x - last);
      last = x;
    }
    if (gaps.empty()) return o_.plot_width_px;
    auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
    std::nth_element(gaps.begin(), mid, gaps.end());
    return *mid;
  }

  void add_markers_of(const std::string& kind, const Markers& m, int64_t first_marker, int spacing, bool line,
                      bool closes) {
    int last_px = INT_MIN;
    // A kind whose markers carry no arg (none, or all 0: a generic trace's instants) is
    // labelled by index, and so is a marker without one.
    bool has_args = std::any_of(m.arg.begin(), m.arg.end(), [](int64_t a) { return a != 0 && a != kNoArg; });
    for (std::size_t i = 0; i < m.ts.size(); ++i) {
      int64_t ts = m.ts[i];
      if (ts < r_.lo || ts > r_.hi) continue;
      int px = static_cast<int>(x_of(ts));
      if (last_px != INT_MIN && std::abs(px - last_px) < spacing) continue;
      last_px = px;
      int64_t index = first_marker + static_cast<int64_t>(i);
      int64_t arg = has_args && m.arg[i] != kNoArg ? m.arg[i] : index;
      out_.markers.push_back({kind, index, ts, line, arg, closes});
    }
  }

  const Trace& t_;
  const SpanIndex& index_;
  Range r_;
  TimelineOptions o_;
  JobqueNames names_;
  double length_ = 1;
  int scale_ = 1;  ///< pixels a run's bucket, and times the narrowest span drawn alone
  Timeline out_;
};

}  // namespace

std::string TimelineMarker::label() const {
  if (arg == index) return fmt::format("{} {}", kind, arg);
  return fmt::format("{} {} \u00b7 #{}", kind, arg, index);
}

void DrawnGroups::add(TimelineGroup g, std::size_t max_drawn) {
  if (others == 0 && groups.size() < max_drawn) {
    drawn_of.push_back(static_cast<uint32_t>(groups.size()));
    groups.push_back(std::move(g));
    return;
  }
  if (others++ == 0) groups.push_back({"", kOthersColor, 0.0});
  groups.back().name = fmt::format("{} others", others);
  drawn_of.push_back(static_cast<uint32_t>(groups.size() - 1));
}

DrawnGroups fold_groups(const std::vector<TimelineGroup>& groups, std::size_t max_drawn) {
  std::vector<double> shares;
  shares.reserve(groups.size());
  for (const TimelineGroup& g : groups) shares.push_back(g.share_pct);
  std::vector<std::size_t> kept = indices_of_largest(shares, max_drawn);
  DrawnGroups out;
  out.others = groups.size() - kept.size();
  out.drawn_of.assign(groups.size(), static_cast<uint32_t>(kept.size()));  // "others" unless kept
  for (std::size_t i = 0; i < kept.size(); ++i) {
    out.drawn_of[kept[i]] = static_cast<uint32_t>(i);
    out.groups.push_back(groups[kept[i]]);
  }
  if (out.others > 0) {
    double share = 0;
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (out.drawn_of[g] == kept.size()) share += groups[g].share_pct;
    out.groups.push_back({fmt::format("{} others", out.others), kOthersColor, share});
  }
  return out;
}

Timeline compute_timeline(const Trace& trace, const SpanIndex& index, Range range, const TimelineOptions& options) {
  PhaseClock clock("analysis", PhaseKind::scales);
  return TimelineBuilder(trace, index, range, options).build();
}

void shade_shared_colors(std::vector<TimelineGroup>& groups, const Trace& trace, GroupBy by) {
  std::vector<std::string> order;  // the trace's order of the groups
  if (by == GroupBy::category) {
    // By tag, the lower keeps the colour: the same shades in a profile trace and a legacy
    // one, whatever order the categories were met in.
    std::vector<std::pair<int64_t, std::string>> by_tag;  // each name's tag found once, not in every comparison
    for (const Category& c : trace.categories) by_tag.emplace_back(category_tag(c.name, trace.profile), c.name);
    std::stable_sort(by_tag.begin(), by_tag.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [tag, name] : by_tag) order.push_back(std::move(name));
  } else {
    for (const TimelineGroup& g : groups) order.push_back(g.name);
    std::sort(order.begin(), order.end());
  }
  std::unordered_map<std::string, std::string> color_of;
  for (const TimelineGroup& g : groups) color_of.emplace(g.name, g.color);
  std::unordered_map<std::string, int> seen;  // colour → groups of it met in order
  std::unordered_map<std::string, int> rank;  // group → its shade
  for (const std::string& name : order) {
    auto it = color_of.find(name);
    if (it == color_of.end() || it->second == kOthersColor || rank.count(name) != 0) continue;
    rank[name] = seen[lowercase(it->second)]++;
  }
  for (TimelineGroup& g : groups)
    if (auto it = rank.find(g.name); it != rank.end()) g.color = shade_of(g.color, it->second);
}

std::string shade_of(const std::string& color, int rank) {
  if (rank <= 0 || color.size() != 7 || color[0] != '#') return color;
  unsigned value = 0;
  if (std::sscanf(color.c_str() + 1, "%6x", &value) != 1) return color;
  // Rank 1 darker by 35%, rank 2 lighter by 48%, then 61% darker, 74% lighter...: far
  // enough apart that two bars side by side read as two colours, still of one family.
  double amount = std::min(0.9, 0.35 + 0.13 * (rank - 1));
  bool lighter = rank % 2 == 0;
  std::string out = "#";
  for (int shift : {16, 8, 0}) {
    double c = static_cast<double>((value >> shift) & 0xFF);
    c = lighter ? c + (255 - c) * amount : c * (1 - amount);
    out += fmt::format("{:02X}", static_cast<unsigned>(std::lround(c)));
  }
  return out;
}

std::string palette_color(std::string_view name) {
  // Twelve colours apart in hue and legible on white and on dark grey.
  static const char* const kPalette[] = {"#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#76B7B2", "#EDC948",
                                         "#B07AA1", "#FF9DA7", "#9C755F", "#BAB0AC", "#3B8EA5", "#D37295"};
  uint32_t h = 2166136261u;  // FNV-1a: the same name, the same colour, in every run
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return kPalette[h % (sizeof kPalette / sizeof kPalette[0])];
}

}  // namespace jqtrace
