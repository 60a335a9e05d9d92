// The changes table's rows and Holm's family (unit_changes.h).
#include <doctest/doctest.h>

#include <random>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "markers.h"
#include "significance.h"
#include "stats.h"
#include "test_util.h"
#include "unit_changes.h"

using namespace jqtrace;

namespace {

/// A kind's samples: n units of base + step*i ns.
KindSamples kind_of(const std::string& name, bool ambiguous, int n, int64_t base, int64_t step) {
  KindSamples k;
  k.kind = name;
  k.ambiguous = ambiguous;
  for (int i = 0; i < n; ++i) k.dur_ns.push_back(base + step * i);
  return k;
}

const ChangeRow* row_of(const std::vector<ChangeRow>& rows, const std::string& kind) {
  for (const ChangeRow& r : rows)
    if (r.kind == kind && r.group == kUnitRow) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("changes: Holm's family is the tests, rows of ambiguous units are not in m, kinds of too few units have none") {
  // token: a real shift; step: cut by a guess, as shifted; fence: too few units.
  std::vector<KindSamples> a = {kind_of("token", false, 12, 1000, 10), kind_of("step", true, 12, 1000, 10),
                                kind_of("fence", false, 3, 1000, 10)};
  std::vector<KindSamples> b = {kind_of("token", false, 12, 1100, 10), kind_of("step", true, 12, 1100, 10),
                                kind_of("fence", false, 3, 1100, 10)};
  std::vector<ChangeRow> rows = unit_changes(a, b, 0.05);
  const ChangeRow* token = row_of(rows, "token");
  const ChangeRow* step = row_of(rows, "step");
  REQUIRE(token);
  REQUIRE(step);
  REQUIRE(token->test.tested);
  // One test in the family: its p_adj is its p (it was doubled by the ambiguous row).
  CHECK(token->p_adj == doctest::Approx(token->test.p));
  CHECK(token->significant);
  CHECK_FALSE(step->significant);
  // Too few units: no rows at all (a generic trace has thousands of such kinds), named apart.
  CHECK_FALSE(row_of(rows, "fence"));
  std::vector<UntestedKind> untested = untested_kinds(a, b);
  REQUIRE(untested.size() == 1);
  CHECK(untested[0].kind == "fence");
  CHECK(untested[0].units_a == 3);
  CHECK(untested[0].units_b == 3);
}

namespace {

/// A group's busy time in each unit of k: `runs_in` of every `of` units hold base + 7*i ns
/// (scaled by `scale`), the others none.
void add_group(KindSamples* k, const std::string& group, int runs_in, int of, int64_t base, double scale) {
  std::vector<int64_t>& busy = k->busy_ns[group];
  for (std::size_t i = 0; i < k->dur_ns.size(); ++i)
    busy.push_back(static_cast<int>(i) % of < runs_in
                       ? static_cast<int64_t>(static_cast<double>(base + 7 * static_cast<int64_t>(i)) * scale)
                       : 0);
}

const ChangeRow* group_row(const std::vector<ChangeRow>& rows, const std::string& group) {
  for (const ChangeRow& r : rows)
    if (r.group == group) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("changes: a group's row compares the units it runs in, and the share of them moves in a row of its own") {
  // 40 layers a side; ffn runs in half of A's and half of B's, 30% heavier in B: with the
  // units without it as zeros in both samples, the shift was pulled toward 0.
  KindSamples a = kind_of("layer", false, 40, 1000, 10), b = kind_of("layer", false, 40, 1000, 10);
  add_group(&a, "ffn", 1, 2, 1000, 1.0);
  add_group(&b, "ffn", 1, 2, 1000, 1.3);
  // moe runs in a quarter of A's layers and in three quarters of B's, as heavy.
  add_group(&a, "moe", 1, 4, 5000, 1.0);
  add_group(&b, "moe", 3, 4, 5000, 1.0);
  std::vector<ChangeRow> rows = unit_changes({a}, {b}, 0.05);
  const ChangeRow* ffn = group_row(rows, "ffn");
  REQUIRE(ffn);
  CHECK(ffn->of == ChangeRow::Of::time);
  CHECK(ffn->test.n_a == 20);
  CHECK(ffn->test.n_b == 20);
  CHECK(ffn->runs.n_a == 40);
  CHECK(ffn->runs.pct_a() == doctest::Approx(50));
  // The units it runs in: 1000..1266 ns, against 1.3 times those.
  CHECK(ffn->test.median_a == doctest::Approx(1000 + 7 * 19));
  CHECK(ffn->test.ratio_lo <= 1.3);
  CHECK(ffn->test.ratio_hi >= 1.3);
  CHECK(ffn->significant);
  CHECK_FALSE(group_row(rows, units_row_label("ffn")));  // its share did not move
  const ChangeRow* moe_share = group_row(rows, units_row_label("moe"));
  REQUIRE(moe_share);
  CHECK(moe_share->of == ChangeRow::Of::units_share);
  CHECK(moe_share->runs.delta_pp == doctest::Approx(50));
  CHECK(moe_share->runs.ci_lo_pp > 25);
  CHECK(moe_share->runs.ci_hi_pp < 70);
  CHECK(moe_share->significant);
  // Its time row: the same work where it runs, no change.
  const ChangeRow* moe = group_row(rows, "moe");
  REQUIRE(moe);
  CHECK(moe->test.n_a == 10);
  CHECK(moe->test.n_b == 30);
  CHECK_FALSE(moe->significant);
}

TEST_CASE("significance: the share of units, against a hand-worked case") {
  // 10 of 40 against 30 of 40: pooled 0.5, sigma = sqrt(0.25 * 2 / 40) = 0.1118;
  // z = (0.5 - 0.025) / 0.1118 = 4.249, p = erfc(4.249 / sqrt 2) = 2.15e-5.
  ProportionTest t = compare_proportions(10, 40, 30, 40);
  CHECK(t.tested);
  CHECK(t.delta_pp == doctest::Approx(50));
  CHECK(t.p == doctest::Approx(2.15e-5).epsilon(0.01));
  // Newcombe's interval (Wilson: 0.25 in [0.1419, 0.4019], 0.75 in [0.5981, 0.8581]):
  // 0.5 - sqrt(0.1519^2 + 0.1519^2) = 0.2851, 0.5 + sqrt(0.1081^2 + 0.1081^2) = 0.6529.
  CHECK(t.ci_lo_pp == doctest::Approx(28.51).epsilon(0.001));
  CHECK(t.ci_hi_pp == doctest::Approx(65.29).epsilon(0.001));
  CHECK(compare_proportions(40, 40, 40, 40).p == 1);  // every unit both sides
  CHECK_FALSE(compare_proportions(3, 5, 4, 5).tested);
}

TEST_CASE("changes: every kind's units measured in one walk give each unit's busy time as a walk a kind does") {
  // Kinds nested in others (token, layer, step: their units' starts and ends do not rise
  // together across kinds), one-marker kinds (chrome-small) and a lane that stopped.
  for (const char* name : {"decode-small.trace.json", "chrome-small.json", "ring-full.trace.json"}) {
    CAPTURE(name);
    const Trace& trace = test::load_sample(name);
    SpanIndex index(trace);
    std::vector<KindSamples> samples;
    add_unit_samples(trace, index, UnitRequest{}, 2, &samples, false, MeasurePolicy{true, {}});
    REQUIRE_FALSE(samples.empty());
    for (const KindSamples& k : samples) {
      CAPTURE(k.kind);
      std::vector<UnitRow> rows = unit_rows(trace, index, k.kind, UnitRequest{});
      REQUIRE(rows.size() == k.dur_ns.size());
      for (std::size_t u = 0; u < rows.size(); ++u) {
        CHECK(rows[u].unit.range.length() == k.dur_ns[u]);
        std::map<std::string, int64_t> expected;
        for (const GroupStats& g : rows[u].stats.groups)
          if (g.busy_ns > 0) expected[g.name] = g.busy_ns;
        std::map<std::string, int64_t> got;
        for (const auto& [group, busy] : k.busy_ns)
          if (busy[u] > 0) got[group] = busy[u];
        CHECK(got == expected);
      }
    }
  }
}

namespace {

/// Layers of three types (arg 0, 1, 2: 100, 1,000 and 10,000 ns, +-3% noise), nested in
/// tokens or not, times `factor`.
KindSamples typed_layers(int tokens, double factor, uint64_t seed, bool nested) {
  std::mt19937_64 rng(seed);
  KindSamples k;
  k.kind = "layer";
  UnitRule rule;
  if (nested) rule.nested_in = "token";
  k.rules.push_back(rule);
  for (int t = 0; t < tokens; ++t)
    for (int64_t arg : {0, 1, 2}) {
      double base = arg == 0 ? 100 : arg == 1 ? 1000 : 10000;
      double noise = 0.97 + 0.06 * static_cast<double>(rng() % 1000) / 1000.0;
      k.dur_ns.push_back(static_cast<int64_t>(base * 100 * noise * factor));
      k.args.push_back(arg);
    }
  return k;
}

}  // namespace

TEST_CASE("changes: a nested kind whose args repeat is compared arg by arg, and sees what the pooled test cannot") {
  // A 2% slowdown of every layer: within each type it is most of the spread; pooled, the
  // types' hundredfold spread drowns it.
  for (bool nested : {true, false}) {
    std::vector<ChangeRow> rows =
        unit_changes({typed_layers(10, 1.0, 1, nested)}, {typed_layers(10, 1.02, 2, nested)}, 0.05);
    const ChangeRow* layer = row_of(rows, "layer");
    REQUIRE(layer);
    CHECK(layer->test.stratified() == nested);
    CHECK(layer->test.strata == (nested ? 3u : 1u));
    CHECK(layer->test.n_a == 30);
    if (nested) {
      CHECK(layer->test.p < 0.01);
      CHECK(layer->test.ratio_lo <= 1.02);
      CHECK(layer->test.ratio_hi >= 1.02);
    } else {
      CHECK(layer->test.p > 0.05);  // pooled, not seen
    }
  }
  // Too few units of an arg on a side (2 tokens: 2 a side): the plain test.
  std::vector<ChangeRow> few = unit_changes({typed_layers(2, 1.0, 1, true)}, {typed_layers(3, 1.0, 2, true)}, 0.05);
  REQUIRE(row_of(few, "layer"));
  CHECK_FALSE(row_of(few, "layer")->test.stratified());
}
