// Gates: the expression grammar, every operator, metric lookup with its errors, value
// formatting, gate files; the stats metric set, baselines and diff built on them.
#include <doctest/doctest.h>

#include "diff.h"
#include "gate.h"
#include "gate_metrics.h"
#include "scope.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
Gate parsed(const std::string& text) {
  Gate g;
  GateError e;
  REQUIRE_MESSAGE(parse_gate(text, &g, &e), text << ": " << e.message);
  return g;
}
GateError parse_error(const std::string& text) {
  Gate g;
  GateError e;
  CHECK_FALSE(parse_gate(text, &g, &e));
  return e;
}
RangeStats stats_of(const char* sample, GroupBy by = GroupBy::category) {
  const Trace& t = load_sample(sample);
  SpanIndex index(t);
  StatsOptions o;
  o.by = by;
  return compute_stats(t, index, whole_trace(t), o);
}
}  // namespace

TEST_CASE("gate grammar: metric with a group, operator, number") {
  Gate g = parsed("share(ffn chain) > 40");
  CHECK(g.metric == "share");
  CHECK(g.has_arg);
  CHECK(g.arg == "ffn chain");
  CHECK(g.arg_column == 7);
  CHECK(g.op == CompareOp::gt);
  CHECK(g.threshold == 40.0);
  CHECK(g.threshold_text == "40");
  CHECK(g.metric_label() == "share(ffn chain)");
}

TEST_CASE("gate grammar: every operator, and where each holds") {
  struct Case {
    const char* text;
    CompareOp op;
    bool below, at, above;  // holds for 39, 40, 41
  };
  for (const Case& c : {Case{"idle < 40", CompareOp::lt, true, false, false},
                        Case{"idle <= 40", CompareOp::le, true, true, false},
                        Case{"idle > 40", CompareOp::gt, false, false, true},
                        Case{"idle >= 40", CompareOp::ge, false, true, true},
                        Case{"idle == 40", CompareOp::eq, false, true, false},
                        Case{"idle != 40", CompareOp::ne, true, false, true}}) {
    Gate g = parsed(c.text);
    CHECK(g.op == c.op);
    CHECK_FALSE(g.has_arg);
    CHECK(holds(39, g.op, g.threshold) == c.below);
    CHECK(holds(40, g.op, g.threshold) == c.at);
    CHECK(holds(41, g.op, g.threshold) == c.above);
    CHECK(std::string(c.text).find(op_text(g.op)) != std::string::npos);
  }
}

TEST_CASE("gate grammar: quotes, nested parentheses, percent, signs, exponents, spacing") {
  CHECK(parsed("share('attn chain') >= 27%").arg == "attn chain");
  CHECK(parsed("share(\"a ) b\") < 1").arg == "a ) b");
  CHECK(parsed("share(attn(4st)) > 10").arg == "attn(4st)");
  CHECK(parsed("  p99( moe experts )<=1.5e3  ").arg == "moe experts");
  CHECK(parsed("p99(x) <= 1.5e3").threshold == 1500.0);
  CHECK(parsed("idle > -2.5").threshold == -2.5);
  CHECK(parsed("idle > +7").threshold == 7.0);
  Gate pct = parsed("share(x) > 12.5 %");
  CHECK(pct.threshold == 12.5);
  CHECK(pct.threshold_text == "12.5");
  CHECK(parsed("  idle<3 ").text == "idle<3");
}

TEST_CASE("gate grammar errors point at the column that is wrong") {
  GateError e = parse_error("");
  CHECK(e.message.find("expected a metric") != std::string::npos);
  e = parse_error("share(ffn) >> 40");
  CHECK(e.column == 13);
  CHECK(e.message == "expected a number");
  e = parse_error("share(ffn) = 40");
  CHECK(e.column == 12);
  CHECK(e.message == "use == to compare");
  e = parse_error("idle 40");
  CHECK(e.column == 6);
  CHECK(e.message.find("expected one of") != std::string::npos);
  e = parse_error("idle < 4O");
  CHECK(e.column == 9);
  CHECK(e.message.find("unexpected 'O'") != std::string::npos);
  e = parse_error("share('ffn) > 1");
  CHECK(e.column == 7);
  CHECK(e.message.find("unterminated") != std::string::npos);
  e = parse_error("share(ffn > 1");
  CHECK(e.message == "missing ')'");
  e = parse_error("share( ) > 1");
  CHECK(e.message.find("empty name") != std::string::npos);
  e = parse_error("(x) > 1");
  CHECK(e.column == 1);
  e = parse_error("idle < inf");
  CHECK(e.message == "expected a number");
}

