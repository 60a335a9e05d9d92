// The changes table's rows and Holm's family (unit_changes.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "significance.h"
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

TEST_CASE("changes: Holm's family is the tests, rows of too few or ambiguous units are not in m") {
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
  CHECK_FALSE(row_of(rows, "fence")->test.tested);
}
