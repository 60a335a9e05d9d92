// Phase log lines: matching, the sections, sub-phases, shares, per-round distributions,
// errors with line:column, and the gate metrics.
#include <doctest/doctest.h>

#include "phases.h"

using namespace jqtrace;

namespace {
constexpr const char* kLevel1 =
    "[glm5-phase] rounds=12 k=4 total=48.31ms | draft=9.02 verify=31.40 accept=1.10 roll=0.52 maint=6.27 | "
    "per-round ms: draft=0.752 verify=2.617 accept=0.092 roll=0.043 maint=0.523 total=4.026";
constexpr const char* kLevel2 =
    "[glm5-phase-v] rounds=12 k=4 | per-round ms: vkda=1.210 (scan=0.400) vmla=0.830 vrest=0.577 (vffn=0.300)";

PhaseLog log_of(const std::vector<std::string>& lines) {
  PhaseLog log;
  PhaseLogError error;
  for (std::size_t i = 0; i < lines.size(); ++i) REQUIRE_MESSAGE(log.add_line(lines[i], i + 1, &error), error.message);
  return log;
}
const PhaseStats& phase(const TagStats& t, const std::string& name) {
  for (const PhaseStats& p : t.phases)
    if (p.name == name) return p;
  FAIL("no phase " << name);
  return t.phases.front();
}
PhaseLogError error_of(const std::string& line) {
  PhaseLog log;
  PhaseLogError error;
  CHECK_FALSE(log.add_line(line, 7, &error));
  CHECK(error.line == 7);
  return error;
}
}  // namespace

TEST_CASE("phases: a level-1 line, with noise around it") {
  PhaseLog log = log_of({"loading weights", kLevel1, "[info] ready", "2026-11-29T10:00 stderr: rounds=3"});
  std::vector<TagStats> tags = log.summarize(QuantileMethod::inclusive);
  REQUIRE(tags.size() == 1);
  const TagStats& t = tags[0];
  CHECK(t.tag == "glm5-phase");
  CHECK(t.bursts == 1);
  CHECK(t.rounds == 12);
  CHECK(t.total_ms == 48.31);
  REQUIRE(t.phases.size() == 5);  // total= is not a phase
  double sum = 9.02 + 31.40 + 1.10 + 0.52 + 6.27;
  CHECK(phase(t, "verify").ms == 31.40);
  CHECK(phase(t, "verify").share_pct == doctest::Approx(100.0 * 31.40 / sum));
  CHECK(phase(t, "draft").per_round_ms.p50 == 0.752);
  CHECK(phase(t, "draft").parent.empty());
}

TEST_CASE("phases: a level-2 line: sub-phases share their parent, top level their sum") {
  std::vector<TagStats> tags = log_of({kLevel2}).summarize(QuantileMethod::inclusive);
  REQUIRE(tags.size() == 1);
  const TagStats& t = tags[0];
  CHECK(phase(t, "vkda").ms == doctest::Approx(1.210 * 12));  // per-round x rounds
  CHECK(phase(t, "scan").parent == "vkda");
  CHECK(phase(t, "scan").share_pct == doctest::Approx(100.0 * 0.400 / 1.210));
  CHECK(phase(t, "vffn").share_pct == doctest::Approx(100.0 * 0.300 / 0.577));
  CHECK(phase(t, "vmla").share_pct == doctest::Approx(100.0 * 0.830 / (1.210 + 0.830 + 0.577)));
  CHECK(t.total_ms == doctest::Approx((1.210 + 0.830 + 0.577) * 12));  // no header total
}

