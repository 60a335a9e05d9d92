#pragma once
// `gaps`: the chain, tail, publish and lane-gap metrics of SPEC §2, which the old Python
// scripts trace_gaps.py, trace_tail.py and trace_publish_tail.py printed, plus idle gaps per
// lane. A pure function of the trace model and a range (spans overlapping it count, as if
// the scripts had been run on that window).
//
// The scripts' metrics in their order of operations, but on whole ns (held in doubles:
// exact below 2^53) rather than their float µs, so every time is exact and is written as
// its exact decimal of µs (7.305, not 7.305000000022119). At their precision the numbers
// are the scripts', except a last digit at an exact half, where the scripts' float noise
// rounded either way. Time distributions are in ns; eff_par, lanes and the percentages
// are plain numbers.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "quantile.h"
#include "scope.h"
#include "trace.h"

namespace jqtrace {

/// automatic: by category when a publish in range carries a category tag, else by stage count.
enum class ClassBy { automatic, nstages, category };

struct StageMetrics {
  int64_t stage = 0;
  Distribution span_ns, busy_ns, eff_par, lanes, last_chunk_ns;
  Distribution gap_from_prev_ns;  ///< count 0 for the first stage with chunks
};

struct ChainClass {
  std::string key;               ///< the stage count, or the category name
  std::string name;              ///< attn(4st), attn(3st), ffn, final, Nst; or the category
  uint64_t n = 0;                ///< chains with a publish
  int64_t chunks_per_chain = 0;  ///< publish arg of the class's first chain (file order)
  Distribution wall_ns, publish_ns, first_claim_ns;
  /// The smallest first claim (it can be negative); +infinity when no worker took a chunk.
  double first_claim_min_ns = std::numeric_limits<double>::infinity();
  std::vector<StageMetrics> stages;
};

struct TailMetrics {
  std::string key, name;
  int64_t stage = 0;
  uint64_t n = 0;
  Distribution span_ns, lanes, idle_pct, tail_pct;
};

struct FatPublish {
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t stages = 0, chunks = 0, chain = 0;
};

struct PublishMetrics {
  uint64_t count = 0;
  int64_t fat_ns = 0;  ///< the threshold
  uint64_t fat_count = 0;
  Distribution durations;  ///< of every publish, ns
  std::vector<FatPublish> fat;  ///< the 12 longest, longest first (ties by time)
  Distribution post_cls_gap_ns, next_publish_dur_ns;
};

struct LaneGapMetrics {
  std::string lane, name;
  uint64_t gaps = 0;
  int64_t idle_ns = 0;
  Distribution gap_ns;
};

struct GapsReport {
  ClassBy by = ClassBy::nstages;  ///< never automatic: what was used
  Attribution attribution = Attribution::none;  ///< how category classes were named
  uint64_t chains = 0;  ///< chains with any publish, chunk or caller stage_wait in range
  uint64_t wakes = 0;
  Distribution wake_dur_ns;
  std::vector<ChainClass> classes;
  std::vector<TailMetrics> tail;
  PublishMetrics publish;
  std::vector<LaneGapMetrics> lanes;
};

struct GapsOptions {
  ClassBy by = ClassBy::automatic;
  int64_t fat_ns = 5000;  ///< publishes longer than this are "fat"
  unsigned threads = 1;   ///< threads for the walk over chains and the summaries (any count: same report)
  /// With threads, a class's chains are measured in runs of at least this many chunks (but
  /// at least one run a thread), up to four runs a thread (tests make it small to cut small
  /// traces into many runs).
  std::size_t min_chunks_per_run = 1 << 14;
  /// Inclusive, as everywhere (never beyond the data); exclusive reproduces the scripts gaps
  /// replaces (SPEC §2 "Quantiles").
  QuantileMethod quantiles = QuantileMethod::inclusive;
};

/// False with a reason when the trace is beyond what gaps can index (more than 4G spans).
bool compute_gaps(const Trace& trace, Range range, const GapsOptions& options, GapsReport* report,
                  std::string* error);

/// The old scripts' class names: 4 attn(4st), 3 attn(3st), 2 ffn, 1 final, else "Nst".
std::string stage_count_class_name(int64_t nstages);

}  // namespace jqtrace