TEST_CASE("metric set: values, and errors that name the closest valid name") {
  MetricSet m;
  m.set("idle", 66.5);
  m.declare("share", "group");
  m.set("share", "ffn chain", 27.0);
  m.set("share", "attn chain", 25.8);
  double v = 0;
  GateError e;
  REQUIRE(m.lookup(parsed("share(ffn chain) > 1"), &v, &e));
  CHECK(v == 27.0);
  REQUIRE(m.lookup(parsed("idle > 1"), &v, &e));
  CHECK(v == 66.5);

  CHECK_FALSE(m.lookup(parsed("share(ffn chian) > 1"), &v, &e));
  CHECK(e.column == 7);
  CHECK(e.message == "unknown group 'ffn chian' (did you mean 'ffn chain'?)");
  // A part of a name suggests every group holding it (it named none: no edit came close).
  CHECK_FALSE(m.lookup(parsed("share(chain) > 1"), &v, &e));
  CHECK(e.message == "unknown group 'chain' (did you mean 'ffn chain' or 'attn chain'?)");
  CHECK_FALSE(m.lookup(parsed("shar(ffn chain) > 1"), &v, &e));
  CHECK(e.column == 1);
  CHECK(e.message == "unknown metric 'shar(...)' (did you mean 'share'?)");
  CHECK_FALSE(m.lookup(parsed("share > 1"), &v, &e));
  CHECK(e.message == "'share' needs a group: share(group)");
  CHECK_FALSE(m.lookup(parsed("idle(x) > 1"), &v, &e));
  CHECK(e.message == "'idle' takes no argument");
  CHECK_FALSE(m.lookup(parsed("bogus > 1"), &v, &e));
  CHECK(e.message == "unknown metric 'bogus'");
}

TEST_CASE("gates on an interval: fail when all of it trips, pass when none does, else cannot judge") {
  auto verdict = [](const char* text, double lo, double hi, bool significant = true) {
    MetricInterval i;
    i.lo = lo;
    i.hi = hi;
    i.changed = lo > 0 || hi < 0;
    i.significant = significant;
    return judge(parsed(text), (lo + hi) / 2, &i);
  };
  CHECK(verdict("slower(x) > 5", 6, 30) == Verdict::fail);
  CHECK(verdict("slower(x) > 5", -20, 5) == Verdict::pass);  // the upper bound 5 is not past 5
  CHECK(verdict("slower(x) > 5", -20, 45) == Verdict::cannot_judge);
  CHECK(verdict("slower(x) > 5", 4, 6) == Verdict::cannot_judge);
  // Past the threshold, but the change is not significant among the gated rows: undecided.
  CHECK(verdict("slower(x) > 5", 6, 30, false) == Verdict::cannot_judge);
  // No change claimed (0 inside the interval): the family does not matter.
  CHECK(verdict("slower(x) > -50", -10, 10, false) == Verdict::fail);
  CHECK(verdict("slower(x) >= 5", 5, 30) == Verdict::fail);
  CHECK(verdict("slower(x) >= 5", -3, 4.9) == Verdict::pass);
  CHECK(verdict("slower(x) < 5", -3, 4.9) == Verdict::fail);
  CHECK(verdict("slower(x) <= 5", 5.1, 9) == Verdict::pass);
  CHECK(verdict("slower(x) == 5", 6, 9) == Verdict::pass);
  CHECK(verdict("slower(x) == 5", 4, 9) == Verdict::cannot_judge);
  CHECK(verdict("slower(x) != 5", 6, 9) == Verdict::fail);
  CHECK(verdict("slower(x) != 5", 4, 9) == Verdict::cannot_judge);
  // An exact metric (no interval) only passes or fails.
  CHECK(judge(parsed("idle > 5"), 6, nullptr) == Verdict::fail);
  CHECK(judge(parsed("idle > 5"), 5, nullptr) == Verdict::pass);
  GateResult r;
  r.gate = parsed("slower(x) > 5");
  r.value = 12;
  r.has_interval = true;
  r.interval = {-20, 45, false, false, ""};
  CHECK(undecided_reason(r) == "its 95% interval [-20.0, 45.0] straddles 5");
  CHECK(describe(r) == "slower(x) = 12 [-20.0, 45.0] > 5");
}