TEST_CASE("phases: several tags and bursts, a prefix before the tag, totals-only bursts") {
  std::vector<TagStats> tags =
      log_of({kLevel1, kLevel2, "12:00:01 engine: [glm5-phase] rounds=10 total=40ms | draft=8 verify=26",
              "[other] rounds=0 | a=1"})
          .summarize(QuantileMethod::inclusive);
  REQUIRE(tags.size() == 3);
  const TagStats& t = tags[0];
  CHECK(t.bursts == 2);
  CHECK(t.rounds == 22);
  CHECK(t.total_ms == doctest::Approx(88.31));
  const PhaseStats& draft = phase(t, "draft");
  CHECK(draft.ms == doctest::Approx(17.02));
  REQUIRE(draft.per_round_ms.count == 2);  // 0.752, and 8 / 10 from the totals-only burst
  CHECK(draft.per_round_ms.max == doctest::Approx(0.8));
  CHECK(phase(t, "accept").per_round_ms.count == 1);  // only the first burst had it
  CHECK(tags[2].tag == "other");
  CHECK(phase(tags[2], "a").per_round_ms.count == 0);  // rounds=0: no per-round value
  CHECK(log_of({kLevel1, kLevel2}).summarize(QuantileMethod::inclusive, "glm5-phase-v").size() == 1);
}

TEST_CASE("phases: malformed matching lines are errors at line:column") {
  PhaseLogError e = error_of("[t] rounds=3 | a=1.x b=2");
  CHECK(e.column == 18);
  CHECK(e.message == "malformed number '1.x' for a");
  e = error_of("[t] rounds=3.5 | a=1");
  CHECK(e.column == 12);
  CHECK(e.message == "rounds= must be a whole number");
  e = error_of("[t] rounds= | a=1");
  CHECK(e.message.find("malformed number") != std::string::npos);
  e = error_of("[t] rounds=3 | (a=1)");
  CHECK(e.message.find("need a phase before them") != std::string::npos);
  e = error_of("[t] rounds=3 | a=1 (b=2");
  CHECK(e.message == "'(' without ')'");
  e = error_of("[t] rounds=3 | a=1 junk");
  CHECK(e.column == 20);
  e = error_of("[t] rounds=3 k=four | a=1");
  CHECK(e.message == "malformed number 'four' for k");
}

TEST_CASE("phases: gate metrics, bare names only where one tag has them") {
  std::vector<TagStats> both = log_of({kLevel1, kLevel2, "[glm5-phase-v] rounds=1 | draft=1 vkda=2"}).summarize(QuantileMethod::inclusive);
  MetricSet m = phase_metrics(both);
  Gate g;
  GateError e;
  double v = 0;
  REQUIRE(parse_gate("share(verify) > 1", &g, &e));
  REQUIRE(m.lookup(g, &v, &e));
  CHECK(v == doctest::Approx(phase(both[0], "verify").share_pct));
  REQUIRE(parse_gate("ms(draft) > 1", &g, &e));
  CHECK_FALSE(m.lookup(g, &v, &e));  // draft is in both tags
  REQUIRE(parse_gate("ms('glm5-phase/draft') > 1", &g, &e));
  REQUIRE(m.lookup(g, &v, &e));
  CHECK(v == doctest::Approx(9.02));
  REQUIRE(parse_gate("rounds > 1", &g, &e));
  CHECK_FALSE(m.lookup(g, &v, &e));  // only with one tag
  MetricSet one = phase_metrics(log_of({kLevel1}).summarize(QuantileMethod::inclusive));
  REQUIRE(parse_gate("p50(verify) > 1", &g, &e));
  REQUIRE(one.lookup(g, &v, &e));
  CHECK(v == 2.617);
  REQUIRE(parse_gate("total >= 48.31", &g, &e));
  REQUIRE(one.lookup(g, &v, &e));
  CHECK(v == 48.31);
}

TEST_CASE("rounds that add up past what a 64-bit total holds are refused at the line, not wrapped") {
  PhaseLog log;
  PhaseLogError error;
  std::size_t refused_at = 0;
  for (std::size_t line = 1; line <= 10000 && !refused_at; ++line)
    if (!log.add_line("[t] rounds=1e15 | draft=1", line, &error)) refused_at = line;
  CHECK(refused_at == 9224);  // 9223 x 1e15 fits in INT64_MAX (9.22e18), the next does not
  CHECK(error.line == 9224);
  CHECK(error.message.find("add up past 9223372036854775807") != std::string::npos);
  std::vector<TagStats> tags = log.summarize(QuantileMethod::inclusive);
  REQUIRE(tags.size() == 1);
  CHECK(tags[0].rounds == 9223 * int64_t{1000000000000000});  // never negative
}
