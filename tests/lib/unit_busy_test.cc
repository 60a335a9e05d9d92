// busy_by_category_of_units against compute_stats_of_ranges by category: the same busy
// time and share for every category of every unit, in the same order.
#include "unit_busy.h"

#include <doctest/doctest.h>

#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

/// A jobque trace of `chains` chains of five categories (their publishes' tags and stage
/// counts) on `lanes` lanes: chunks, fifo jobs, stage waits and wakes, most short, some
/// spanning much of the trace, some overlapping on their lane, some of zero length.
std::string jobque_trace(uint32_t seed, int lanes, int chains) {
  XorShift next{seed * 2654435761u + 11};
  std::string json = "[";
  auto span = [&](int lane, int64_t ts, int64_t dur, const char* name, int64_t stage, int64_t chain) {
    json += R"({"ph":"X","pid":1,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
            std::to_string(dur) + R"(,"name":")" + name + R"(","args":{"stage":)" + std::to_string(stage) +
            R"(,"arg":1,"chain":)" + std::to_string(chain) + "}},";
  };
  for (int c = 1; c <= chains; ++c) {
    int64_t tag = next(5), nstages = 1 + next(3);
    span(lanes - 1, next(100000), 1 + next(20), "publish", nstages | (tag << 8), c);
  }
  const char* kinds[] = {"chunk", "chunk", "chunk", "fifo_job", "stage_wait", "wake"};
  for (int i = 0; i < 40 * chains; ++i) {
    int64_t dur = next(10) == 0 ? next(60000) : next(10) == 0 ? 0 : next(400);
    span(static_cast<int>(next(static_cast<uint64_t>(lanes))), next(100000), dur, kinds[next(6)], next(3), 1 + next(static_cast<uint64_t>(chains)));
  }
  json += R"({"ph":"i","s":"g","pid":1,"tid":0,"ts":0,"name":"token"}])";
  return json;
}

/// Units tiling [lo, hi] in steps (each touching the next), now and then one of no length.
std::vector<Unit> tiled_units(int64_t lo, int64_t hi, int64_t step) {
  std::vector<Unit> units;
  for (int64_t at = lo; at < hi; at += step) {
    units.push_back({static_cast<int64_t>(units.size()), 0, {at, std::min(hi, at + step)}});
    if (units.size() % 7 == 3) units.push_back({static_cast<int64_t>(units.size()), 0, {units.back().range.hi, units.back().range.hi}});
  }
  return units;
}

/// Every third unit: gaps between them, as a chart of the slowest of each run has.
std::vector<Unit> every_third(const std::vector<Unit>& units) {
  std::vector<Unit> some;
  for (std::size_t u = 0; u < units.size(); u += 3) some.push_back(units[u]);
  return some;
}

void check_as_range_stats(const Trace& t, const std::vector<std::vector<Unit>>& lists) {
  SpanIndex index(t);
  StatsOptions o;
  o.by = GroupBy::category;
  o.distributions = false;
  o.lanes = false;
  for (unsigned threads : {1u, 3u}) {
    std::optional<UnitsBusy> busy = busy_by_category_of_units(t, index, lists, threads);
    REQUIRE(busy.has_value());
    REQUIRE(busy->size() == lists.size());
    for (std::size_t k = 0; k < lists.size(); ++k) {
      std::vector<Range> ranges;
      for (const Unit& u : lists[k]) ranges.push_back(u.range);
      std::vector<RangeStats> stats = compute_stats_of_ranges(t, index, ranges, o);
      REQUIRE((*busy)[k].size() == ranges.size());
      for (std::size_t u = 0; u < ranges.size(); ++u) {
        INFO("list " << k << ", unit " << u << " [" << ranges[u].lo << ", " << ranges[u].hi << "], " << threads << " threads");
        std::vector<std::string> want, got;
        for (const GroupStats& g : stats[u].groups)
          if (g.busy_ns > 0) want.push_back(g.name + " " + std::to_string(g.busy_ns) + " " + std::to_string(g.share_pct));
        for (const CategoryBusy& c : (*busy)[k][u])
          got.push_back(t.categories[c.category].name + " " + std::to_string(c.busy_ns) + " " + std::to_string(c.share_pct));
        CHECK(got == want);
        for (std::size_t g = 0, c = 0; g < stats[u].groups.size(); ++g)  // shares exactly equal, not only as printed
          if (stats[u].groups[g].busy_ns > 0 && c < (*busy)[k][u].size()) CHECK(stats[u].groups[g].share_pct == (*busy)[k][u][c++].share_pct);
      }
    }
  }
}

}  // namespace

TEST_CASE("busy by category of units equals each unit's range stats: generated jobque traces") {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    Trace t;
    REQUIRE(load_string(jobque_trace(seed, 1 + static_cast<int>(seed % 5), 40), &t).status == ReadStatus::ok);
    REQUIRE(t.jobque);
    REQUIRE(t.categories.size() >= 3);
    Range whole = whole_trace(t);
    INFO("seed " << seed);
    std::vector<Unit> fine = tiled_units(whole.lo - 3000000, whole.hi + 3000000, 700000);  // long spans cover many
    std::vector<Unit> coarse = tiled_units(whole.lo, whole.hi, 9000000);
    check_as_range_stats(t, {fine, coarse, every_third(fine), {}, every_third(coarse)});
  }
}

TEST_CASE("busy by category of units equals each unit's range stats: the samples' marker units") {
  for (const char* sample : {"decode-small.trace.json", "tiny.trace.json", "legacy-small.trace.json"}) {
    const Trace& t = load_sample(sample);
    INFO(sample);
    std::vector<std::vector<Unit>> lists;
    for (const std::string& kind : marker_kinds(t))
      for (UnitAt at : {UnitAt::start, UnitAt::end}) {
        lists.push_back(units_of(t, kind, at));
        lists.push_back(every_third(lists.back()));
      }
    check_as_range_stats(t, lists);
  }
}

TEST_CASE("busy by category of units: not for overlapping units nor generic traces") {
  const Trace& jobque = load_sample("decode-small.trace.json");
  SpanIndex index(jobque);
  Range whole = whole_trace(jobque);
  std::vector<Unit> overlapping{{0, 0, {whole.lo, whole.lo + 100000}}, {1, 0, {whole.lo + 50000, whole.hi}}};
  CHECK_FALSE(busy_by_category_of_units(jobque, index, {overlapping}, 1).has_value());
  std::vector<Unit> backwards{{0, 0, {whole.lo + 10, whole.lo}}};
  CHECK_FALSE(busy_by_category_of_units(jobque, index, {backwards}, 1).has_value());
  const Trace& chrome = load_sample("chrome-small.json");
  SpanIndex chrome_index(chrome);
  CHECK_FALSE(busy_by_category_of_units(chrome, chrome_index, {tiled_units(0, 1000, 10)}, 1).has_value());
}