TEST_CASE("gate values print with enough decimals to read on the tripping side") {
  CHECK(format_gate_value(41.6954, parsed("share(x) > 40")) == "41.7");
  CHECK(format_gate_value(40.04, parsed("share(x) > 40")) == "40.04");
  CHECK(format_gate_value(39.96, parsed("share(x) < 40")) == "39.96");
  CHECK(format_gate_value(12.0, parsed("events > 4")) == "12");
  // Any finite double, whole (a fixed buffer once cut 1e300 to a 63-digit prefix).
  CHECK(format_gate_value(1e300, parsed("busy > 4")) == "1e+300");
  CHECK(format_gate_value(-2.5e20, parsed("busy < 4")) == "-2.5e+20");
  CHECK(format_gate_value(123456789012345.5, parsed("busy > 4")) == "123456789012345.5");
  GateResult r;
  r.gate = parsed("share(ffn chain) > 40%");
  r.value = 41.6954;
  r.verdict = Verdict::fail;
  CHECK(describe(r) == "share(ffn chain) = 41.7 > 40");
}

TEST_CASE("gate files: comments, blank lines, CRLF, and FILE:LINE:COL errors") {
  std::vector<GateSource> gates;
  std::string error;
  REQUIRE(parse_gate_file("g.txt", "# shares\r\nshare(ffn) > 40 # ffn budget\r\n\n  idle < 10\n", &gates, &error));
  REQUIRE(gates.size() == 2);
  CHECK(gates[0].gate.text == "share(ffn) > 40");
  CHECK(gates[0].line == 2);
  CHECK(gates[1].where == "g.txt:4");
  gates.clear();
  CHECK_FALSE(parse_gate_file("g.txt", "idle < 10\nidle <> 3\n", &gates, &error));
  CHECK(error == "g.txt:2:7: expected a number");
}

TEST_CASE("stats metrics: the gate names of SPEC issue 5 with the stats' values") {
  RangeStats s = stats_of("decode-small.trace.json");
  const Trace& t = load_sample("decode-small.trace.json");
  MetricSet m = stats_metrics(s, summarize_kinds(t, UnitAtRequest::automatic, QuantileMethod::inclusive));
  double v = 0;
  GateError e;
  const GroupStats& top = s.groups.front();
  REQUIRE(m.lookup(parsed("share('" + top.name + "') > 0"), &v, &e));
  CHECK(v == top.share_pct);
  REQUIRE(m.lookup(parsed("busy('" + top.name + "') > 0"), &v, &e));
  CHECK(v == doctest::Approx(static_cast<double>(top.busy_ns) / 1000.0));
  REQUIRE(m.lookup(parsed("p99('" + top.name + "') > 0"), &v, &e));
  CHECK(v == doctest::Approx(top.dur.p99 / 1000.0));
  REQUIRE(m.lookup(parsed("parallelism > 0"), &v, &e));
  CHECK(v == s.parallelism);
  REQUIRE(m.lookup(parsed("publishes > 0"), &v, &e));
  CHECK(v == static_cast<double>(s.publishes));
  REQUIRE(m.lookup(parsed("units(token) > 0"), &v, &e));
  CHECK(v == 3.0);
  REQUIRE(m.lookup(parsed("unit_p50(token) > 0"), &v, &e));
  // The sample's token markers close their units (auto: end): 4756.585, 3962.909 and
  // 9714.579 us, not the start rule's 3962.909, 9714.579 and a 0 us stub at the end.
  CHECK(v == doctest::Approx(4756.585));
  CHECK_FALSE(m.lookup(parsed("unit_p50(tokn) > 0"), &v, &e));
  CHECK(e.message == "unknown marker kind 'tokn' (did you mean 'token'?)");
}

