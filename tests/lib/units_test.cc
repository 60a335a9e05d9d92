// Units that follow the program (issue 51): generated programs whose markers start or
// close their units, with pauses on either side, back to back, a marker lane that stopped
// recording, and kinds nested in others. Wherever the evidence is clear the rule is called
// right; elsewhere it may be ambiguous; it is never confidently wrong.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "scope.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

/// A generated program: the caller lane (tid 1) does each unit's work as spans of about
/// 1000 us (jittered), stamping a marker of `kind` before (starters) or after (closers)
/// it, with a pause between units; work before the first unit (prologue) and after the
/// last (epilogue); a worker lane (tid 0) that may run on after the caller stopped.
struct Program {
  bool starters = true;
  int units = 8;
  double pause = 0;     ///< between units, in units of work
  double prologue = 0;  ///< in units of work
  double epilogue = 0;
  double worker_after = 0;  ///< the worker records this long after the caller stopped (units)
  int layers = 0;       ///< > 0: each unit holds this many `layer` units (markers as `starters`)
  bool layers_start = true;
  uint64_t seed = 1;
};

class ProgramWriter {
 public:
  explicit ProgramWriter(const Program& p) : p_(p), seed_(p.seed) {}

  std::string json() {
    double t = 100;
    work(&t, p_.prologue * 1000);
    for (int u = 0; u < p_.units; ++u) {
      if (u > 0 || p_.prologue > 0) t += p_.pause * 1000;
      if (p_.starters) marker("token", t - 1, u);
      if (p_.layers > 0) {
        for (int l = 0; l < p_.layers; ++l) {
          if (p_.layers_start) marker("layer", t - 0.5, u * p_.layers + l);
          work(&t, 1000.0 / p_.layers * jitter());
          if (!p_.layers_start) marker("layer", t + 0.25, u * p_.layers + l);
        }
        work(&t, 60);  // the unit's own end (sampling) after its last layer
      } else {
        work(&t, 1000 * jitter());
      }
      if (!p_.starters) marker("token", t + 0.5, u);
      t += 2;  // the next unit's markers come after this one's
    }
    work(&t, p_.epilogue * 1000);
    caller_end_ = t;
    double worker_end = t + p_.worker_after * 1000;
    // The worker: a chunk per unit of work, then on until worker_end.
    events_ += R"(,{"ph":"X","pid":1,"tid":0,"name":"chunk","ts":100,"dur":)" + num(worker_end - 100) +
               R"(,"args":{"chain":1,"stage":0}})";
    return R"({"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"publish","ts":99,"dur":0.5,"args":{"chain":1,"stage":257}})" +
           events_ + "]}";
  }
  double caller_end() const { return caller_end_; }

 private:
  double jitter() {  // 0.7 .. 1.3, deterministic
    seed_ = seed_ * 6364136223846793005ull + 1442695040888963407ull;
    return 0.7 + 0.6 * static_cast<double>(seed_ >> 33) / static_cast<double>(1ull << 31);
  }
  static std::string num(double us) { return std::to_string(us); }
  /// Spans of about 50 us, 0.5 us apart, for `us` of work from *t.
  void work(double* t, double us) {
    double end = *t + us;
    while (*t < end - 0.5) {
      double d = std::min(50.0, end - *t - 0.5);
      events_ += R"(,{"ph":"X","pid":1,"tid":1,"name":"chunk","ts":)" + num(*t) + R"(,"dur":)" + num(d) +
                 R"(,"args":{"chain":1,"stage":0}})";
      *t += d + 0.5;
    }
    *t = std::max(*t, end);
  }
  void marker(const char* kind, double ts, int arg) {
    events_ += std::string(R"(,{"ph":"i","s":"t","pid":1,"tid":1,"name":")") + kind + R"(","ts":)" + num(ts) +
               R"(,"args":{"arg":)" + std::to_string(arg) + "}}";
  }

  Program p_;
  uint64_t seed_;
  std::string events_;
  double caller_end_ = 0;
};

struct Called {
  UnitRule rule;
  std::vector<Unit> units;
  double caller_end_us = 0;
};

Called call(const Program& p, const char* kind = "token") {
  ProgramWriter w(p);
  Trace t;
  load_string(w.json(), &t);
  REQUIRE(t.has_time);
  Called c;
  c.rule = unit_rule(t, kind, UnitRequest{});
  c.units = units_of(t, kind, UnitRequest{});
  c.caller_end_us = w.caller_end();
  return c;
}

/// "right", "ambiguous" or "WRONG".
std::string verdict(const UnitRule& rule, bool starters) {
  if (rule.ambiguous) return "ambiguous";
  return (rule.at == UnitAt::start) == starters ? "right" : "WRONG";
}

}  // namespace

