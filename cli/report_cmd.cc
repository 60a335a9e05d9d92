// jqtrace report FILE: load once (validating as it reads) → scope → stats, markers, gaps,
// timelines → one offline HTML page; gates as in stats.
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "common_fields.h"
#include "free_memory.h"
#include "gaps.h"
#include "gaps_schema.h"
#include "gate_metrics.h"
#include "gates.h"
#include "grouping.h"
#include "html.h"
#include "largest.h"
#include "latency.h"
#include "whatif.h"
#include "whatif_schema.h"
#include "latency_schema.h"
#include "load.h"
#include "markers.h"
#include "markers_schema.h"
#include "parallel.h"
#include "render.h"
#include "scope_options.h"
#include "stats_schema.h"
#include "svg.h"
#include "text_format.h"
#include "timeline.h"
#include "timings.h"
#include "unit_busy.h"
#include "validate.h"
#include "validate_schema.h"

namespace jqtrace::cli {
namespace {

struct ReportCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  GateOptions gates;
  std::string file;
};

/// What one load of the trace gives every section.
struct Analysis {
  const Trace* trace = nullptr;
  const SpanIndex* index = nullptr;  ///< built once: every section's range queries use it
  Scope scope;
  std::string file;
  RangeStats stats;
  std::vector<KindSummary> kinds;
  UnitRequest unit_at;                ///< --unit-at: the kinds' units are cut by it
  std::vector<TimelineGroup> groups;  ///< the stats groups with their colours, for charts
  /// Each group's colour in every chart: shared colours shaded apart (shade_shared_colors).
  std::unordered_map<std::string, std::string> color_of;
  unsigned threads = 1;               ///< -j