TEST_CASE("baseline comparison: every group of either side, moves beyond the limit trip") {
  RangeStats now = stats_of("decode-small.trace.json");
  BaselineShares same = baseline_shares(now);
  for (const ShareDelta& d : compare_shares(now, same, 0.0)) {
    CHECK(d.delta_pp == 0.0);
    CHECK_FALSE(d.tripped);
  }
  BaselineShares moved;
  moved.by = "category";
  moved.groups = {{now.groups[0].name, now.groups[0].share_pct - 3.0}, {"only in baseline", 2.0}};
  std::vector<ShareDelta> d = compare_shares(now, moved, 2.5);
  REQUIRE(d.size() == now.groups.size() + 1);
  CHECK(d[0].delta_pp == doctest::Approx(3.0));
  CHECK(d[0].tripped);
  CHECK(d[1].baseline_share_pct == 0.0);  // not in the baseline: 0 there
  CHECK(d[1].tripped == (d[1].share_pct > 2.5));
  CHECK(d.back().name == "only in baseline");
  CHECK(d.back().share_pct == 0.0);
  CHECK(d.back().delta_pp == -2.0);
  CHECK_FALSE(d.back().tripped);
}

TEST_CASE("diff: groups and kinds of both sides, share moves and busy ratios") {
  RangeStats a = stats_of("decode-small.trace.json"), b = stats_of("legacy-small.trace.json");
  std::vector<KindSummary> ka = summarize_kinds(load_sample("decode-small.trace.json"), UnitAtRequest::automatic, QuantileMethod::inclusive);
  std::vector<KindSummary> kb = summarize_kinds(load_sample("legacy-small.trace.json"), UnitAtRequest::automatic, QuantileMethod::inclusive);
  TraceDiff d = diff_stats(a, b, ka, kb);
  REQUIRE(d.groups.size() >= a.groups.size());
  for (std::size_t i = 0; i < a.groups.size(); ++i) CHECK(d.groups[i].name == a.groups[i].name);
  for (const GroupDiff& g : d.groups) {
    CHECK(g.share_delta_pp == doctest::Approx(g.b.share_pct - g.a.share_pct));
    CHECK(g.has_ratio == (g.a.busy_ns > 0));
    if (g.has_ratio) CHECK(g.busy_ratio == doctest::Approx(double(g.b.busy_ns) / double(g.a.busy_ns)));
  }
  RangeStats self = stats_of("decode-small.trace.json");
  for (const GroupDiff& g : diff_stats(a, self, ka, ka).groups) {
    CHECK(g.share_delta_pp == 0.0);
    if (g.has_ratio) CHECK(g.busy_ratio == 1.0);
  }
  REQUIRE(d.kinds.size() == ka.size() + kb.size() - 0);  // the legacy sample has no marker kinds
  CHECK(d.kinds[0].a.present);
  CHECK_FALSE(d.kinds[0].b.present);
}

TEST_CASE("stats metrics: every metric name of the grammar resolves") {
  RangeStats s = stats_of("decode-small.trace.json");
  MetricSet m = stats_metrics(s, summarize_kinds(load_sample("decode-small.trace.json"), UnitAtRequest::automatic, QuantileMethod::inclusive));
  const std::string group = "'" + s.groups.front().name + "'";
  double v = 0;
  GateError e;
  for (const char* metric : {"share", "busy", "events", "p50", "p90", "p99", "max"})
    CHECK_MESSAGE(m.lookup(parsed(std::string(metric) + "(" + group + ") > 0"), &v, &e), metric << ": " << e.message);
  for (const char* metric : {"idle", "parallelism", "publishes", "events", "busy", "wait"})
    CHECK_MESSAGE(m.lookup(parsed(std::string(metric) + " > 0"), &v, &e), metric << ": " << e.message);
  for (const char* metric : {"unit_p50", "unit_p90", "unit_max", "units"})
    CHECK_MESSAGE(m.lookup(parsed(std::string(metric) + "(layer) > 0"), &v, &e), metric << ": " << e.message);
  REQUIRE(m.lookup(parsed("idle > 0"), &v, &e));
  CHECK(v == s.idle_pct);
  REQUIRE(m.lookup(parsed("wait > 0"), &v, &e));
  CHECK(v == doctest::Approx(static_cast<double>(s.wait_ns) / 1000.0));
  REQUIRE(m.lookup(parsed("max(" + group + ") > 0"), &v, &e));
  CHECK(v == doctest::Approx(s.groups.front().dur.max / 1000.0));
}
