#include "timeline.h"

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "svg.h"
#include "test_util.h"

namespace jqtrace {
namespace {

Timeline timeline_of(const std::string& json, Range range, int width, GroupBy by = GroupBy::category,
                     std::size_t max_lanes = TimelineOptions{}.max_lanes,
                     std::size_t max_svg_bytes = TimelineOptions{}.max_svg_bytes, unsigned threads = 1,
                     std::size_t known_groups = SIZE_MAX) {
  static std::vector<std::unique_ptr<Trace>> keep;  // the timeline refers to nothing, but keep traces alive anyway
  keep.push_back(std::make_unique<Trace>());
  test::load_string(json, keep.back().get());
  SpanIndex index(*keep.back());
  TimelineOptions options;
  options.by = by;
  options.plot_width_px = width;
  options.max_lanes = max_lanes;
  options.max_svg_bytes = max_svg_bytes;
  options.threads = threads;
  options.known_groups = known_groups;
  return compute_timeline(*keep.back(), index, range, options);
}

}  // namespace

TEST_CASE("timeline: a row per lane, wide spans drawn with what their tooltip says, groups with shares") {
  std::string json = test::trace_of(
      {R"({"ph":"X","name":"publish","pid":0,"tid":1,"ts":0,"dur":10,"args":{"stage":257,"arg":1,"chain":7}})",  // tag 1: attn chain
       R"({"ph":"X","name":"chunk","pid":0,"tid":0,"ts":10,"dur":80,"args":{"stage":0,"arg":0,"chain":7}})",
       R"({"ph":"X","name":"stage_wait","pid":0,"tid":1,"ts":10,"dur":50,"args":{"stage":0,"arg":0,"chain":7}})",
       R"({"ph":"i","name":"token","pid":0,"tid":0,"ts":50,"s":"g"})"},
      test::kProfile);
  Timeline t = timeline_of(json, {0, 100000}, 1000);
  REQUIRE(t.lanes.size() == 2);
  CHECK(t.jobque);
  // Lanes in the trace's order: first seen first (the caller's publish came first here).
  REQUIRE(t.lanes[0].label == "0:1");
  const TimelineLane& worker = t.lanes[1];
  REQUIRE(worker.spans.size() == 1);
  CHECK(worker.spans[0].name == "chunk");
  CHECK(worker.spans[0].chain == 7);
  CHECK(t.groups[worker.spans[0].group].name == "attn chain");
  CHECK(t.groups[worker.spans[0].group].share_pct == doctest::Approx(100.0 * 90 / 90));
  const TimelineLane& caller = t.lanes[0];
  REQUIRE(caller.spans.size() == 2);
  CHECK(caller.spans[1].waiting);  // stage_wait reads as waiting
  REQUIRE(t.markers.size() == 1);
  CHECK(t.markers[0].kind == "token");
  CHECK(t.markers[0].ts == 50000);
}

TEST_CASE("timeline: spans narrower than a pixel merge into runs, per group, a lane has at most a run a pixel") {
  std::vector<std::string> events;
  for (int i = 0; i < 1000; ++i)  // 1000 spans of 1 us, 1 us apart, on 10 pixels
    events.push_back(R"({"ph":"X","name":"a","cat":"c","pid":0,"tid":0,"ts":)" + std::to_string(2 * i) + R"(,"dur":1})");
  Timeline t = timeline_of(test::trace_of(events), {0, 2000000}, 10, GroupBy::cat);
  REQUIRE(t.lanes.size() == 1);
  CHECK(t.lanes[0].spans.empty());
  uint64_t merged = 0;
  for (const TimelineRun& r : t.lanes[0].runs) {
    merged += r.spans;
    CHECK(r.x0 < r.x1);
    CHECK(r.x1 <= 10);
  }
  CHECK(merged == 1000);
  CHECK(t.lanes[0].runs.size() <= 10);
}

TEST_CASE("timeline: nested spans of generic traces take rows by depth, deep nesting is capped") {
  std::vector<std::string> events;
  for (int d = 0; d < 40; ++d)  // 40 spans, each inside the one before
    events.push_back(R"({"ph":"X","name":"n","pid":0,"tid":0,"ts":)" + std::to_string(d) + R"(,"dur":)" +
                     std::to_string(1000 - 2 * d) + "}");
  Timeline t = timeline_of(test::trace_of(events), {0, 1000000}, 1000, GroupBy::name);
  REQUIRE(t.lanes.size() == 1);
  CHECK(t.lanes[0].depths == 16);
  CHECK(t.lanes[0].spans.front().depth == 0);
  CHECK(t.lanes[0].spans[1].depth == 1);
  CHECK(t.lanes[0].spans.back().depth == 15);
}

TEST_CASE("timeline: a range with nothing in it has its lanes and no spans, a stable palette for generic groups") {
  std::string json = test::trace_of({R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":1})",
                                     R"({"ph":"X","name":"b","pid":0,"tid":0,"ts":100,"dur":1})"});
  Timeline t = timeline_of(json, {20000, 30000}, 500, GroupBy::name);
  REQUIRE(t.lanes.size() == 1);
  CHECK(t.lanes[0].spans.empty());
  CHECK(t.lanes[0].runs.empty());
  CHECK(palette_color("RunTask") == palette_color("RunTask"));
  CHECK(palette_color("RunTask").size() == 7);
}

TEST_CASE("timeline: past max_lanes, the lanes with the most span time in the range, in trace order, and a note") {
  // Lane k has one span of (k * 37 % 11 + 1) us; a tie goes to the earlier lane.
  std::vector<std::string> events;
  for (int k = 0; k < 11; ++k)
    events.push_back(R"({"ph":"X","name":"x","pid":1,"tid":)" + std::to_string(k) + R"(,"ts":0,"dur":)" +
                     std::to_string(k * 37 % 11 + 1) + "}");
  events.push_back(R"({"ph":"X","name":"x","pid":1,"tid":11,"ts":500,"dur":100})");  // the longest, outside the range
  Timeline t = timeline_of(test::trace_of(events), {0, 20000}, 800, GroupBy::name, 3);
  CHECK(t.trace_lanes == 12);
  REQUIRE(t.lanes.size() == 3);
  // Durations by lane: 1 5 9 2 6 10 3 7 11 4 8 (us): lanes 2, 5 and 8.
  CHECK(t.lanes[0].label == "1:2");
  CHECK(t.lanes[1].label == "1:5");
  CHECK(t.lanes[2].label == "1:8");
  std::string svg = result::render_timeline_svg(t, "t", {});
  CHECK(svg.find("3 of 12 lanes drawn") != std::string::npos);
  Timeline all = timeline_of(test::trace_of(events), {0, 20000}, 800, GroupBy::name, 12);
  CHECK(all.lanes.size() == 12);
  CHECK(result::render_timeline_svg(all, "t", {}).find("lanes drawn") == std::string::npos);
}

TEST_CASE("timeline: past its byte budget, runs snap to wider buckets and wider spans merge, and the picture says so") {
  // Two lanes; per pixel (1 us at 100 px over 100 us) a span of group a, then of b,
  // alternating: a run a pixel per group, the worst case of the merger. And one span of
  // 1.5 px, drawn alone at first.
  std::vector<std::string> events;
  for (int lane = 0; lane < 2; ++lane)
    for (int k = 0; k < 100; ++k)
      events.push_back(R"({"ph":"X","pid":1,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(k) +
                       R"(,"dur":0.4,"name":")" + (k % 2 ? "b" : "a") + "\"}");
  events.push_back(R"({"ph":"X","pid":1,"tid":0,"ts":50.2,"dur":1.5,"name":"wide"})");
  Range r{0, 100000};
  Timeline loose = timeline_of(test::trace_of(events), r, 100, GroupBy::name);
  CHECK(loose.pixels_merged == 1);
  REQUIRE(loose.lanes.size() == 2);
  CHECK(loose.lanes[1].runs.size() == 100);  // a run a pixel
  CHECK(loose.lanes[0].spans.size() == 1);
  Timeline tight = timeline_of(test::trace_of(events), r, 100, GroupBy::name, 512, 3000);
  CHECK(tight.pixels_merged >= 2);
  CHECK(tight.lanes[1].runs.size() <= 4);    // buckets of 2 px: each group's runs touch and merge
  CHECK(tight.lanes[0].spans.empty());       // 1.5 px is under 2
  uint64_t spans = 0;
  int64_t covered = 0;
  for (const TimelineRun& run : tight.lanes[1].runs) spans += run.spans, covered += run.covered_ns;
  CHECK(spans == 100);                       // nothing lost: every span is in a run
  CHECK(covered == 100 * 400);
  std::string svg = result::render_timeline_svg(tight, "t", {});
  CHECK(svg.find("summed up by columns of") != std::string::npos);
  CHECK(result::render_timeline_svg(loose, "t", {}).find("summed up by columns of") == std::string::npos);

