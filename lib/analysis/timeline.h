#pragma once
// The timeline of a range: what a picture of it needs, as plain data (the SVG renderer in
// result/ draws it). One row per lane in the trace's lane order, spans coloured by group
// (category for jobque traces, cat or name for others), nested spans of generic traces on
// rows of their own by depth. Where spans are narrower than a pixel, a lane's row shows an
// overview per pixel column instead, as Perfetto's summary tracks do: the colour of the
// group with the most time in the column, its intensity how busy the column is; adjacent
// columns alike merge into runs, so the picture stays small whatever the range. Groups that
// share a colour (the profile gives attn chain and attn std one) get shades of it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scope.h"
#include "stats.h"
#include "trace.h"

namespace jqtrace {

struct TimelineOptions {
  GroupBy by = GroupBy::category;  ///< category (jobque), cat or name
  int plot_width_px = 1400;        ///< pixels the range maps onto
  /// Spans narrower than this many pixels are merged (a drawn span carries a tooltip).
  double min_span_px = 1.0;
  /// Lanes drawn at most: past it, those with the most span time in the range, in trace
  /// order (a trace of a million lanes made a 242 MB picture, 900 MB to build).
  std::size_t max_lanes = 512;
  /// What the SVG may take, about: past it spans narrower than 2, 4, 8... pixels are merged
  /// and runs snap to buckets as wide, until it fits (min_span_px is the first step).
  std::size_t max_svg_bytes = 1800000;
  /// Marker kinds drawn at most: those with the most markers (a trace without a profile
  /// has a kind per instant name).
  std::size_t max_marker_kinds = 16;
  unsigned threads = 1;  ///< lanes are laid out on this many threads (any count: same picture)
  /// (Tests.) How many of the groups stats measured (the first ones) are known before the
  /// lanes are laid out: a lane meeting a span of any other group stops part-way and is
  /// laid out again once every lane's groups are met, the path a group stats did not
  /// measure takes (no known input does).
  std::size_t known_groups = SIZE_MAX;
};

/// A span wide enough to draw on its own, with what its tooltip says.
struct TimelineSpan {
  int64_t ts = 0, dur = 0;  ///< ns, unclipped
  uint32_t group = 0;       ///< index into Timeline::groups
  uint32_t depth = 0;       ///< nesting depth on its lane (0 for jobque spans)
  bool waiting = false;     ///< stage_wait or wake: drawn as waiting, not work
  std::string name;
  std::string group_name;   ///< its own group's name when that is drawn among "N others"
  int64_t stage = 0, chain = 0;
  bool jobque = false;      ///< stage and chain mean something
};

/// Pixel columns [x0, x1) of a lane and depth where spans too narrow to draw alone are
/// summed up: group is the drawn group with the most of their working time in each column
/// (waiting counts only in columns without work: then waiting is set), busy_quarters how
/// much of each column's time they cover, in quarters rounded up (1 to 4).
struct TimelineRun {
  int x0 = 0, x1 = 0;
  uint32_t group = 0;
  uint32_t depth = 0;
  bool waiting = false;
  uint64_t spans = 0;       ///< how many narrow spans start in these columns (of any group)
  int64_t covered_ns = 0;   ///< their time inside the columns (of any group)
  int busy_quarters = 4;
};

struct TimelineLane {
  std::string label;        ///< "pid:tid"
  std::string name;         ///< thread_name
  /// When the lane stopped recording (its ring filled: SPEC §1.3); INT64_MAX when it did
  /// not. From there to the range's end it is not idle but not recorded.
  int64_t stopped_ns = INT64_MAX;
  uint32_t depths = 1;      ///< rows the lane needs
  std::vector<TimelineSpan> spans;
  /// A vector, not a deque: a deque's first block is 512 bytes, and a trace of a million
  /// one-span lanes paid it on every lane (0.5 GB). A lane's runs are few (a run a pixel
  /// per group and depth at most), so growing by copies costs little.
  std::vector<TimelineRun> runs;
};

struct TimelineGroup {
  std::string name;
  std::string color;        ///< "#RRGGBB": the profile's, the viewer's, or a stable palette's
  double share_pct = 0;     ///< of the range's busy time (stats' share)
  bool guessed = false;     ///< named by a chain's stage count: legends mark it "*" as tables do (marked_name)
};

struct TimelineMarker {
  std::string kind;
  int64_t index = 0;        ///< the marker's number within its kind
  int64_t ts = 0;
  /// A labelled line across the lanes when its kind's units are wide enough to label (the
  /// median gap between its markers in the range at least kMarkerLineGapPx), else a tick
  /// on the time axis.
  bool line = true;
  int64_t arg = 0;          ///< the program's own label (args.arg)
  bool closes = false;      ///< the kind's markers close their units: labelled left of the line
  /// "layer 9", or "layer 9 · #169" where the arg is not the index.
  std::string label() const;
};
constexpr double kMarkerLineGapPx = 60;

struct Timeline {
  Range range;
  int plot_width_px = 0;
  bool jobque = false;
  std::vector<TimelineLane> lanes;
  uint64_t trace_lanes = 0;             ///< every lane of the trace (more than lanes: not all drawn)
  int pixels_merged = 1;                ///< runs are buckets of this many pixels (1: as drawn)
  int layout_passes = 0;                ///< times the lanes were laid out to find that (work)
  std::vector<TimelineGroup> groups;     ///< at most kMaxDrawnGroups, then "N others"
  std::vector<TimelineMarker> markers;  ///< instants of the drawn kinds inside the range
  uint64_t trace_kinds = 0;             ///< marker kinds of the trace
  uint64_t drawn_kinds = 0;             ///< of them, those whose markers are drawn
  int marker_spacing_px = 1;            ///< a kind's lines are at least this far apart
  std::vector<std::string> tick_kinds;  ///< the drawn kinds whose markers are ticks, in order
};

/// A picture gives its own colour, legend entry and share-bar segment to at most this many
/// groups, those with the largest shares; the rest are drawn as one grey group, "N others"
/// (a trace with a million names made a 400 MB timeline: a legend entry and a class each).
constexpr std::size_t kMaxDrawnGroups = 24;
inline constexpr const char* kOthersColor = "#9ca3af";

struct DrawnGroups {
  std::vector<TimelineGroup> groups;  ///< the kept groups in their order, then "N others" if any
  std::vector<uint32_t> drawn_of;     ///< each group's index in groups
  std::size_t others = 0;             ///< groups folded into the last one