TEST_CASE("auto on generated programs: pauses, back to back, prologues and epilogues: clear cases right, none wrong") {
  int clear = 0, right = 0, wrong = 0, cases = 0;
  uint64_t seed = 7;
  for (bool starters : {true, false})
    for (int units : {2, 3, 8, 33})
      for (double pause : {0.0, 0.02, 0.2, 0.5, 2.0})
        for (double prologue : {0.0, 0.03, 0.3, 1.0, 3.0})
          for (double epilogue : {0.0, 0.03, 0.3, 1.0, 3.0}) {
            Program p{starters, units, pause, prologue, epilogue, 0, 0, true, ++seed};
            Called c = call(p);
            std::string v = verdict(c.rule, starters);
            ++cases;
            // Clear: the pauses sit on one side of every marker, or the stretch no unit
            // would hold (the prologue of starters, the epilogue of closers) is nearly empty.
            double unheld = starters ? prologue : epilogue;
            bool is_clear = (pause >= 0.2 && units >= 4 && unheld <= 1.0) || unheld <= 0.03;
            INFO(std::string(starters ? "starters" : "closers") << " units " << units << " pause " << pause << " prologue "
                                                     << prologue << " epilogue " << epilogue << ": " << v << " "
                                                     << unit_rule_label(c.rule));
            CHECK(v != "WRONG");
            wrong += v == "WRONG";
            if (is_clear) {
              ++clear;
              CHECK(v == "right");
              right += v == "right";
            }
          }
  CHECK(cases == 1000);
  CHECK(clear > 400);  // the sweep reached the cases it is about
  CHECK(right == clear);
  CHECK(wrong == 0);
}

TEST_CASE("a marker lane that stopped recording: units end where it stopped, and say so") {
  for (bool starters : {true, false}) {
    // The caller stops mid-unit (its ring filled); the worker records 30 units longer.
    Program p{starters, 3, 0.5, 0, 0.4, 30, 0, true, 11};
    Called c = call(p);
    INFO(unit_rule_label(c.rule));
    CHECK(verdict(c.rule, starters) == "right");
    CHECK(c.rule.lane_stopped);
    CHECK(c.rule.stop_ns == doctest::Approx(c.caller_end_us * 1000).epsilon(0.001));
    REQUIRE(c.units.size() == 3);
    for (const Unit& u : c.units) CHECK(u.range.hi <= c.rule.stop_ns);
    // No unit is the stub that ran on to the trace's end (30 units of the worker alone).
    for (const Unit& u : c.units) CHECK(u.range.length() < 3'000'000);
  }
}