  // Four groups in turn: a group's runs are four pixels apart, so 2-pixel buckets save
  // nothing and 4-pixel ones merge them (a builder that stopped when a doubling saved
  // nothing kept 100 runs a lane).
  std::vector<std::string> four;
  for (int k = 0; k < 100; ++k)
    four.push_back(R"({"ph":"X","pid":1,"tid":0,"ts":)" + std::to_string(k) + R"(,"dur":0.4,"name":"g)" +
                   std::to_string(k % 4) + "\"}");
  Timeline merged = timeline_of(test::trace_of(four), r, 100, GroupBy::name, 512, 1000);
  CHECK(merged.pixels_merged >= 4);
  REQUIRE(merged.lanes.size() == 1);
  CHECK(merged.lanes[0].runs.size() <= 4);
}

TEST_CASE("timeline: spans too many to draw alone at any small scale are laid out at most three times") {
  // 3,000 spans nested on one lane, each 2 us narrower than its parent: most are wide, so
  // at 1, 2, 4... pixels they are still drawn alone and over the budget. One pass counts
  // them by width and the next lays them out at the first scale that may fit (the lanes
  // were laid out at every doubling: 11 passes for a 1,600-pixel plot).
  std::vector<std::string> events;
  for (int k = 0; k < 3000; ++k)
    events.push_back(R"({"ph":"X","pid":1,"tid":0,"ts":)" + std::to_string(k) + R"(,"dur":)" + std::to_string(2 * (3000 - k)) +
                     R"(,"name":"d"})");
  Timeline t = timeline_of(test::trace_of(events), {0, 6000000}, 1600, GroupBy::name, 512, 200000);
  CHECK(t.pixels_merged >= 64);
  CHECK(t.layout_passes <= 3);
  std::size_t alone = t.lanes.at(0).spans.size();
  CHECK(alone * 220 + 300 <= 200000);
  uint64_t merged = 0;
  for (const TimelineRun& run : t.lanes[0].runs) merged += run.spans;
  CHECK(alone + merged == 3000);  // nothing lost
}