  /// Whether group g (an index into the groups folded) is drawn as "N others".
  bool folded(uint32_t g) const { return others > 0 && drawn_of[g] + 1 == groups.size(); }
  /// Draws one more group (one met after folding): on its own while there is room and
  /// nothing is folded yet, else as one more of "N others".
  void add(TimelineGroup g, std::size_t max_drawn = kMaxDrawnGroups);
};
/// The max_drawn groups with the largest shares (ties: the earlier) in their order, and
/// when there are more, one "N others" group with the rest's share.
DrawnGroups fold_groups(const std::vector<TimelineGroup>& groups, std::size_t max_drawn = kMaxDrawnGroups);

Timeline compute_timeline(const Trace& trace, const SpanIndex& index, Range range, const TimelineOptions& options);

/// Gives groups that share a colour shades of it, so that a picture tells them apart: of
/// the groups of one colour, the first in the trace's order (the profile's categories; by
/// name for cat and name groups) keeps it, the next ones get shades (see shade_of), the
/// same in every picture of the trace whatever the scope.
void shade_shared_colors(std::vector<TimelineGroup>& groups, const Trace& trace, GroupBy by);
/// The rank-th shade of "#RRGGBB" (rank 0: the colour itself): darker and lighter in turn,
/// further each time, each far enough from the others to tell apart on screen.
std::string shade_of(const std::string& color, int rank);

/// A stable colour for a group without one (generic traces): the same name always gets
/// the same one of a palette of distinct, legible colours.
std::string palette_color(std::string_view name);

}  // namespace jqtrace