TEST_CASE("a marker lane that records to near the end: the outer units reach the trace's ends (SPEC: start and end)") {
  // The worker runs 0.3 units (~300 us, under the 1 ms margin of a stopped lane) past the
  // caller's last event: that work is the last starter unit's, not nobody's.
  Program p{true, 4, 0.5, 0, 0.2, 0.3, 0, true, 12};
  Called c = call(p);
  REQUIRE(verdict(c.rule, true) == "right");
  CHECK_FALSE(c.rule.lane_stopped);
  REQUIRE(c.units.size() == 4);
  double trace_end_ns = (c.caller_end_us + 300) * 1000;
  CHECK(c.units.back().range.hi == doctest::Approx(trace_end_ns).epsilon(1e-6));
  CHECK(c.units.back().range.hi > c.caller_end_us * 1000 + 250'000);
  // Closers: the first unit starts at the trace's start (the publish at 99 us), not at the
  // caller's first chunk.
  Program q{false, 4, 0.5, 0.2, 0, 0, 0, true, 13};
  Called d = call(q);
  REQUIRE(verdict(d.rule, false) == "right");
  CHECK(d.units.front().range.lo == 99'000);
}

TEST_CASE("kinds nested in others: layers end at token boundaries, and the nesting is found") {
  for (bool tokens_start : {true, false})
    for (bool layers_start : {true, false}) {
      Program p{tokens_start, 6, 0.5, 0, 0, 0, 8, layers_start, 21};
      Called tokens = call(p, "token");
      Called layers = call(p, "layer");
      INFO("tokens " << unit_rule_label(tokens.rule) << "; layers " << unit_rule_label(layers.rule));
      CHECK(verdict(tokens.rule, tokens_start) == "right");
      CHECK(verdict(layers.rule, layers_start) == "right");
      CHECK(layers.rule.nested_in == "token");
      CHECK(tokens.rule.nested_in.empty());
      // No layer crosses a token boundary: each lies inside one token unit.
      REQUIRE(layers.units.size() == 48);
      for (const Unit& l : layers.units) {
        bool inside = false;
        for (const Unit& tk : tokens.units) inside = inside || (l.range.lo >= tk.range.lo && l.range.hi <= tk.range.hi);
        CHECK(inside);
        // A layer's work is ~125 us. The pause (500 us) between tokens is in no layer where the
        // conventions differ; where they agree, the marker structure puts it in the layer
        // beside the token boundary (the last starter's, the first closer's).
        if (tokens_start != layers_start) CHECK(l.range.length() < 400'000);
      }
    }
}

TEST_CASE("back to back layers inside back to back tokens are decided by the tokens' heads and tails") {
  // No pause anywhere: the whole extent's head and tail is one sample; each token is another.
  Program p{false, 12, 0.0, 0, 0, 0, 16, true, 5};
  Called layers = call(p, "layer");
  INFO(unit_rule_label(layers.rule));
  CHECK(verdict(layers.rule, true) == "right");
  CHECK(layers.rule.starts >= 12);
}

TEST_CASE("--unit-at names a rule per kind") {
  UnitRequest r;
  std::string error;
  REQUIRE(parse_unit_request("token=end,layer=start", &r, &error));
  CHECK(r.of("token") == UnitAtRequest::end);
  CHECK(r.of("layer") == UnitAtRequest::start);
  CHECK(r.of("step") == UnitAtRequest::automatic);
  REQUIRE(parse_unit_request("start,token=end", &r, &error));
  CHECK(r.of("step") == UnitAtRequest::start);
  CHECK(r.of("token") == UnitAtRequest::end);
  CHECK_FALSE(parse_unit_request("token=middle", &r, &error));
  CHECK(error.find("'middle' is not a unit rule") != std::string::npos);
  CHECK_FALSE(parse_unit_request("=end", &r, &error));
}

TEST_CASE("a read without span tables (window's, an index's) measures instants as a full read does, then drops the span times") {
  // The jobque sample has chains: its span-less read once joined categories through a chain
  // table it never built (the fuzzer's seed found it under UBSan).
  std::string text = sample_bytes("decode-small.trace.json");
  Trace full, lean;
  auto a = Source::from_string(text);
  load_trace(*a, &full, nullptr);
  LoadOptions no_spans;
  no_spans.spans = false;
  auto b = Source::from_string(text);
  load_trace(*b, &lean, nullptr, no_spans);
  REQUIRE(full.instants.size() > 0);
  REQUIRE(lean.instants.size() == full.instants.size());
  for (std::size_t i = 0; i < full.instants.size(); ++i) {
    CHECK(lean.instants.quiet_before[i] == full.instants.quiet_before[i]);
    CHECK(lean.instants.quiet_after[i] == full.instants.quiet_after[i]);
    CHECK(lean.instants.busy_before[i] == full.instants.busy_before[i]);
    CHECK(lean.instants.busy_after[i] == full.instants.busy_after[i]);
  }
  for (const Lane& lane : lean.lanes) CHECK(lane.spans.size() == 0);
  CHECK(unit_rule(lean, "layer", UnitRequest{}).nested_in == "token");
}

namespace {

UnitRule evidence(int32_t starts, int32_t closes, double head, double tail) {
  UnitRule r;
  r.automatic = r.measured = true;
  r.starts = starts;
  r.closes = closes;
  r.head_gaps = head;
  r.tail_gaps = tail;
  return r;
}

}  // namespace

TEST_CASE("units: a rule decided on several traces' evidence together") {
  // diff's j1/j2 (6 tokens, seeds 1 and 2): end alone, ambiguous alone, end together.
  UnitRule together = decide_jointly({evidence(0, 1, 0.16, 0), evidence(1, 2, 0.28, 0)});
  CHECK(together.at == UnitAt::end);
  CHECK_FALSE(together.ambiguous);
  CHECK(together.starts == 1);
  CHECK(together.closes == 3);
  // Clear each way alone: together no side has 3 times the other's samples.
  UnitRule split = decide_jointly({evidence(5, 0, 0.05, 1), evidence(0, 5, 1, 0.05)});
  CHECK(split.ambiguous);
  CHECK(split.at == UnitAt::start);
  // End is possible only when every trace's first unit would hold some work under it.
  CHECK(decide_jointly({evidence(0, 9, 0.5, 0), evidence(0, 9, 0.05, 0)}).ambiguous);
  CHECK(decide_jointly({evidence(9, 0, 0, 0.5), evidence(9, 0, 0, 0.5)}).at == UnitAt::start);
  // The votes are weighed as one trace's are: 6 against 2 wins, 5 against 2 does not.
  CHECK(decide_jointly({evidence(4, 1, 0, 1), evidence(2, 1, 0, 1)}).at == UnitAt::start);
  CHECK(decide_jointly({evidence(3, 1, 0, 1), evidence(2, 1, 0, 1)}).ambiguous);
}

TEST_CASE("an ambiguous rule says why its evidence did not decide") {
  UnitRule rule;
  rule.automatic = rule.measured = rule.ambiguous = true;
  rule.starts = 0;
  rule.closes = 35;
  rule.head_gaps = 0;
  rule.tail_gaps = 0;
  // dasLLAMA's steps: every pause says end, but the first step marker opens the lane's work.
  CHECK(ambiguity_reason(rule) ==
        "the pauses say end (35 to 0), but the first marker opens the lane's work (head 0.00 gaps): under end the "
        "first unit would hold none of it");
  rule.starts = 12;
  rule.closes = 0;
  rule.head_gaps = 1.0;
  CHECK(ambiguity_reason(rule).find("the pauses say start (12 to 0), but the last marker closes") == 0);
  rule.starts = 4;
  rule.closes = 3;
  CHECK(ambiguity_reason(rule) == "neither start nor end has 3 times the other's evidence (4 start, 3 end)");
  rule.ambiguous = false;
  CHECK(ambiguity_reason(rule).empty());
}