TEST_CASE("timeline: lanes laid out on threads make the picture one thread makes, passes and folded groups included") {
  // 40 lanes of wide and narrow spans of 40 names (past kMaxDrawnGroups: some are folded),
  // some without a cat and some with a cat named "(no cat)", over a budget small enough
  // for several passes.
  std::vector<std::string> events;
  uint64_t x = 88172645463325252ull;
  auto next = [&](uint64_t n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x % n;
  };
  for (int lane = 0; lane < 40; ++lane) {
    int64_t ts = 0;
    for (int k = 0; k < 300; ++k) {
      ts += static_cast<int64_t>(next(50));
      int64_t dur = next(10) == 0 ? 2000 + static_cast<int64_t>(next(5000)) : 1 + static_cast<int64_t>(next(20));
      uint64_t n = next(40);
      std::string cat = n % 7 == 0   ? std::string()
                        : n % 7 == 1 ? std::string(R"x(,"cat":"(no cat)")x")
                                     : R"(,"cat":"c)" + std::to_string(n % 30) + "\"";
      events.push_back(R"({"ph":"X","pid":1,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(ts) +
                       R"(,"dur":)" + std::to_string(dur) + R"(,"name":"n)" + std::to_string(n) + "\"" + cat + "}");
      ts += dur;
    }
  }
  std::string json = test::trace_of(events);
  for (GroupBy by : {GroupBy::name, GroupBy::cat}) {
    Timeline one = timeline_of(json, {0, 400000000}, 800, by, 512, 60000, 1);
    CHECK(one.layout_passes >= 2);
    CHECK(one.groups.back().color == kOthersColor);
    std::string svg = result::render_timeline_svg(one, "t", {});
    for (unsigned threads : {2u, 3u, 7u}) {
      Timeline many = timeline_of(json, {0, 400000000}, 800, by, 512, 60000, threads);
      CHECK(many.layout_passes == one.layout_passes);
      CHECK(result::render_timeline_svg(many, "t", {}) == svg);
    }
    // Lanes stopped (at once, or part-way) by groups not known yet, their groups met in
    // file order on one thread and laid out again from scratch: the same picture (a lane
    // laid out again used to keep what it had laid out before it stopped, drawn twice).
    for (std::size_t known : {std::size_t{0}, std::size_t{10}})
      for (unsigned threads : {1u, 3u}) {
        INFO(known << " groups known before, " << threads << " threads");
        Timeline late = timeline_of(json, {0, 400000000}, 800, by, 512, 60000, threads, known);
        CHECK(late.layout_passes == one.layout_passes);
        CHECK(result::render_timeline_svg(late, "t", {}) == svg);
      }
  }
}

