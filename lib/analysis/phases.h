#pragma once
// `phases`: per-burst phase attribution lines that speculative-decoding engines print on
// stderr, e.g.
//
//   [glm5-phase] rounds=12 k=4 total=48.31ms | draft=9.02 verify=31.40 | per-round ms: draft=0.752 verify=2.617 total=4.026
//   [glm5-phase-v] rounds=12 k=4 | per-round ms: vkda=1.210 (scan=0.400) vmla=0.830 vrest=0.577 (vffn=0.300)
//
// A line matches when it holds `[TAG] rounds=`; every other line is ignored. Sections are
// separated by '|': the first holds the header (rounds=, and optionally total=...ms and any
// other name=number), a section starting `per-round ms:` holds per-round times, any other
// section per-burst totals in ms. `name=value` is a phase; `(name=value ...)` right after a
// phase holds its sub-phases; `total=` inside a section is the section's total, not a
// phase. Phase names are not fixed.
//
// Per tag: bursts (matching lines), rounds, total ms, and per phase the total ms over the
// bursts (a burst without totals contributes per-round × rounds), its share (top-level
// phases of their sum, sub-phases of their parent) and the per-round ms across bursts (a
// burst without per-round values contributes total / rounds).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gate.h"
#include "quantile.h"

namespace jqtrace {

struct PhaseStats {
  std::string name;
  std::string parent;  ///< empty for a top-level phase
  double ms = 0;
  double share_pct = 0;
  Distribution per_round_ms;
};

struct TagStats {
  std::string tag;
  uint64_t bursts = 0;
  int64_t rounds = 0;
  double total_ms = 0;  ///< Σ header total= (or, without one, Σ top-level phase ms)
  std::vector<PhaseStats> phases;  ///< in order of first appearance
};

/// A malformed matching line: where and why.
struct PhaseLogError {
  std::size_t line = 0, column = 0;
  std::string message;
};

/// Feeds log lines one at a time; tags keep their order of first appearance.
class PhaseLog {
 public:
  /// False with *error for a matching line with a malformed number or shape.
  bool add_line(std::string_view line, std::size_t line_number, PhaseLogError* error);
  /// Per tag, all tags or only `only_tag` (empty: all).
  std::vector<TagStats> summarize(QuantileMethod method, const std::string& only_tag = "") const;
  bool has_tag(const std::string& tag) const;
  std::vector<std::string> tags() const;
  /// Phase lines read so far (every tag's bursts).
  uint64_t bursts() const { return bursts_; }

 private:
  struct PhaseSamples {
    std::string parent;
    double ms = 0;
    std::vector<double> per_round;
  };
  struct TagSamples {
    uint64_t bursts = 0;
    int64_t rounds = 0;
    double total_ms = 0;
    std::vector<std::string> order;
    std::map<std::string, PhaseSamples> phases;
  };
  std::vector<std::string> order_;
  std::map<std::string, TagSamples> tags_;
  uint64_t bursts_ = 0;
};

/// share(PHASE) ms(PHASE) p50(PHASE) for every phase (also as TAG/PHASE; a bare name only
/// when one tag has it), and bursts, rounds, total (ms) when there is one tag.
MetricSet phase_metrics(const std::vector<TagStats>& tags);

}  // namespace jqtrace