  /// A group's colour in the charts: as the picture draws it, else its own (a jobque
  /// category's), else the palette's for its name.
  std::string color(const GroupStats& g) const {
    if (auto it = color_of.find(g.name); it != color_of.end()) return it->second;
    return g.color.empty() ? palette_color(g.name) : g.color;
  }
};

using result::ReportSection;

/// The groups as the charts draw them: past kMaxDrawnGroups, the smallest are
/// folded into one grey "N others" (see fold_groups).
struct ChartGroups {
  DrawnGroups drawn;
  std::unordered_map<std::string, uint32_t> index_of;  ///< a group's name → its index among the groups folded
  explicit ChartGroups(const std::vector<TimelineGroup>& groups) : drawn(fold_groups(groups)) {
    for (std::size_t g = 0; g < groups.size(); ++g) index_of.emplace(groups[g].name, static_cast<uint32_t>(g));
  }
  bool folded(const std::string& name) const {
    auto it = index_of.find(name);
    return it != index_of.end() && drawn.folded(it->second);
  }
};

/// A unit's groups with the folded ones summed into one grey "N others" group, so its bar
/// and its table row have at most kMaxDrawnGroups + 1 parts (a unit of a trace with 5,000
/// categories made a 275 KB table row).
void fold_unit_groups(std::vector<GroupStats>& groups, const ChartGroups& charts) {
  if (charts.drawn.others == 0) return;
  std::vector<GroupStats> kept;
  GroupStats others;
  for (GroupStats& g : groups) {
    if (!charts.folded(g.name)) {
      kept.push_back(std::move(g));
      continue;
    }
    others.busy_ns += g.busy_ns;
    others.share_pct += g.share_pct;
    others.events += g.events;
  }
  if (others.events > 0 || others.busy_ns > 0) {
    others.name = charts.drawn.groups.back().name;
    others.color = kOthersColor;
    kept.push_back(std::move(others));
  }
  groups = std::move(kept);
}

/// A unit's groups from its busy time by category (what the busy walk gives): each with
/// its name, colour, busy time and share, as compute_stats would have them.
std::vector<GroupStats> category_groups(const std::vector<CategoryBusy>& busy, const Trace& trace) {
  std::vector<GroupStats> groups(busy.size());
  for (std::size_t i = 0; i < busy.size(); ++i) {
    const Category& category = trace.categories[busy[i].category];
    groups[i].name = category.name;
    groups[i].color = category.color;
    groups[i].busy_ns = busy[i].busy_ns;
    groups[i].share_pct = busy[i].share_pct;
  }
  return groups;
}

/// A unit's bar (its groups folded): its duration split by the shares of its groups, and a
/// tooltip listing each.
result::UnitBar unit_bar(const Analysis& a, const std::string& kind, const Unit& unit, bool labelled,
                         const std::vector<GroupStats>& groups) {
  result::UnitBar bar{unit.index, unit.range.length(), {}, {}};
  bar.tip = fmt::format("{}: {} us", unit_name(kind, unit, labelled), us_fixed(unit.range.length()));
  for (const GroupStats& g : groups) {
    if (g.share_pct <= 0) continue;
    bar.parts.push_back({a.color(g), g.share_pct});
    bar.tip += "\n" + g.name + " " + result::fixed(g.share_pct, 1) + "%";
  }
  return bar;
}

/// The lane table lists at most this many lanes: a trace of a million lanes made a 133 MB page.
constexpr std::size_t kMaxTableLanes = 512;
/// And at most this many categories (a generic trace's cat can take any number of values).
constexpr std::size_t kMaxTableGroups = 512;

/// Keeps the `keep` busiest lanes (ties: the earlier), in lane order.
void keep_busiest_lanes(std::vector<LaneStats>* lanes, std::size_t keep) {
  std::vector<int64_t> busy;
  busy.reserve(lanes->size());
  for (const LaneStats& lane : *lanes) busy.push_back(lane.busy_ns);
  std::vector<LaneStats> kept;
  for (std::size_t i : indices_of_largest(busy, keep)) kept.push_back(std::move((*lanes)[i]));
  *lanes = std::move(kept);
}

ReportSection summary_section(Analysis& a, const std::vector<GateResult>* gates) {
  result::StatsContext c;
  c.trace = a.trace;
  c.file = a.file;
  c.scope = a.scope;
  c.gates = gates;
  std::string categories = "every category", lanes = "every lane";
  bool cut = false;  // a table lists fewer than all
  if (a.stats.groups.size() > kMaxTableGroups) {  // sorted by busy time: the busiest first
    categories = fmt::format("the {} busiest of the {} categories", kMaxTableGroups, a.stats.groups.size());
    a.stats.groups.resize(kMaxTableGroups);
    cut = true;
  }
  if (a.stats.lanes_detail.size() > kMaxTableLanes) {
    lanes = fmt::format("the {} busiest of the {} lanes", kMaxTableLanes, a.stats.lanes_detail.size());
    keep_busiest_lanes(&a.stats.lanes_detail, kMaxTableLanes);
    cut = true;
  }
  std::string listed = cut ? categories + " and " + lanes + " (jqtrace stats lists all)" : "every category and lane";
  result::Document doc = result::stats_document(a.stats, c);
  for (auto& item : doc.items)  // the categories' rows: a swatch of each one's colour in the charts
    if (auto* t = std::get_if<result::Table>(&item); t && t->key == "groups") {
      t->colors.clear();
      for (const GroupStats& g : a.stats.groups) t->colors.push_back(a.color(g));
    }
  std::string body = result::share_bar_svg(a.groups, 1200) + result::swatch_legend_html(a.groups) +
                     result::render_html_fragment(doc);
  return {"summary", "Summary and category shares",
          doc.heading + ". The bar is each category's share of busy time; the tables give " + listed + ".", body};
}

/// What makes the report's numbers less than the whole truth, first on the page: a cut-off
/// file, lanes that stopped recording, units cut by a guess, names guessed from stage
/// counts. Empty when there is none of these.
std::vector<std::string> report_warnings(const Analysis& a) {
  std::vector<std::string> warnings;
  result::TraceFacts facts = result::trace_facts(*a.trace);
  if (facts.truncated)
    warnings.push_back(fmt::format("The file is cut off at byte {}: every number covers only the {} events before "
                                   "the cut (the caller lane, written last, may be missing).",
                                   facts.truncated_at_byte, a.trace->read.events));
  for (const result::TraceFacts::Stopped& s : facts.stopped)
    warnings.push_back(fmt::format("Lane {}{} stopped recording at {} us (its ring filled up): what it did after is in "
                                   "no number here.",
                                   s.lane, s.name.empty() ? "" : " '" + s.name + "'", us_text(s.stop_ns)));
  std::size_t ambiguous = 0;
  for (const KindSummary& k : a.kinds)
    if (k.rule.ambiguous && ++ambiguous <= 5)  // a trace can have a kind an instant: a few, then a count
      warnings.push_back(ambiguous_units_text(k.kind, k.rule) + ": its units are cut as starting at their markers.");
  if (ambiguous > 5)
    warnings.push_back(fmt::format("And {} more marker kinds whose units are ambiguous (jqtrace markers lists them).",
                                   ambiguous - 5));
  if (facts.attribution == Attribution::stage_count)
    warnings.push_back("The trace names no categories: chains are named by their stage count, as the old viewer "
                       "did (names marked * are guesses).");
  if (facts.profile_unused)
    warnings.push_back("The trace's jobqueProfile registers categories and marker kinds that no event uses (was "
                       "profiling off while it recorded?): its busy time is untagged or a reserved group.");
  if (facts.attribution == Attribution::unread_profile)
    warnings.push_back("The trace's jobqueProfile is larger than jqtrace reads: its categories are unknown, and "
                       "chains are named by their tags (tag N).");
  return warnings;
}

ReportSection warnings_section(const std::vector<std::string>& warnings) {
  std::string body = "<ul class=\"warnings\">";
  for (const std::string& w : warnings) body += "<li>" + result::xml_escape(w) + "</li>";
  return {"warnings", "Read this first", "", body + "</ul>\n"};
}

/// A chart has at most this many bars; a kind with more units shows the slowest of each
/// run of consecutive units (so a slow one is never hidden), and its table the slowest.
constexpr std::size_t kMaxBars = 600;
constexpr std::size_t kMaxTableUnits = 50;

/// The units a kind's chart draws: all, or the slowest of each of kMaxBars runs.
std::vector<Unit> chart_units(const std::vector<Unit>& units) {
  if (units.size() <= kMaxBars) return units;
  std::vector<Unit> picked;
  for (std::size_t b = 0; b < kMaxBars; ++b) {
    std::size_t lo = b * units.size() / kMaxBars, hi = (b + 1) * units.size() / kMaxBars;
    auto slowest = std::max_element(units.begin() + static_cast<std::ptrdiff_t>(lo), units.begin() + static_cast<std::ptrdiff_t>(hi),
                                    [](const Unit& x, const Unit& y) { return x.range.length() < y.range.length(); });
    picked.push_back(*slowest);
  }
  return picked;
}

/// The kMaxTableUnits slowest units, in unit order.
std::vector<Unit> slowest_units(std::vector<Unit> units) {
  if (units.size() <= kMaxTableUnits) return units;
  std::nth_element(units.begin(), units.begin() + kMaxTableUnits, units.end(),
                   [](const Unit& x, const Unit& y) { return x.range.length() > y.range.length(); });
  units.resize(kMaxTableUnits);
  std::sort(units.begin(), units.end(), [](const Unit& x, const Unit& y) { return x.index < y.index; });
  return units;
}

/// A kind's bars: from the busy walk when it ran (busy: this kind's units), else from the
/// charted units' range stats, which are left in *charted_rows for the table.
std::vector<result::UnitBar> kind_bars(const Analysis& a, const std::string& kind, const std::vector<Unit>& charted,
                                       const std::vector<std::vector<CategoryBusy>>* busy, const ChartGroups& charts,
                                       std::vector<UnitRow>* charted_rows) {
  if (!busy) *charted_rows = unit_rows_of(*a.trace, *a.index, charted, a.threads);
  std::vector<result::UnitBar> bars;
  bool labelled = units_have_args(charted);
  for (std::size_t u = 0; u < charted.size(); ++u) {
    std::vector<GroupStats> groups = busy ? category_groups((*busy)[u], *a.trace) : (*charted_rows)[u].stats.groups;
    fold_unit_groups(groups, charts);
    bars.push_back(unit_bar(a, kind, charted[u], labelled, groups));
  }
  return bars;
}

/// The rows of a kind's table: its slowest units'. When every unit's range stats were
/// measured for the chart they are among those rows (a kind of 25 units was measured twice
/// over the whole trace).
std::vector<UnitRow> table_rows(const Analysis& a, std::vector<Unit> slowest, std::size_t unit_count,
                                std::vector<UnitRow>& charted_rows) {
  if (charted_rows.size() != unit_count) return unit_rows_of(*a.trace, *a.index, std::move(slowest), a.threads);
  std::vector<UnitRow> rows;
  for (UnitRow& r : charted_rows)  // both in unit order
    if (rows.size() < slowest.size() && r.unit.index == slowest[rows.size()].index) rows.push_back(std::move(r));
  return rows;
}

/// The kinds' table lists at most kMaxTableKinds kinds, and at most kMaxChartedKinds get a
/// chart and a units' table: those with the most markers, in kind order. A trace without a
/// profile has a kind per instant name; 4,000 of them made a 2.9 GB page (every kind's
/// section repeated the table of all kinds).
constexpr std::size_t kMaxTableKinds = 512;
constexpr std::size_t kMaxChartedKinds = 16;

/// The `keep` kinds with the most markers (ties: the earlier kind), in kind order.
std::vector<KindSummary> most_marked_kinds(const std::vector<KindSummary>& kinds, std::size_t keep) {
  std::vector<uint64_t> counts;
  counts.reserve(kinds.size());
  for (const KindSummary& k : kinds) counts.push_back(k.count);
  std::vector<KindSummary> kept;
  for (std::size_t i : indices_of_largest(counts, keep)) kept.push_back(kinds[i]);
  return kept;
}

/// What the markers section leaves out of a trace with very many kinds.
std::string kinds_left_out(std::size_t listed, std::size_t charted, std::size_t all) {
  if (all <= charted) return "";
  std::string note = all > listed ? fmt::format("The table lists the {} kinds of {} with the most markers; ", listed, all)
                                  : std::string("The table lists every kind; ");
  return note + fmt::format("the {} with the most markers are charted (jqtrace markers lists all).", charted);
}

/// A kind's slowest units listed by duration, the slowest first, each against the p50.
constexpr std::size_t kListedSlowest = 10;
std::string slowest_list(const KindSummary& k, const std::vector<UnitRow>& rows) {
  std::vector<const Unit*> units;  // rows hold the slowest units (all of them when few)
  for (const UnitRow& r : rows) units.push_back(&r.unit);
  std::stable_sort(units.begin(), units.end(),
                   [](const Unit* x, const Unit* y) { return x->range.length() > y->range.length(); });
  if (units.size() > kListedSlowest) units.resize(kListedSlowest);
  std::string out = "<p>Slowest units of '" + result::xml_escape(k.kind) + "', by duration:</p><ol class=\"slowest\">";
  for (const Unit* u : units) {
    std::string against = k.unit.p50 > 0 ? fmt::format(", {:.2f}× the p50", static_cast<double>(u->range.length()) / k.unit.p50) : "";
    out += "<li>" + result::xml_escape(fmt::format("{} {}: {} us{}", k.kind, u->index, us_fixed(u->range.length()), against)) + "</li>";
  }
  return out + "</ol>\n";
}

/// For each marker kind: its units' durations stacked by category, and the units' table.
ReportSection markers_section(const Analysis& a) {
  std::string body;
  ChartGroups charts(a.groups);
  result::MarkersContext c;
  c.file = a.file;
  c.facts = result::trace_facts(*a.trace);
  std::vector<KindSummary> listed = most_marked_kinds(a.kinds, kMaxTableKinds);
  std::vector<KindSummary> charted_kinds = most_marked_kinds(listed, kMaxChartedKinds);
  body += result::render_html_fragment(result::markers_document(listed, {}, c));
  if (std::string note = kinds_left_out(listed.size(), charted_kinds.size(), a.kinds.size()); !note.empty())
    body += "<p>" + result::xml_escape(note) + "</p>\n";
  // Every charted kind's bars from one walk over the spans (jobque traces), else from each
  // kind's range stats. Only the units drawn and tabled are kept: all of 16 kinds' units at
  // once could be a sizeable part of the trace.
  std::vector<std::vector<Unit>> charted_of_kind, slowest_of_kind;
  std::vector<std::size_t> units_in_kind;
  for (const KindSummary& k : charted_kinds) {
    std::vector<Unit> units = k.count ? units_of(*a.trace, k.kind, a.unit_at) : std::vector<Unit>{};
    units_in_kind.push_back(units.size());
    charted_of_kind.push_back(chart_units(units));
    slowest_of_kind.push_back(slowest_units(std::move(units)));
  }
  std::optional<UnitsBusy> busy = busy_by_category_of_units(*a.trace, *a.index, charted_of_kind, a.threads);
  for (std::size_t kind = 0; kind < charted_kinds.size(); ++kind) {
    const KindSummary& k = charted_kinds[kind];
    if (k.count == 0) continue;
    std::size_t unit_count = units_in_kind[kind];
    const std::vector<Unit>& charted = charted_of_kind[kind];
    std::vector<UnitRow> charted_rows;
    std::vector<result::UnitBar> bars =
        kind_bars(a, k.kind, charted, busy ? &(*busy)[kind] : nullptr, charts, &charted_rows);
    std::vector<UnitRow> rows = table_rows(a, std::move(slowest_of_kind[kind]), unit_count, charted_rows);
    std::string what = unit_count > kMaxBars ? fmt::format(", the slowest of each {} in a bar", (unit_count + kMaxBars - 1) / kMaxBars) : "";
    body += "<h3>" + result::xml_escape(fmt::format("{}: {} units ({}){}", k.kind, unit_count, result::unit_rule_text(k.rule), what)) + "</h3>\n";
    body += result::unit_bars_svg(bars, k.unit.p50, k.unit.p90, 1200, k.kind);
    body += slowest_list(k, rows);
    for (UnitRow& r : rows) fold_unit_groups(r.stats.groups, charts);
    if (unit_count > kMaxTableUnits)
      body += result::xml_escape(fmt::format("The {} slowest units (jqtrace markers --kind {} lists all {}):", kMaxTableUnits, k.kind, unit_count));
    c.kind = k.kind;
    c.categories.clear();
    if (a.trace->jobque)
      for (const Category& cat : a.trace->categories) c.categories.push_back(cat.name);
    result::Document table = result::markers_document({k}, rows, c);
    for (auto& item : table.items)  // the kinds' table is above already
      if (auto* t = std::get_if<result::Table>(&item); t && t->key == "unit_duration") t->in_text = false;
    body += result::render_html_fragment(table);
  }
  return {"markers", "Marker units",
          "Each bar is one unit's duration, split by the share of each category in its busy time; the dashed lines "
          "are the kind's p50 and p90.",
          body};
}

ReportSection gaps_section(const Trace& trace, const Scope& scope, const std::string& file, unsigned threads) {
  GapsOptions options;
  options.threads = threads;
  GapsReport report;
  std::string error;
  if (!trace.jobque || !compute_gaps(trace, scope.range, options, &report, &error))
    return {"gaps", "Chains, stages and publishes", "", "<p>Not a jobque trace: no chains to measure.</p>\n"};
  return {"gaps", "Chains, stages and publishes",
          "Per chain class its wall time and publish, per stage its span and effective parallelism, the stage "
          "tails, fat publishes and each lane's idle gaps (as jqtrace gaps).",
          result::render_html_fragment(result::gaps_document(report, file, scope, options.quantiles, result::trace_facts(trace)))};
}

/// The kind whose units the latency section charts: summary_unit_kind's pick (the what-if
/// section's), from the summaries already made; nullptr when no kind has markers.
const KindSummary* latency_kind(const std::vector<KindSummary>& kinds) {
  std::vector<SummaryKindCandidate> candidates;
  for (const KindSummary& k : kinds) candidates.push_back({k.count, k.rule.ambiguous});
  std::size_t best = pick_summary_kind(candidates);
  return best == SIZE_MAX ? nullptr : &kinds[best];
}

/// A unit's latency bar: its duration split by class.
result::UnitBar latency_bar(const std::string& kind, const Unit& unit, bool labelled, const LatencyParts& p) {
  result::UnitBar bar{unit.index, unit.range.length(), {}, {}};
  bar.tip = fmt::format("{}: {} us", unit_name(kind, unit, labelled), us_fixed(unit.range.length()));
  for (std::size_t k = 0; k < kLatencyClasses; ++k) {
    auto c = static_cast<LatencyClass>(k);
    int64_t ns = p.of_class(c);
    if (ns <= 0 || unit.range.length() <= 0) continue;
    double pct = 100.0 * static_cast<double>(ns) / static_cast<double>(unit.range.length());
    bar.parts.push_back({result::latency_class_color(c), pct});
    bar.tip += fmt::format("\n{} {}%", latency_class_name(c), result::fixed(pct, 1));
  }
  return bar;
}

/// The classes' colours and shares of the scope, as a legend.
/// The legend of the bars drawn: each class's share of the drawn units' time (the scope's
/// shares sat under bars that had none of it: "not recorded 90.0%" under three units).
std::vector<TimelineGroup> latency_legend(const std::vector<LatencyParts>& drawn) {
  int64_t total = 0;
  std::vector<int64_t> by_class(kLatencyClasses, 0);
  for (const LatencyParts& p : drawn) {
    total += p.range.length();
    for (std::size_t k = 0; k < kLatencyClasses; ++k) by_class[k] += p.of_class(static_cast<LatencyClass>(k));
  }
  std::vector<TimelineGroup> legend;
  for (std::size_t k = 0; k < kLatencyClasses; ++k) {
    auto c = static_cast<LatencyClass>(k);
    if (by_class[k] > 0 && total > 0)
      legend.push_back({latency_class_name(c), result::latency_class_color(c),
                        100.0 * static_cast<double>(by_class[k]) / static_cast<double>(total), false});
  }
  return legend;
}

/// Where the marker lane's time went (jqtrace latency): a bar a unit of the coarsest kind,
/// split by class; the slowest unit's parts and longest waits; the scope's classes and waits.
ReportSection latency_section(const Analysis& a) {
  const char* heading = "Latency: where the marker lane's time went";
  const char* intro =
      "The time of the lane that holds the markers (a jobque trace's caller), which is what a unit's duration is "
      "made of: its own work, its publishes, waiting while another lane's chunk still ran (imbalance), waiting "
      "after the last chunk ended (wake-up), and time in no event (outside), as jqtrace latency.";
  const Trace& trace = *a.trace;
  const KindSummary* kind = latency_kind(a.kinds);
  std::size_t lane = latency_lane(trace, kind ? kind->kind : "");
  if (lane == SIZE_MAX) return {"latency", heading, intro, "<p>No lane holds markers: nothing to measure.</p>\n"};
  LatencyAnalysis analysis(trace, *a.index, lane, a.scope.range);
  result::LatencyContext c;
  c.trace = &trace;
  c.analysis = &analysis;
  c.file = a.file;
  c.facts = result::trace_facts(trace);
  std::string body;
  std::vector<Unit> units;
  if (kind)
    for (const Unit& u : units_of(trace, kind->kind, a.unit_at))
      if (a.scope.range.holds(u.range)) units.push_back(u);
  LatencyParts scope_parts = analysis.measure(a.scope.range, 10);
  if (!units.empty()) {
    std::vector<result::UnitBar> bars;
    std::vector<LatencyParts> drawn;
    bool labelled = units_have_args(units);
    for (const Unit& u : chart_units(units)) {
      drawn.push_back(analysis.measure(u.range, 0));
      bars.push_back(latency_bar(kind->kind, u, labelled, drawn.back()));
    }
    body += "<h3>" + result::xml_escape(fmt::format("Each unit of '{}' by class ({} units)", kind->kind, units.size())) + "</h3>\n";
    body += result::unit_bars_svg(bars, kind->unit.p50, kind->unit.p90, 1200, kind->kind);
    body += result::swatch_legend_html(latency_legend(drawn));
    const Unit& slowest = *std::max_element(units.begin(), units.end(), [](const Unit& x, const Unit& y) {
      return x.range.length() < y.range.length();  // ties: the earlier
    });
    c.scope.kind = ScopeRequest::Kind::marker;
    c.scope.range = slowest.range;
    c.scope.rule = kind->rule;
    c.scope.marker_kind = kind->kind;
    c.scope.label = fmt::format("--marker {} {}", kind->kind, slowest.index);
    body += "<h3>" + result::xml_escape(fmt::format("The slowest {}: {} us", unit_name(kind->kind, slowest, labelled),
                                                     us_fixed(slowest.range.length()))) + "</h3>\n";
    body += result::render_html_fragment(result::latency_document(analysis.measure(slowest.range, 10), c));
  }
  c.scope = a.scope;
  result::Document whole = result::latency_document(scope_parts, c);
  for (auto& item : whole.items)  // the scope's classes and waits; its rows are the slowest unit's story above
    if (auto* t = std::get_if<result::Table>(&item); t && t->key == "rows" && !units.empty()) t->in_text = false;
  body += "<h3>" + result::xml_escape("The scope: " + a.scope.label) + "</h3>\n";
  body += result::render_html_fragment(whole);
  return {"latency", heading, intro, body};
}

/// What a change would buy (jqtrace whatif --rank): saving against speedup, a line per
/// thing made cheaper (the lines of the largest savings), and the rank's table.
ReportSection whatif_section(const Analysis& a) {
  const char* heading = "What would it buy: the causal profile";
  const char* intro =
      "Each group's chunks, every publish, every wake-up and the stages' imbalance made 25, 50 and 100% cheaper in "
      "turn, the trace's own dependency graph replayed each time (jqtrace whatif --rank): the predicted saving of "
      "the whole trace and of its median unit, largest first. A group's work is its chunks up to 3 times its "
      "stage's median; the rest was preemption and stays.";
  const Trace& trace = *a.trace;
  if (!trace.jobque) return {"whatif", heading, intro, "<p>Not a jobque trace: no chains to replay.</p>\n"};
  constexpr double kWorkCap = 3;
  ReplayGraph graph(trace, kWorkCap);
  // The kind `jqtrace whatif --rank` measures too, so that both say the same.
  WhatIfRank rank = what_if_rank(graph, a.unit_at, summary_unit_kind(trace, a.unit_at), a.threads);
  // The lines: every thing in the order of its largest saving, at most eight.
  constexpr std::size_t kLines = 8;
  std::vector<result::RankLine> lines;
  for (const RankRow& row : rank.rows) {
    auto line = std::find_if(lines.begin(), lines.end(), [&](const result::RankLine& l) { return l.name == row.group; });
    if (line == lines.end()) {
      if (lines.size() == kLines) continue;
      // A group in the colour every other chart of the report gives it; the three costs
      // that are no group's in colours of their own.
      auto group = std::find_if(a.stats.groups.begin(), a.stats.groups.end(),
                                [&](const GroupStats& g) { return g.name == row.group; });
      std::string color = row.group == "publish" ? "#7f7f7f" : row.group == "wake-up" ? "#c9a227"
                          : row.group == "imbalance"          ? "#d9534f"
                          : group != a.stats.groups.end()     ? a.color(*group)
                                                              : palette_color(row.group);
      if (group == a.stats.groups.end())  // a group outside the report's scope: its profile colour
        for (const Category& c : trace.categories)
          if (c.name == row.group && !c.color.empty()) color = c.color;
      line = lines.insert(lines.end(), {row.group, color, {}});
    }
    line->points.emplace_back(row.speedup_pct, result::percent_of(row.saving_ns, rank.measured_ns));
  }
  for (result::RankLine& l : lines) std::sort(l.points.begin(), l.points.end());
  result::WhatIfContext c;
  c.file = a.file;
  c.facts = result::trace_facts(trace);
  c.work_cap = kWorkCap;
  std::string body = "<h3>Predicted saving of the trace against how much cheaper each thing is</h3>\n";
  body += result::rank_chart_svg(lines, 1000);
  if (a.scope.kind != ScopeRequest::Kind::whole)
    body += "<p>The rank replays the whole trace, not the report's scope.</p>\n";
  body += result::render_html_fragment(result::whatif_rank_document(rank, graph.anomalies(), c));
  return {"whatif", heading, intro, body};
}

/// At most this many problems are listed (every one is counted).
class FirstProblems final : public DiagnosticSink {
 public:
  std::vector<Diagnostic> kept;
  uint64_t omitted = 0;
  void report(Diagnostic d) override {
    if (kept.size() < 100) kept.push_back(std::move(d));
    else ++omitted;
  }
};

/// The validation of the file: what rode along the load, else (stdin, or a broken trace
/// whose parts' checks could not be joined) a pass of its own.
ReportSection validate_section(const ReportCommandOptions& o, const std::shared_ptr<Input>& input,
                               const std::string& file, ValidationTee& along, Trace& trace) {
  const char* title = "Validation";
  if (!input->regular())
    return {"validate", title, "",
            fmt::format("<p>Read from {}: not validated (run jqtrace validate on the file).</p>\n",
                        input->is_stdin() ? "standard input" : "a stream")};
  FirstProblems problems;
  result::ValidatedFile f;
  f.file = file;
  if (along.exact()) {
    auto locator = Source::open(*input);  // positions of what was found
    f.result = along.conclude(problems, *locator, trace.read, trace.names);
  } else {
    ParallelRead parallel = parallel_read(*input, o.common);
    if (!parallel.threads ||
        !validate_trace_parallel(input, parallel.threads, problems, {}, parallel.min_part_bytes, &f.result)) {
      problems = FirstProblems{};
      auto source = open_input(*input, o.common);
      if (!source) return {"validate", title, "", "<p>Could not read the file again to validate it.</p>\n"};
      f.result = validate_trace(*source, problems);
    }
  }
  f.kept = std::move(problems.kept);
  f.omitted = problems.omitted;
  f.valid = f.result.readable && f.result.errors == 0;
  std::string verdict = fmt::format("<p class=\"{}\">{}: {} ({} errors, {} warnings)</p>\n",
                                    f.valid ? "verdict-ok" : "verdict-bad", result::xml_escape(file),
                                    f.valid ? "valid" : "invalid", f.result.errors, f.result.warnings);
  return {"validate", title, "Every rule of jqtrace validate, with the count of each rule that fired.",
          verdict + result::render_html_fragment(result::validate_document({f}, f.valid))};
}

/// The timelines section draws the slowest and the median unit of at most this many kinds,
/// those with the most markers (each picture is up to ~2 MB).
constexpr std::size_t kMaxTimelineKinds = 4;

/// The slowest and the median unit of each marker kind (pick_unit's, as --marker KIND
/// slowest and median cut them), as timelines, each picture with its own colours.
ReportSection timelines_section(const Analysis& a) {
  std::vector<uint64_t> counts;  // indices, not copies: a trace can have a kind an instant
  counts.reserve(a.kinds.size());
  for (const KindSummary& k : a.kinds) counts.push_back(k.count);
  std::size_t with_units = a.kinds.size() - static_cast<std::size_t>(std::count(counts.begin(), counts.end(), 0));
  if (with_units == 0)
    return {"timelines", "Timelines", "", "<p>No marker units: nothing to pick a slowest unit from.</p>\n"};
  std::vector<const KindSummary*> drawn;
  for (std::size_t k : indices_of_largest(counts, kMaxTimelineKinds))
    if (counts[k] > 0) drawn.push_back(&a.kinds[k]);
  result::SvgLayout layout;
  TimelineOptions options;
  options.by = a.stats.by == GroupBy::name ? GroupBy::name : a.trace->jobque ? GroupBy::category : GroupBy::cat;
  options.plot_width_px = layout.plot_width();
  options.threads = a.threads;
  std::string body;
  if (drawn.size() < with_units)
    body += "<p>" + result::xml_escape(fmt::format("The {} kinds of {} with the most markers.", drawn.size(), with_units)) + "</p>\n";
  for (std::size_t k = 0; k < drawn.size(); ++k) {
    const KindSummary& kind = *drawn[k];
    std::vector<Unit> units = units_of(*a.trace, kind.kind, a.unit_at);
    if (units.empty()) continue;
    body += "<h3>" + result::xml_escape(fmt::format("{} ({})", kind.kind, result::unit_rule_text(kind.rule))) + "</h3>\n";
    bool labelled = units_have_args(units);
    std::size_t drawn_unit = SIZE_MAX;
    for (const char* pick : {"slowest", "median"}) {
      std::size_t u = pick_unit(units, pick);
      if (u == drawn_unit) continue;  // one unit: both picks are it
      drawn_unit = u;
      const Unit& unit = units[u];
      Timeline t = compute_timeline(*a.trace, *a.index, unit.range, options);
      std::string title = fmt::format("{} {} ({} us; --marker {} {})", pick, unit_name(kind.kind, unit, labelled),
                                      us_fixed(unit.range.length()), kind.kind, pick);
      layout.id = fmt::format("timeline-{}-{}", k, pick);  // each picture keeps its own colours in the page
      body += result::render_timeline_svg(t, title, layout);
    }
  }
  return {"timelines", "Timelines of the slowest and the median unit",
          "For each marker kind, its slowest unit and its median one (by duration, as --marker KIND slowest and "
          "median cut them), drawn as jqtrace timeline draws them.",
          body};
}

ReportSection gates_section(const std::vector<GateResult>& results) {
  result::Document doc;
  doc.add(result::gates_table(results));  // the section's heading names it: no title in the list
  return {"gates", "Gates", "Each gate trips when its expression holds; a tripped gate fails the run (exit 1).",
          result::render_html_fragment(doc)};
}

int run_report(const ReportCommandOptions& o) {
  if (!check_output_format(o.common, "report")) return kUsage;
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, o.common.output, &gates)) return kUsage;
  Trace& trace = trace_for_process();
  ValidationTee validation;  // the validate section's checks, made as the file is read
  auto input = open_trace(o.file);
  if (!input) return kInput;
  LoadOptions load;
  if (input->regular()) load.tee = &validation;  // a stream cannot be read again for the positions
  load.release_freed = false;
  if (int status = load_for_analysis(input, o.common, &trace, load)) return status;
  Analysis a;
  a.trace = &trace;
  a.file = display_name(o.file);
  // First: it frees what the validation kept while the file was read (8 MB of a 200 MB trace).
  ReportSection validated = validate_section(o, input, a.file, validation, trace);
  if (!resolve_scope_options(o.scope, trace, o.common, &a.scope)) return kUsage;
  StatsOptions stats;
  choose_grouping("", trace, &stats.by);
  stats.threads = worker_threads(o.common);
  a.threads = stats.threads;
  // gaps first, then the rest: gaps' working memory is most of what any section adds to
  // the model, and measured beside the others it came on top of theirs. On several threads
  // the memory freed before and after it is handed back too, or it stays in the arenas of
  // threads that no longer need it (report -j 2 of the 200 MB bench traces: peak 0.29-0.31
  // of the file -> 0.26, same time). One thread reuses its own.
  auto hand_back_freed = [&] {
    if (a.threads > 1) release_free_memory();
  };
  hand_back_freed();
  ReportSection gaps = gaps_section(trace, a.scope, a.file, a.threads);
  hand_back_freed();
  SpanIndex index(trace, a.threads);
  a.index = &index;
  a.stats = compute_stats(trace, index, a.scope.range, stats);
  hand_back_freed();  // the stats' samples, made on both threads, before the markers' walks
  for (const GroupStats& g : a.stats.groups)
    a.groups.push_back({g.name, a.color(g), g.share_pct, g.guessed});
  shade_shared_colors(a.groups, trace, stats.by);
  for (const TimelineGroup& g : a.groups) a.color_of.emplace(g.name, g.color);
  a.unit_at = unit_at_request(o.scope.unit_at);
  a.kinds = summarize_kinds(trace, a.unit_at, stats.quantiles);
  warn_ambiguous_kinds(a.kinds, o.common);
  std::vector<GateResult> results;
  bool cut_off = !gates.empty() && !complete_enough_to_check(trace, o.file, o.gates);
  if (!gates.empty() && !cut_off && !scope_checkable(a.scope, o.file)) return kUsage;
  if (!gates.empty() && !cut_off && !evaluate_gates(gates, stats_metrics(a.stats, a.kinds), &results)) return kUsage;
  if (int status = write_junit(o.gates, "report", gates, cut_off ? nullptr : &results))
    return status;

  std::vector<ReportSection> sections;
  if (std::vector<std::string> warnings = report_warnings(a); !warnings.empty())
    sections.push_back(warnings_section(warnings));
  sections.push_back(summary_section(a, nullptr));
  if (!results.empty()) sections.push_back(gates_section(results));
  sections.push_back(latency_section(a));  // first in line: why a unit took its time
  sections.push_back(whatif_section(a));   // then what making something cheaper would buy
  sections.push_back(markers_section(a));
  ReportSection timelines = timelines_section(a);
  sections.push_back(std::move(gaps));
  sections.push_back(std::move(validated));
  sections.push_back(std::move(timelines));
  PhaseClock clock("render", PhaseKind::serial);
  std::string html = result::render_report_html("jqtrace report: " + a.file, sections);
  int status = kInput;
  auto out = Output::open(o.common, &status);
  if (!out) return status;  // cannot write, or -o names an input
  std::fwrite(html.data(), 1, html.size(), out->file());
  if (!out->close()) return out->failure_status();
  return cut_off || any_tripped(results) ? kCheckFailed : kOk;
}

}  // namespace

void setup_report(CLI::App& app) {
  auto opts = std::make_shared<ReportCommandOptions>();
  CLI::App* cmd = app.add_subcommand("report", "One offline HTML page: shares, units, lanes, gaps, validation, timelines");
  add_common_options(*cmd, opts->common, {Format::html});
  add_index_options(*cmd, opts->common, false);
  add_scope_options(*cmd, opts->scope);
  add_gate_options(*cmd, opts->gates);
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace report trace.json.gz -o report.html\n  jqtrace report --marker token 8..15 --gate-file ci/gates.txt trace.json -o report.html");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "report")) throw CommandDone{kUsage};
    throw CommandDone{run_report(*opts)};
  });
}

}  // namespace jqtrace::cli