TEST_CASE("fold_groups: the largest keep their place, the rest become one grey 'N others' with their share") {
  std::vector<TimelineGroup> groups = {{"a", "#111111", 5}, {"b", "#222222", 1}, {"c", "#333333", 9}, {"d", "#444444", 3}};
  DrawnGroups d = fold_groups(groups, 2);
  REQUIRE(d.groups.size() == 3);
  CHECK(d.groups[0].name == "a");
  CHECK(d.groups[1].name == "c");
  CHECK(d.groups[2].name == "2 others");
  CHECK(d.groups[2].color == kOthersColor);
  CHECK(d.groups[2].share_pct == doctest::Approx(4));
  CHECK(d.drawn_of == std::vector<uint32_t>{0, 2, 1, 2});
  CHECK(d.others == 2);
  DrawnGroups all = fold_groups(groups, 4);
  CHECK(all.groups.size() == 4);
  CHECK(all.others == 0);
  CHECK(all.drawn_of == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK_FALSE(d.folded(0));
  CHECK(d.folded(1));
  CHECK_FALSE(d.folded(2));
  CHECK(d.folded(3));
  for (uint32_t g = 0; g < 4; ++g) CHECK_FALSE(all.folded(g));
}

TEST_CASE("DrawnGroups::add: a group met after folding is drawn alone while there is room, then as one more other") {
  std::vector<TimelineGroup> groups = {{"a", "#111111", 5}, {"b", "#222222", 1}};
  DrawnGroups room = fold_groups(groups, 3);
  room.add({"late", "#555555", 0}, 3);
  CHECK(room.groups.size() == 3);
  CHECK(room.drawn_of[2] == 2);
  CHECK_FALSE(room.folded(2));
  room.add({"later", "#666666", 0}, 3);  // full: the first other
  REQUIRE(room.groups.size() == 4);
  CHECK(room.groups[3].name == "1 others");
  CHECK(room.groups[3].color == kOthersColor);
  CHECK(room.folded(3));
  DrawnGroups full = fold_groups({{"a", "#111111", 5}, {"b", "#222222", 1}, {"c", "#333333", 2}}, 2);
  full.add({"late", "#555555", 0}, 2);  // others already: it joins them even though nothing else would be drawn
  REQUIRE(full.groups.size() == 3);
  CHECK(full.groups[2].name == "2 others");
  CHECK(full.drawn_of[3] == 2);
  CHECK(full.folded(3));
}

TEST_CASE("timeline: past kMaxDrawnGroups groups, the busiest keep their colours and the rest are drawn as 'N others'") {
  // Lane 0: group gK is one span of K+1 us, wide enough to draw alone. Lane 1: narrow
  // spans of the six smallest groups in turn, 0.2 px apart, which merge as one group's run.
  std::vector<std::string> events;
  int64_t ts = 0;
  for (int k = 0; k < 30; ++k) {
    events.push_back(R"({"ph":"X","pid":1,"tid":0,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(k + 1) +
                     R"(,"name":"g)" + std::to_string(k) + "\"}");
    ts += k + 1;
  }
  for (int k = 0; k < 60; ++k)
    events.push_back(R"({"ph":"X","pid":1,"tid":1,"ts":)" + std::to_string(k * 0.1) + R"(,"dur":0.001,"name":"g)" +
                     std::to_string(k % 6) + "\"}");
  Timeline t = timeline_of(test::trace_of(events), {0, ts * 1000}, 1000, GroupBy::name);
  REQUIRE(t.groups.size() == kMaxDrawnGroups + 1);
  CHECK(t.groups.back().name == "6 others");
  CHECK(t.groups.back().color == kOthersColor);
  CHECK(t.groups.back().share_pct == doctest::Approx(100.0 * 21 / 465).epsilon(0.01));
  REQUIRE(t.lanes.size() == 2);
  const std::vector<TimelineSpan>& spans = t.lanes[0].spans;
  REQUIRE(spans.size() == 30);
  CHECK(t.groups[spans[0].group].name == "6 others");
  CHECK(spans[0].group_name == "g0");             // its own group, for the tooltip
  CHECK(t.groups[spans[29].group].name == "g29");
  CHECK(spans[29].group_name.empty());
  for (const TimelineRun& run : t.lanes[1].runs) CHECK(run.group == kMaxDrawnGroups);
  CHECK(t.lanes[1].runs.size() <= 2);             // one group: its runs merge
  std::string svg = result::render_timeline_svg(t, "t", {});
  CHECK(svg.find("(g0)") != std::string::npos);
  CHECK(svg.find("6 others") != std::string::npos);
  CHECK(svg.find(".g25{") == std::string::npos);  // a class per drawn group only
}

