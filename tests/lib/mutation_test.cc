// Robustness: thousands of damaged copies of a real-looking trace (bytes flipped, inserted,
// deleted, the file cut) go through the validator and the model builder. Nothing may
// crash, hang or trip the sanitizers CI builds with; every run must end in a status.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "gaps.h"
#include "markers.h"
#include "stats.h"
#include "test_util.h"
#include "window.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {


std::string mutate(std::string s, std::mt19937& rng) {
  const char kNasty[] = "{}[],:\"\\-.0123456789eE\n\x00\xff tfn";
  int edits = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    std::size_t at = std::uniform_int_distribution<std::size_t>(0, s.size() - 1)(rng);
    char c = kNasty[std::uniform_int_distribution<std::size_t>(0, sizeof kNasty - 2)(rng)];
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
      case 0: s[at] = c; break;
      case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c); break;
      case 2: s.erase(at, std::uniform_int_distribution<std::size_t>(1, 40)(rng)); break;
      case 3: s.resize(at); break;
    }
  }
  return s;
}

}  // namespace

namespace {
/// Every analysis over a damaged trace: none may crash (CI runs this under ASan and UBSan).
void analyse_everything(const std::string& damaged) {
  Trace t;
  if (load_string(damaged, &t).status == ReadStatus::input_error) return;
  SpanIndex index(t);
  for (GroupBy by : {GroupBy::category, GroupBy::name, GroupBy::lane, GroupBy::cat}) {
    StatsOptions o;
    o.by = by;
    o.hist = true;
    compute_stats(t, index, whole_trace(t), o);
  }
  for (const KindSummary& k : summarize_kinds(t, UnitAtRequest::automatic, QuantileMethod::inclusive))
    unit_rows(t, index, k.kind, k.rule.at);
  if (t.jobque) {
    GapsReport g;
    std::string error;
    compute_gaps(t, whole_trace(t), GapsOptions{}, &g, &error);
  }
  Trace light;
  EventIndex events;
  LoadOptions load;
  load.spans = false;
  load.tee = &events;
  auto src = Source::from_string(damaged);
  load_trace(*src, &light, nullptr, load);
  events.finish(light.end_ns);
  for (const EventIndex::Entry& e : select_window(events, whole_trace(light)).entries(events))
    REQUIRE(e.end_offset <= damaged.size());
}
}  // namespace

TEST_CASE("damaged traces never crash stats, markers, gaps or window") {
  std::mt19937 rng(7);
  for (const char* sample : {"tiny.trace.json", "chrome-small.json", "single-lane.trace.json", "array-form.json"}) {
    std::string original = sample_bytes(sample);
    REQUIRE(!original.empty());
    for (int i = 0; i < 300; ++i) analyse_everything(mutate(original, rng));
  }
}

TEST_CASE("damaged traces never crash the validator or the model builder") {
  std::mt19937 rng(20261129);
  for (const char* sample : {"broken.trace.json", "chrome-small.json", "ring-full.trace.json"}) {
    std::string original = sample_bytes(sample);
    REQUIRE(!original.empty());
    int statuses[3] = {0, 0, 0};
    for (int i = 0; i < 400; ++i) {
      std::string damaged = mutate(original, rng);
      ValidateRun v = validate_string(damaged);
      Trace t;
      ReadResult r = load_string(damaged, &t);
      ++statuses[static_cast<int>(r.status)];
      // Every problem points somewhere inside the file, or nowhere.
      for (const Diagnostic& d : v.got.diagnostics)
        if (d.offset != Diagnostic::kNoOffset) REQUIRE(d.offset <= damaged.size());
    }
    CHECK(statuses[static_cast<int>(ReadStatus::input_error)] > 0);  // the mutations do bite
  }
}