TEST_CASE("timeline: the markers of the 16 kinds with the most, spaced out past half the budget, and notes") {
  // Twenty instant kinds (a trace without a profile: a kind per name), one marker each
  // but k19 with three: k19 and the first fifteen are drawn.
  std::vector<std::string> events = {R"({"ph":"X","pid":1,"tid":0,"ts":0,"dur":100,"name":"x"})"};
  for (int k = 0; k < 20; ++k)
    for (int m = 0; m < (k == 19 ? 3 : 1); ++m)
      events.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"g","ts":)" + std::to_string(k * 4 + m) + R"(,"name":"k)" +
                       std::to_string(k) + "\"}");
  Timeline t = timeline_of(test::trace_of(events), {0, 100000}, 100, GroupBy::name);
  CHECK(t.trace_kinds == 20);
  CHECK(t.drawn_kinds == 16);
  std::set<std::string> kinds;
  for (const TimelineMarker& m : t.markers) kinds.insert(m.kind);
  CHECK(kinds.size() == 16);
  CHECK(kinds.count("k19") == 1);
  CHECK(kinds.count("k14") == 1);
  CHECK(kinds.count("k15") == 0);
  CHECK(result::render_timeline_svg(t, "t", {}).find("markers of 16 of 20 kinds drawn") != std::string::npos);

  // One kind, a marker a pixel: under a budget of 2,400 bytes its lines (120 bytes each)
  // may take 1,200, so they are spaced out.
  std::vector<std::string> many = {R"({"ph":"X","pid":1,"tid":0,"ts":0,"dur":100,"name":"x"})"};
  for (int m = 0; m < 100; ++m) many.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"g","ts":)" + std::to_string(m) + R"(,"name":"tick"})");
  Timeline loose = timeline_of(test::trace_of(many), {0, 100000}, 100, GroupBy::name);
  CHECK(loose.markers.size() == 100);
  CHECK(loose.marker_spacing_px == 1);
  Timeline tight = timeline_of(test::trace_of(many), {0, 100000}, 100, GroupBy::name, 512, 2400);
  CHECK(tight.markers.size() <= 10);
  CHECK(tight.markers.size() >= 5);
  CHECK(tight.marker_spacing_px > 1);
  CHECK(result::render_timeline_svg(tight, "t", {}).find("at least") != std::string::npos);
  CHECK(result::render_timeline_svg(loose, "t", {}).find("kinds drawn") == std::string::npos);
}

TEST_CASE("timeline: a pixel column of narrow spans shows its dominant group, faint as it is idle, waits only where no work") {
  // 100 us on 10 px: 10 us a pixel. Pixel 0: a 3 us of work, b 2 us (busy 1/2: 2 quarters,
  // a dominates). Pixel 1: b 1 us, a 0.5 (1 quarter, b). Pixel 2: a wake only (waiting).
  // Pixel 5: a span over the boundary of pixels 5 and 6, 4 us in each: its time is split.
  std::string json = test::trace_of({
      R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":3})",
      R"({"ph":"X","name":"b","pid":0,"tid":0,"ts":4,"dur":2})",
      R"({"ph":"X","name":"b","pid":0,"tid":0,"ts":11,"dur":1})",
      R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":13,"dur":0.5})",
      R"({"ph":"X","name":"wake","pid":0,"tid":0,"ts":21,"dur":9})",
      R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":56,"dur":8})",
      R"({"ph":"X","name":"z","pid":0,"tid":0,"ts":99,"dur":1})"});
  Timeline t = timeline_of(json, {0, 100000}, 10, GroupBy::name);
  REQUIRE(t.lanes.size() == 1);
  std::map<int, TimelineRun> at;  // by first pixel
  for (const TimelineRun& r : t.lanes[0].runs) at[r.x0] = r;
  auto name = [&](int x) { return t.groups.at(at.at(x).group).name; };
  REQUIRE(at.count(0) == 1);
  CHECK(at[0].x1 == 1);
  CHECK(name(0) == "a");
  CHECK(at[0].busy_quarters == 2);
  CHECK(at[0].spans == 2);
  CHECK(at[0].covered_ns == 5000);
  CHECK(name(1) == "b");
  CHECK(at[1].busy_quarters == 1);
  CHECK_FALSE(at[1].waiting);
  CHECK(name(2) == "wake");
  CHECK(at[2].waiting);
  CHECK(at[2].busy_quarters == 4);  // 9 of 10 us
  REQUIRE(at.count(5) == 1);
  CHECK(at[5].x1 == 7);             // 4 us in pixel 5 and 4 in 6: alike, one run
  CHECK(at[5].busy_quarters == 2);
  CHECK(at[5].spans == 1);
  CHECK(at[5].covered_ns == 8000);
  std::string svg = result::render_timeline_svg(t, "t", {});
  CHECK(svg.find("mostly a, up to 2/4 busy") != std::string::npos);
  CHECK(svg.find("q2") != std::string::npos);
}

TEST_CASE("timeline: categories that share a colour get shades of it, the same whatever the scope") {
  std::string profile =
      R"({"version":1,"lanes":2,"categories":[{"id":1,"name":"attn chain","color":"#5E96DE"},)"
      R"({"id":2,"name":"attn std","color":"#5e96de"},{"id":3,"name":"ffn chain","color":"#43B08A"}],"markers":[]})";
  std::vector<std::string> events;  // attn std (tag 2) then attn chain (tag 1), then ffn chain (tag 3)
  int64_t ts = 0;
  for (int tag : {2, 1, 3}) {
    events.push_back(R"({"ph":"X","name":"publish","pid":0,"tid":1,"ts":)" + std::to_string(ts) +
                     R"(,"dur":1,"args":{"stage":)" + std::to_string(256 * tag + 1) + R"(,"arg":1,"chain":)" +
                     std::to_string(tag) + "}}");
    events.push_back(R"({"ph":"X","name":"chunk","pid":0,"tid":0,"ts":)" + std::to_string(ts + 1) +
                     R"(,"dur":)" + std::to_string(tag == 2 ? 50 : 10) + R"(,"args":{"stage":0,"arg":0,"chain":)" +
                     std::to_string(tag) + "}}");
    ts += 100;
  }
  std::string json = test::trace_of(events, profile);
  auto color_of = [](const Timeline& t, const std::string& name) {
    for (const TimelineGroup& g : t.groups)
      if (g.name == name) return g.color;
    return std::string("none");
  };
  for (Range r : {Range{0, 300000}, Range{0, 90000}, Range{100000, 300000}}) {
    Timeline t = timeline_of(json, r, 300);
    CAPTURE(r.lo);
    CHECK(color_of(t, "attn chain") == "#5E96DE");  // first in the profile: its colour
    CHECK(color_of(t, "attn std") == shade_of("#5e96de", 1));
    CHECK(color_of(t, "ffn chain") == "#43B08A");
  }
  // The same chains with legacy tags (no profile): attn std is met first, and still the
  // lower tag, attn chain's, keeps the colour, as in the profile trace (it was the darker).
  Timeline legacy = timeline_of(test::trace_of(events), Range{0, 300000}, 300);
  CHECK(color_of(legacy, "attn chain") == "#5E96DE");
  CHECK(color_of(legacy, "attn std") == shade_of("#5E96DE", 1));
  CHECK(shade_of("#5E96DE", 1) != "#5E96DE");
  CHECK(shade_of("#5E96DE", 0) == "#5E96DE");
  CHECK(shade_of("not a colour", 1) == "not a colour");
  // Each shade at least 40 apart from the colour and the other shades on some channel.
  std::vector<std::string> shades;
  for (int k = 0; k < 5; ++k) shades.push_back(shade_of("#5E96DE", k));
  auto channel = [](const std::string& c, int i) { return std::stoi(c.substr(1 + 2 * i, 2), nullptr, 16); };
  for (std::size_t a = 0; a < shades.size(); ++a)
    for (std::size_t b = a + 1; b < shades.size(); ++b) {
      int far = 0;
      for (int i = 0; i < 3; ++i) far = std::max(far, std::abs(channel(shades[a], i) - channel(shades[b], i)));
      CAPTURE(shades[a]);
      CAPTURE(shades[b]);
      CHECK(far >= 40);
    }
}

TEST_CASE("timeline: markers of kinds whose units are too narrow to label are ticks on the axis, wide ones lines") {
  // 'wide' every 20 us, 'narrow' every 1 us, over 100 us drawn on 1000 px: 200 px and 10 px apart.
  std::vector<std::string> events = {R"({"ph":"X","pid":1,"tid":0,"ts":0,"dur":100,"name":"x"})"};
  for (int k = 0; k < 100; ++k) {
    events.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"g","name":"narrow","ts":)" + std::to_string(k) + "}");
    if (k % 20 == 0) events.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"g","name":"wide","ts":)" + std::to_string(k) + "}");
  }
  Timeline t = timeline_of(test::trace_of(events), {0, 100000}, 1000, GroupBy::name);
  REQUIRE(t.tick_kinds == std::vector<std::string>{"narrow"});
  std::size_t lines = 0, ticks = 0;
  for (const TimelineMarker& m : t.markers) (m.line ? lines : ticks) += 1;
  CHECK(lines == 5);
  CHECK(ticks == 100);
  std::string svg = result::render_timeline_svg(t, "t", {});
  CHECK(svg.find("narrow markers</text>") != std::string::npos);
  CHECK(svg.find(">wide 1<") != std::string::npos);     // lines are labelled
  CHECK(svg.find(">narrow 1<") == std::string::npos);   // ticks are not
  // Zoomed in to 10 us, 'narrow' markers are 100 px apart: lines.
  Timeline zoomed = timeline_of(test::trace_of(events), {0, 10000}, 1000, GroupBy::name);
  CHECK(zoomed.tick_kinds.empty());
}

TEST_CASE("timeline: the time axis's last label ends at its tick when it sits at the picture's right edge") {
  std::string json = test::trace_of({R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":100})"});
  result::SvgLayout layout;
  layout.width_px = 600;
  Timeline t = timeline_of(json, {0, 100000}, layout.plot_width(), GroupBy::name);
  std::string svg = result::render_timeline_svg(t, "t", layout);
  CHECK(svg.find("text-anchor=\"end\" font-size=\"10\">100 us<") != std::string::npos);   // cut off before
  CHECK(svg.find("text-anchor=\"middle\" font-size=\"10\">0 us<") != std::string::npos);
}


TEST_CASE("timeline: marker labels are the program's args (the index beside them where they differ), closers' left of their line") {
  // 'layer' markers carry args 9, 10, 11 (a model's layer numbers) and start their units
  // (a long tail after the last); 'done' markers close theirs (work before each, a pause
  // after) and carry args equal to their index.
  std::vector<std::string> events = {R"({"ph":"X","pid":1,"tid":0,"ts":0,"dur":400,"name":"w"})",
                                     R"({"ph":"X","pid":1,"tid":0,"ts":500,"dur":400,"name":"w"})"};
  for (int k = 0; k < 3; ++k)
    events.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"t","name":"layer","ts":)" + std::to_string(100 + 100 * k) +
                     R"(,"args":{"arg":)" + std::to_string(9 + k) + "}}");
  events.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"t","name":"done","ts":400,"args":{"arg":0}})");
  events.push_back(R"({"ph":"i","pid":1,"tid":0,"s":"t","name":"done","ts":900,"args":{"arg":1}})");
  Timeline t = timeline_of(test::trace_of(events), {0, 900000}, 1000, GroupBy::name);
  std::string svg = result::render_timeline_svg(t, "t", {});
  CHECK(svg.find(">layer 9 \u00b7 #0<") != std::string::npos);
  CHECK(svg.find(">layer 11 \u00b7 #2<") != std::string::npos);
  // done 0 closes [0, 400]: its label ends at its line (text-anchor end), over its unit.
  CHECK(svg.find("text-anchor=\"end\">done 0<") != std::string::npos);
}

TEST_CASE("timeline and report legends keep the mark of a guessed name") {
  const Trace& legacy = test::load_sample("legacy-small.trace.json");  // classifier: named by its stage count
  SpanIndex index(legacy);
  TimelineOptions options;
  Timeline t = compute_timeline(legacy, index, whole_trace(legacy), options);
  std::string svg = result::render_timeline_svg(t, "t", {});
  CHECK(svg.find(">classifier* ") != std::string::npos);
  CHECK(result::swatch_legend_html(t.groups).find("classifier* ") != std::string::npos);
}

}  // namespace jqtrace
