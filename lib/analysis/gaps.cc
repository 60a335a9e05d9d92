#include "gaps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "flat_map.h"
#include "free_memory.h"
#include "jobque.h"
#include "paged_array.h"
#include "parallel.h"
#include "timings.h"

namespace jqtrace {
namespace {

constexpr std::size_t kFatShown = 12;

/// Keeps the kFatShown longest publishes seen (in time order, as they come): a new one takes
/// the place of the shortest kept when it is longer (a tie keeps the earlier).
void keep_if_among_fattest(std::vector<FatPublish>* kept, const FatPublish& p) {
  if (kept->size() < kFatShown) {
    kept->push_back(p);
    return;
  }
  auto shortest = std::min_element(kept->begin(), kept->end(), [](const FatPublish& x, const FatPublish& y) {
    return x.dur_ns < y.dur_ns || (x.dur_ns == y.dur_ns && x.ts_ns > y.ts_ns);  // the later of equals goes first
  });
  if (p.dur_ns <= shortest->dur_ns) return;
  kept->erase(shortest);
  kept->push_back(p);  // still in time order: every kept one came before it
}

/// A span of the model: its lane and row packed in 4 bytes (a reference per chunk is the
/// one per-chunk cost of gaps). The lane takes as few top bits as the lane count needs.
struct SpanRef {
  uint32_t packed;
};

/// A duration as the samples hold it: whole ns in a double (sums and differences of them
/// stay exact below 2^53; the scripts' float µs rounded at every step).
double ns(int64_t duration) { return static_cast<double>(duration); }

/// What one chain contributed in the range: 16 bytes, as its publish and its caller's last
/// stage_wait are kept by reference (a row for every chain is held while gaps runs: 24
/// bytes, with the wait's end as a double, put report -j 2's peak 1 MB higher).
struct ChainRow {
  uint32_t wait = kNoRef;  ///< SpanRef of the caller's stage_wait that ends last (the first of equal ends)
  uint32_t pub = kNoRef;   ///< SpanRef of its (last) publish
  uint32_t chunks = 0;
  union {                     // published chains: one, then the other (order_chunks)
    uint32_t class_index = 0;  ///< into classes_, until the chunks are ordered
    uint32_t first_chunk;      ///< into the chunk order, from then on
  };

  static constexpr uint32_t kNoRef = UINT32_MAX;
  bool published() const { return pub != kNoRef; }
  bool waited() const { return wait != kNoRef; }
};
static_assert(sizeof(ChainRow) == 16);

/// Idle gaps between consecutive busy spans of one lane, fed in time order.
class LaneGaps {
 public:
  void busy(int64_t ts, int64_t end) {
    if (any_ && ts > busy_until_) {
      gaps_.add(ts - busy_until_);
      idle_ += ts - busy_until_;
    }
    busy_until_ = any_ ? std::max(busy_until_, end) : end;
    any_ = true;
  }
  LaneGapMetrics finish(std::string lane, std::string name, QuantileMethod quantiles) {
    LaneGapMetrics m;
    m.lane = std::move(lane);
    m.name = std::move(name);
    m.gaps = gaps_.size();
    m.idle_ns = idle_;
    m.gap_ns = gaps_.summarize(quantiles);
    return m;
  }

 private:
  DurationSample gaps_;
  int64_t idle_ = 0, busy_until_ = 0;
  bool any_ = false;
};

/// One (class, stage)'s samples, a value per chain with chunks in that stage. Effective
/// parallelism is busy / span, derived when summarising; lanes are small counts.
struct StageSamples {
  int64_t stage = 0;
  std::vector<double> span, busy, last, gap;
  std::vector<uint32_t> lanes;
  /// Per chain on 4 lanes or more with a positive span (a "tail" chain), the share of the span
  /// from the median lane's end to the last. Its other tail figures (span, lanes, idle) are
  /// the span, lanes and busy samples of those chains: derived when summarised.
  std::vector<double> tail_share;
};

/// What a run of chains adds to one class: a sample per chain, and per stage with chunks.
/// Runs measured apart are joined in chain order when summarised, so the samples come out
/// in the order one walk over every chain would give.
struct ClassSamples {
  std::vector<double> wall, publish, first_claim;
  std::vector<StageSamples> stages;  ///< in order of first appearance
  ShortListIndex<int64_t> index;     ///< stage -> its place in stages

  StageSamples& stage(int64_t s) {
    std::size_t at = index.find(s, stages.size(), [&](std::size_t i) { return stages[i].stage; });
    if (at != SIZE_MAX) return stages[at];
    stages.emplace_back();
    stages.back().stage = s;
    return stages.back();
  }
};

/// The values of one field of every run, in run order, in one vector; the runs' vectors
/// are freed. Joined by the summary that needs them (on the threads, one field at a time)
/// rather than all at once after the walk: that was a copy of every sample on one thread,
/// a fifth of gaps' time on two.
template <typename Run, typename T>
std::vector<T> take_joined(const std::vector<Run*>& runs, std::vector<T> Run::*field) {
  std::size_t total = 0, filled = 0;
  Run* only = nullptr;
  for (Run* run : runs)
    if (!(run->*field).empty()) {
      total += (run->*field).size();
      ++filled;
      only = run;
    }
  if (filled <= 1) return only ? std::move(only->*field) : std::vector<T>{};
  std::vector<T> all;
  all.reserve(total);
  for (Run* run : runs) {
    all.insert(all.end(), (run->*field).begin(), (run->*field).end());
    std::vector<T>().swap(run->*field);
  }
  return all;
}

struct ClassAccumulator {
  ChainClass out;
  std::vector<ClassSamples> runs;                   ///< what each run of chains measured, in chain order
  std::vector<std::vector<StageSamples*>> stages;  ///< by stage (ascending): each run's samples of it
};

/// One stage of the chain being measured: its chunks' extent, busy sum and lane ends.
struct StageGroup {
  int64_t stage = 0;
  double first = 0, last = 0, busy = 0;
  double last_dur = 0;  ///< the longest chunk among those ending last
  std::vector<std::pair<uint32_t, double>> lane_ends;  ///< by lane, ascending

  /// Chunks come lane after lane (a chain's chunk references are in file order, lane by
  /// lane: order_chunks), so a lane's ends are always the last entry or a new one.
  void add(uint32_t lane, double t0, double d) {
    double t1 = t0 + d;
    bool empty = lane_ends.empty();
    first = empty ? t0 : std::min(first, t0);
    if (empty || t1 > last) last_dur = d;
    else if (t1 == last) last_dur = std::max(last_dur, d);
    last = empty ? t1 : std::max(last, t1);
    busy += d;  // in file order (lane after lane), the order the scripts summed in
    if (!empty && lane_ends.back().first == lane) lane_ends.back().second = std::max(lane_ends.back().second, t1);
    else lane_ends.push_back({lane, t1});
  }
  void reset(int64_t s) {
    stage = s;
    lane_ends.clear();
    busy = 0;
  }
};

/// One thread's walk over a run of one class's chains: the samples it adds to the class,
/// and its scratch space for the chain being measured.
struct ChainWalk {
  ClassSamples samples;
  std::vector<std::pair<uint32_t, double>> one_stage_ends;  ///< (chain, last chunk end) of each one-stage chain
  std::vector<double> lane_ends;       ///< scratch: a stage's lane ends, for their median
  std::vector<StageGroup> groups;      ///< the current chain's stages (first group_count)
  ShortListIndex<int64_t> group_index;  ///< stage -> its place among them
  std::size_t group_count = 0;
};

class GapsBuilder {
 public:
  GapsBuilder(const Trace& t, Range r, const GapsOptions& o)
      : t_(t), r_(r), covers_trace_(r.lo <= t.start_ns && r.hi >= t.end_ns), o_(o) {
    span_names_ = JobqueNames::found(t.names);
    lane_spans_.reserve(t.lanes.size());
    for (const Lane& lane : t.lanes) lane_spans_.push_back(&lane.spans);
  }

  bool build(GapsReport* out, std::string* error) {
    if (!size_refs()) {
      *error = "too many spans to index (a lane with over 2^32 / lanes spans)";
      return false;
    }
    caller_ = caller_lane(t_);
    collect_chains();
    report_.attribution = t_.jobque ? chain_attribution(t_.profile, any_tag_) : Attribution::none;
    report_.by = o_.by == ClassBy::automatic ? (tagged_ ? ClassBy::category : ClassBy::nstages) : o_.by;
    classify_chains();
    order_chunks();
    measure_classes();  // frees the samples before the publish section's arrays exist
    publish_metrics();
    *out = std::move(report_);
    return true;
  }

 private:
  bool in_range(const SpanTable& s, std::size_t i) const { return covers_trace_ || r_.overlaps(s.ts[i], s.end(i)); }

  /// An empty chain id → dense index table sized for the trace's chain ids: an array (2
  /// bytes a span at most) when they are dense, as the tracer numbers them.
  IdMap<uint32_t> chain_index() const {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    std::size_t spans = 0;
    for (const Lane& lane : t_.lanes) {
      const IntColumn& chain = lane.spans.chain;
      for (std::size_t i = 0; i < chain.size(); ++i) {
        lo = std::min(lo, chain[i]);
        hi = std::max(hi, chain[i]);
      }
      spans += chain.size();
    }
    return IdMap<uint32_t>(lo, hi, spans / 2 + 4096);
  }

  /// The dense index of chain, its row made on first sight.
  [[gnu::always_inline]] uint32_t index_of(int64_t chain) {
    uint32_t& slot = (*dense_)[chain];
    if (slot == 0) {
      rows_.push_back(ChainRow{});
      slot = static_cast<uint32_t>(rows_.size());
    }
    return slot - 1;
  }
  ChainRow& row_of(int64_t chain) { return rows_[index_of(chain)]; }

  /// One pass over the spans in range for the chains (in order of first appearance),
  /// their publishes and caller waits, chunk counts and every publish; beside it, on a
  /// second thread when there is one, each lane's idle gaps and the wakes.
  void collect_chains() {
    std::vector<double> wakes;
    report_.lanes.resize(t_.lanes.size());
    run_parallel(2, o_.threads, [&](std::size_t job) {
      if (job == 0) {
        dense_ = chain_index();
        for (std::size_t l = 0; l < t_.lanes.size(); ++l) collect_chain_spans(l);
      } else {
        for (std::size_t l = 0; l < t_.lanes.size(); ++l) report_.lanes[l] = lane_gaps(l, &wakes);
      }
    });
    report_.chains = rows_.size();
    report_.wakes = wakes.size();
    report_.wake_dur_ns = summarize_values(std::move(wakes), o_.quantiles);
  }

  /// Lane l's publishes, chunks and (on the caller) stage waits in range, by chain.
  void collect_chain_spans(std::size_t l) {
    const SpanTable& s = t_.lanes[l].spans;
    for (std::size_t i = 0; i < s.size(); ++i) {
      int64_t name = s.name[i];  // first: most spans are none of these, and need no more reads
      if (name == span_names_.publish) {
        any_tag_ = any_tag_ || publish_tag(s.stage[i]) != 0;  // the whole trace's: how chains are named
        if (!in_range(s, i)) continue;
        row_of(s.chain[i]).pub = ref(l, i).packed;
        pubs_.push_back(ref(l, i));
        tagged_ = tagged_ || publish_tag(s.stage[i]) != 0;
      } else if (name == span_names_.chunk) {
        if (!in_range(s, i)) continue;
        ++rows_[index_of(s.chain[i])].chunks;
      } else if (name == span_names_.stage_wait && l == caller_) {
        if (!in_range(s, i)) continue;
        ChainRow& c = row_of(s.chain[i]);
        if (!c.waited() || time_of(s.ts[i]) + ns(s.dur[i]) > wait_end(c)) c.wait = ref(l, i).packed;
      }
    }
  }

  /// Lane l's idle gaps between its busy spans in range (in time order), and its wakes.
  LaneGapMetrics lane_gaps(std::size_t l, std::vector<double>* wakes) const {
    const SpanTable& s = t_.lanes[l].spans;
    LaneGaps gaps;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!in_range(s, i)) continue;
      int64_t name = s.name[i];
      if (span_names_.busy(name)) gaps.busy(s.ts[i], s.end(i));
      else if (name == span_names_.wake) wakes->push_back(ns(s.dur[i]));
    }
    return gaps.finish(t_.lane_label(l), std::string(t_.thread_name(l)), o_.quantiles);
  }

  /// The published chains class by class (in chain order within each), and their chunks
  /// grouped by chain in that order, in file order within each (a counting sort): memory
  /// is one reference per chunk. A class's chains and chunks are then one stretch each,
  /// measured, summarised and freed before the next class's samples exist.
  void order_chunks() {
    class_begin_.assign(classes_.size() + 1, 0);
    for (std::size_t index = 0; index < rows_.size(); ++index)
      if (rows_[index].published()) ++class_begin_[rows_[index].class_index + 1];
    for (std::size_t k = 0; k < classes_.size(); ++k) class_begin_[k + 1] += class_begin_[k];
    std::vector<std::size_t> cursor(class_begin_.begin(), class_begin_.end() - 1);
    chain_order_.resize(class_begin_.back());
    for (std::size_t index = 0; index < rows_.size(); ++index)
      if (rows_[index].published()) chain_order_[cursor[rows_[index].class_index]++] = static_cast<uint32_t>(index);
    uint32_t next = 0;
    class_chunk_begin_.assign(1, 0);
    for (std::size_t k = 0; k < classes_.size(); ++k) {
      for (std::size_t at = class_begin_[k]; at < class_begin_[k + 1]; ++at) {
        ChainRow& c = rows_[chain_order_[at]];
        c.first_chunk = next;
        next += c.chunks;
        c.chunks = 0;
      }
      class_chunk_begin_.push_back(next);
    }
    order_.resize(next);
    // A second pass over the model, each chunk's chain found again by its id: keeping its
    // dense index from the first pass would cost 4 more bytes a chunk at the peak.
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const SpanTable& s = t_.lanes[l].spans;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.name[i] != span_names_.chunk || !in_range(s, i)) continue;
        ChainRow& c = rows_[(*dense_)[s.chain[i]] - 1];
        if (c.published()) order_[c.first_chunk + c.chunks++] = ref(l, i);  // the rest are not measured
      }
    }
    dense_.reset();  // chain ids are not needed past this point
  }

  /// The end of chain c's last caller stage_wait in ns, ts + dur as the scripts added them.
  double wait_end(const ChainRow& c) const {
    SpanRef w{c.wait};
    return time_of(ts(w)) + ns(dur(w));
  }

  /// A time as the samples hold it: ns from the range's start, in a double. From the file's
  /// zero, an epoch clock (1.7e18 ns) is past 2^53, where a double holds 256 ns steps.
  double time_of(int64_t ts) const { return static_cast<double>(ts - r_.lo); }

  SpanRef ref(std::size_t lane, std::size_t row) const {
    return {static_cast<uint32_t>((lane << row_bits_) | row)};
  }
  uint32_t lane(SpanRef r) const { return static_cast<uint32_t>(uint64_t{r.packed} >> row_bits_); }  // 0 when 32
  uint32_t row(SpanRef r) const { return static_cast<uint32_t>(r.packed & row_mask_); }
  const SpanTable& spans(SpanRef r) const { return *lane_spans_[lane(r)]; }
  int64_t ts(SpanRef r) const { return spans(r).ts[row(r)]; }
  int64_t dur(SpanRef r) const { return spans(r).dur[row(r)]; }
  int64_t stage(SpanRef r) const { return spans(r).stage[row(r)]; }
  int64_t arg(SpanRef r) const { return spans(r).arg[row(r)]; }
  int64_t chain(SpanRef r) const { return spans(r).chain[row(r)]; }

  /// Splits the 32 bits of a SpanRef between lane and row; false when the trace is too
  /// big. The all-ones ref is kept free for ChainRow::kNoRef.
  bool size_refs() {
    unsigned lane_bits = 0;
    while ((std::size_t{1} << lane_bits) < t_.lanes.size()) ++lane_bits;
    row_bits_ = 32 - lane_bits;
    row_mask_ = (uint64_t{1} << row_bits_) - 1;
    for (const Lane& l : t_.lanes)
      if (l.spans.size() >= (std::size_t{1} << row_bits_) - 1) return false;
    return true;
  }

  /// Gives every published chain its class; classes are made in order of first chain,
  /// whose publish arg is the class's chunks per chain.
  void classify_chains() {
    std::map<int64_t, uint32_t> by_publish_stage;  // a handful of distinct values
    std::map<std::string, uint32_t> by_key;
    for (std::size_t index = 0; index < rows_.size(); ++index) {
      ChainRow& c = rows_[index];
      if (!c.published()) continue;
      int64_t pub_stage = stage(SpanRef{c.pub});
      auto known = by_publish_stage.find(pub_stage);
      if (known == by_publish_stage.end()) {
        auto [key, name] = class_key(pub_stage);
        auto [it, added] = by_key.try_emplace(key, static_cast<uint32_t>(classes_.size()));
        if (added) {
          classes_.emplace_back();
          classes_.back().out.key = key;
          classes_.back().out.name = name;
          classes_.back().out.chunks_per_chain = arg(SpanRef{c.pub});
        }
        known = by_publish_stage.emplace(pub_stage, it->second).first;
      }
      c.class_index = known->second;
    }
  }

  std::pair<std::string, std::string> class_key(int64_t pub_stage) const {
    int64_t nstages = publish_nstages(pub_stage);
    if (report_.by == ClassBy::nstages) return {std::to_string(nstages), stage_count_class_name(nstages)};
    ChainName category = chain_category(nstages, publish_tag(pub_stage), t_.profile, report_.attribution);
    return {category.name, category.name};
  }

  /// Every class's summaries, measured class by class so that only one class's samples
  /// exist at a time (they are most of gaps' memory), and the end of each one-stage chain
  /// for the publish section, in chain order.
  void measure_classes() {
    std::vector<std::vector<std::optional<TailMetrics>>> tails(classes_.size());
    // The class with the most chunks last: its samples are the most, and by then the
    // chunk references of every other class are freed.
    std::vector<std::size_t> by_chunks(classes_.size());
    for (std::size_t k = 0; k < by_chunks.size(); ++k) by_chunks[k] = k;
    std::stable_sort(by_chunks.begin(), by_chunks.end(), [&](std::size_t a, std::size_t b) { return class_chunks(a) < class_chunks(b); });
    for (std::size_t k : by_chunks) {
      measure_class(k);
      summarize(k, &tails[k]);
      // The next class's samples may be made on the other thread, whose arena does not
      // reuse what this one's freed: without this, report -j 2 of the 8-lane 200 MB bench
      // trace peaked 2 MB higher, 53 MB instead of 51 (0.26 of the file instead of 0.25).
      if (o_.threads > 1) release_free_memory();
    }
    rows_.clear();
    order_.clear();
    chain_order_.clear();
    std::sort(one_stage_ends_.begin(), one_stage_ends_.end());  // chain indices are unique
    // The old scripts' order: most stages first; categories in order of first appearance.
    std::vector<std::size_t> order(classes_.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    if (report_.by == ClassBy::nstages)
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::stoll(classes_[a].out.key) > std::stoll(classes_[b].out.key);
      });
    for (std::size_t k : order) {
      for (std::optional<TailMetrics>& tail : tails[k])
        if (tail) report_.tail.push_back(std::move(*tail));
      report_.classes.push_back(std::move(classes_[k].out));
    }
    classes_.clear();
  }

  std::size_t class_chunks(std::size_t k) const { return class_chunk_begin_[k + 1] - class_chunk_begin_[k]; }

  /// Class k's per-chain and per-stage samples. Its chains are cut into runs measured on
  /// the threads, then joined in chain order: the same samples in the same order at any -j.
  void measure_class(std::size_t k) {
    std::vector<std::size_t> cuts = chain_runs(k);
    std::vector<ChainWalk> walks(cuts.size() - 1);
    run_parallel(walks.size(), o_.threads, [&](std::size_t w) { measure_run(cuts[w], cuts[w + 1], walks[w]); });
    for (ChainWalk& walk : walks) {
      classes_[k].runs.push_back(std::move(walk.samples));
      one_stage_ends_.insert(one_stage_ends_.end(), walk.one_stage_ends.begin(), walk.one_stage_ends.end());
      walk = ChainWalk{};
    }
  }

  /// Bounds (into chain_order_) of the runs of class k's chains to measure: about equal
  /// chunk counts, a few runs per thread so that a thread on a busy core takes fewer.
  /// Reads only class k's part of chain_order_ (other classes' may be freed).
  std::vector<std::size_t> chain_runs(std::size_t k) {
    std::size_t begin = class_begin_[k], end = class_begin_[k + 1];
    std::size_t chunk_lo = class_chunk_begin_[k], chunks = class_chunks(k);
    std::vector<std::size_t> cuts{begin};
    std::size_t per_run = std::max<std::size_t>(o_.min_chunks_per_run, 1);
    // Every thread gets a run of even a small class: classes are measured one at a time.
    std::size_t runs = o_.threads <= 1 ? 1 : std::min<std::size_t>(4 * o_.threads, std::max<std::size_t>(o_.threads, chunks / per_run));
    for (std::size_t r = 1; r < runs; ++r) {
      std::size_t target = chunk_lo + chunks * r / runs;
      std::size_t lo = cuts.back(), hi = end;
      while (lo < hi) {  // the first chain whose chunks start at or after target
        std::size_t mid = lo + (hi - lo) / 2;
        if (rows_[chain_order_[mid]].first_chunk < target) lo = mid + 1;
        else hi = mid;
      }
      if (lo > cuts.back() && lo < end) cuts.push_back(lo);
    }
    cuts.push_back(end);
    return cuts;
  }

  /// One walk over chain_order_[begin, end) (chains of one class in order of first
  /// appearance), which reads their chunk references and the span columns front to back.
  /// The chunk references and the chain order are released as they are read, as the
  /// samples grow.
  void measure_run(std::size_t begin, std::size_t end, ChainWalk& walk) {
    if (begin == end) return;
    decltype(chain_order_)::Releaser chains_read(chain_order_, begin);
    decltype(order_)::Releaser chunks_read(order_, rows_[chain_order_[begin]].first_chunk);
    ClassSamples& acc = walk.samples;
    for (std::vector<double>* v : {&acc.wall, &acc.publish, &acc.first_claim}) v->reserve(end - begin);  // a value a chain at most
    for (std::size_t at = begin; at < end; ++at) {
      uint32_t index = chain_order_[at];
      const ChainRow& c = rows_[index];
      chains_read.behind(at);
      chunks_read.behind(c.first_chunk);
      SpanRef pub{c.pub};
      double pub_t0 = time_of(ts(pub)), pub_end = pub_t0 + ns(dur(pub));
      acc.wall.push_back((c.waited() ? wait_end(c) : pub_end) - pub_t0);
      acc.publish.push_back(ns(dur(pub)));
      group_stages(c, pub_end, acc, walk);
      const std::vector<StageGroup>& groups = walk.groups;
      if (publish_nstages(stage(pub)) == 1 && walk.group_count > 0) {
        double last_end = groups[0].last;
        for (std::size_t g = 1; g < walk.group_count; ++g) last_end = std::max(last_end, groups[g].last);
        walk.one_stage_ends.push_back({index, last_end});
      }
      for (std::size_t g = 0; g < walk.group_count; ++g)
        stage_sample(acc.stage(groups[g].stage), groups[g], g ? &groups[g - 1] : nullptr, walk.lane_ends);
    }
  }

  /// Splits chain c's chunks into walk.groups by stage (ascending; file order within
  /// each) and records the first claim by a worker after the publish.
  void group_stages(const ChainRow& c, double pub_end, ClassSamples& acc, ChainWalk& walk) const {
    walk.group_count = 0;
    walk.group_index.clear();
    bool claimed = false;
    double first_worker = 0;
    for (uint32_t k = 0; k < c.chunks; ++k) {
      SpanRef chunk = order_[c.first_chunk + k];
      uint32_t l = lane(chunk), i = row(chunk);
      const SpanTable& s = *lane_spans_[l];
      double t0 = time_of(s.ts[i]);
      if (l != caller_) {
        first_worker = claimed ? std::min(first_worker, t0) : t0;
        claimed = true;
      }
      group_for(s.stage[i], walk).add(l, t0, ns(s.dur[i]));
    }
    if (claimed) acc.first_claim.push_back(first_worker - pub_end);
    std::sort(walk.groups.begin(), walk.groups.begin() + static_cast<std::ptrdiff_t>(walk.group_count),
              [](const StageGroup& a, const StageGroup& b) { return a.stage < b.stage; });
  }

  /// The group of stage s among the walk's first group_count (reused between chains).
  static StageGroup& group_for(int64_t s, ChainWalk& walk) {
    std::vector<StageGroup>& groups = walk.groups;
    std::size_t at = walk.group_index.find(s, walk.group_count, [&](std::size_t g) { return groups[g].stage; });
    if (at != SIZE_MAX) return groups[at];
    if (walk.group_count == groups.size()) groups.emplace_back();
    StageGroup& group = groups[walk.group_count++];
    group.reset(s);
    return group;
  }

  /// Per stage with chunks: span, busy, lanes, last chunk, the gap from the previous
  /// stage; and the tail share of a stage on 4 lanes or more with a positive span.
  static void stage_sample(StageSamples& out, const StageGroup& g, const StageGroup* prev, std::vector<double>& ends) {
    double span = g.last - g.first;
    out.span.push_back(span);
    out.busy.push_back(g.busy);
    out.lanes.push_back(static_cast<uint32_t>(g.lane_ends.size()));
    out.last.push_back(g.last_dur);
    if (prev) out.gap.push_back(g.first - prev->last);
    if (!has_tail(g.lane_ends.size(), span)) return;
    ends.clear();
    for (const auto& le : g.lane_ends) ends.push_back(le.second);
    auto median = ends.begin() + static_cast<std::ptrdiff_t>(ends.size() / 2);
    std::nth_element(ends.begin(), median, ends.end());
    out.tail_share.push_back((g.last - *median) / span);  // g.last: the latest lane end
  }

  /// Whether a stage's chain is in the stage tails: on 4 lanes or more, with a positive span.
  static bool has_tail(std::size_t lanes, double span) { return lanes >= 4 && span > 0; }

  /// Class k's summaries and tails from its samples, which are freed: the class's own
  /// summaries and each of its stages' go on the threads apart.
  void summarize(std::size_t k, std::vector<std::optional<TailMetrics>>* tails) {
    ClassAccumulator& acc = classes_[k];
    std::map<int64_t, std::vector<StageSamples*>> by_stage;  // a class has a handful of stages
    for (ClassSamples& run : acc.runs)
      for (StageSamples& st : run.stages) by_stage[st.stage].push_back(&st);
    for (auto& [stage, parts] : by_stage) acc.stages.push_back(std::move(parts));
    acc.out.stages.resize(acc.stages.size());
    tails->resize(acc.stages.size());
    constexpr std::size_t kWholeClass = SIZE_MAX;
    std::vector<std::size_t> jobs{kWholeClass};  // a stage, or the class's own
    for (std::size_t st = 0; st < acc.stages.size(); ++st) jobs.push_back(st);
    run_parallel(jobs.size(), o_.threads, [&](std::size_t j) {
      if (jobs[j] == kWholeClass) summarize_class(acc);
      else summarize_stage(acc, jobs[j], &(*tails)[jobs[j]]);
    });
    acc.runs.clear();
    acc.runs.shrink_to_fit();
    acc.stages.clear();
  }

  void summarize_class(ClassAccumulator& acc) {
    ChainClass& out = acc.out;
    std::vector<ClassSamples*> runs;
    for (ClassSamples& run : acc.runs) runs.push_back(&run);
    auto summary = [&](std::vector<double> ClassSamples::*field) {
      return summarize_values(take_joined(runs, field), o_.quantiles);
    };
    out.wall_ns = summary(&ClassSamples::wall);
    out.n = out.wall_ns.count;
    out.publish_ns = summary(&ClassSamples::publish);
    // The smallest first claim: a worker can start a chunk before the publish's recorded
    // end, so the mean can be negative and only the minimum shows by how much.
    for (const ClassSamples* run : runs)
      for (double v : run->first_claim) out.first_claim_min_ns = std::min(out.first_claim_min_ns, v);
    out.first_claim_ns = summary(&ClassSamples::first_claim);
  }

  /// Stage st of a class (stages sorted): its metrics, and its tail when it has one.
  void summarize_stage(ClassAccumulator& acc, std::size_t st, std::optional<TailMetrics>* tail) const {
    const std::vector<StageSamples*>& runs = acc.stages[st];
    StageMetrics& m = acc.out.stages[st];
    m.stage = runs.front()->stage;
    auto summary = [&](std::vector<double> StageSamples::*field) {
      return summarize_values(take_joined(runs, field), o_.quantiles);
    };
    std::vector<double> span = take_joined(runs, &StageSamples::span), busy = take_joined(runs, &StageSamples::busy);
    std::vector<uint32_t> lanes = take_joined(runs, &StageSamples::lanes);
    std::vector<double> eff(span.size());
    for (std::size_t i = 0; i < eff.size(); ++i) eff[i] = span[i] > 0 ? busy[i] / span[i] : 1.0;
    m.eff_par = summarize_values(std::move(eff), o_.quantiles);
    TailSamples tails = tail_samples(span, busy, lanes);
    tails.share = take_joined(runs, &StageSamples::tail_share);
    if (!tails.span.empty()) *tail = tail_metrics(acc.out, m.stage, std::move(tails));
    m.span_ns = summarize_values(std::move(span), o_.quantiles);
    m.busy_ns = summarize_values(std::move(busy), o_.quantiles);
    m.lanes = summarize_values(std::vector<double>(lanes.begin(), lanes.end()), o_.quantiles);
    std::vector<uint32_t>().swap(lanes);
    m.last_chunk_ns = summary(&StageSamples::last);
    m.gap_from_prev_ns = summary(&StageSamples::gap);
  }

  /// The tail chains' samples of a stage, in chain order.
  struct TailSamples {
    std::vector<double> span, lanes, idle, share;
  };

  /// The span, lanes and idle fraction of the stage's tail chains, from its samples.
  static TailSamples tail_samples(const std::vector<double>& span, const std::vector<double>& busy,
                                  const std::vector<uint32_t>& lanes) {
    TailSamples t;
    for (std::size_t i = 0; i < span.size(); ++i) {
      if (!has_tail(lanes[i], span[i])) continue;
      double n = static_cast<double>(lanes[i]);
      t.span.push_back(span[i]);
      t.lanes.push_back(n);
      t.idle.push_back(1.0 - busy[i] / (span[i] * n));  // fractions, as the script kept them
    }
    return t;
  }

  TailMetrics tail_metrics(const ChainClass& cls, int64_t stage, TailSamples samples) const {
    TailMetrics m;
    m.key = cls.key;
    m.name = cls.name;
    m.stage = stage;
    m.n = samples.span.size();
    m.span_ns = summarize_values(std::move(samples.span), o_.quantiles);
    m.lanes = summarize_values(std::move(samples.lanes), o_.quantiles);
    // The scripts printed 100 * median(fractions): scale after summarising, as they did.
    auto percent = [](double fraction) { return fraction * 100.0; };
    m.idle_pct = map_values(summarize_values(std::move(samples.idle), o_.quantiles), percent);
    m.tail_pct = map_values(summarize_values(std::move(samples.share), o_.quantiles), percent);
    return m;
  }

  /// trace_publish_tail.py: publishes by time, the fat ones, and the gap from each
  /// one-stage chain's last chunk to the next publish.
  void publish_metrics() {
    sort_publishes();
    PublishMetrics& m = report_.publish;
    m.count = pubs_.size();
    m.fat_ns = o_.fat_ns;
    std::vector<double> starts, durs;
    starts.reserve(pubs_.size());
    durs.reserve(pubs_.size());
    for (SpanRef p : pubs_) {
      starts.push_back(time_of(ts(p)));
      durs.push_back(ns(dur(p)));
      if (dur(p) <= o_.fat_ns) continue;
      ++m.fat_count;
      keep_if_among_fattest(&m.fat, {ts(p), dur(p), publish_nstages(stage(p)), arg(p), chain(p)});
    }
    // The largest first (issue 65: the first 12 by time named none of a run's worst); ties by time.
    std::stable_sort(m.fat.begin(), m.fat.end(), [](const FatPublish& x, const FatPublish& y) { return x.dur_ns > y.dur_ns; });
    std::vector<SpanRef>().swap(pubs_);
    std::vector<double> gaps, next_durs;
    for (const auto& one : one_stage_ends_) {
      double end = one.second;
      auto next = std::upper_bound(starts.begin(), starts.end(), end);
      if (next == starts.end()) continue;
      gaps.push_back(*next - end);
      next_durs.push_back(durs[static_cast<std::size_t>(next - starts.begin())]);
    }
    std::vector<std::pair<uint32_t, double>>().swap(one_stage_ends_);
    m.durations = summarize_values(std::move(durs), o_.quantiles);
    m.post_cls_gap_ns = summarize_values(std::move(gaps), o_.quantiles);
    m.next_publish_dur_ns = summarize_values(std::move(next_durs), o_.quantiles);
  }

  /// Publishes by start time, ties in file order. Usually already so (one caller lane).
  void sort_publishes() {
    auto by_start = [&](SpanRef a, SpanRef b) { return ts(a) < ts(b); };
    if (std::is_sorted(pubs_.begin(), pubs_.end(), by_start)) return;
    std::vector<std::pair<int64_t, SpanRef>> keyed;
    keyed.reserve(pubs_.size());
    for (SpanRef p : pubs_) keyed.push_back({ts(p), p});
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < keyed.size(); ++i) pubs_[i] = keyed[i].second;
  }

  const Trace& t_;
  std::vector<const SpanTable*> lane_spans_;  ///< t_.lanes[l].spans without the deque's lookup
  Range r_;
  bool covers_trace_;  ///< every span is in range (the default scope): no span's ts and dur read to know it
  GapsOptions o_;
  JobqueNames span_names_;
  std::size_t caller_ = SIZE_MAX;
  unsigned row_bits_ = 32;
  uint64_t row_mask_ = UINT32_MAX;
  bool tagged_ = false;      ///< a publish in range carries a category tag
  bool any_tag_ = false;  ///< a publish anywhere carries one (SPEC §1.4 attribution)
  std::optional<IdMap<uint32_t>> dense_;  ///< chain id → dense index + 1 (while chains are collected)
  PagedArray<ChainRow, 12> rows_;  ///< by dense index (pages: grows without copying; kept until every class is measured)
  std::vector<std::size_t> class_begin_;  ///< class k's chains are chain_order_[class_begin_[k], class_begin_[k + 1])
  std::vector<std::size_t> class_chunk_begin_;  ///< and their chunks order_[class_chunk_begin_[k], class_chunk_begin_[k + 1])
  PagedArray<uint32_t, 12> chain_order_;  ///< published chains' dense indices, class by class
  PagedArray<SpanRef, 12> order_;  ///< their chunk references, grouped by chain in chain_order_
  std::vector<SpanRef> pubs_;
  std::vector<ClassAccumulator> classes_;  ///< in order of first chain
  std::vector<std::pair<uint32_t, double>> one_stage_ends_;  ///< (chain, last chunk end) of each one-stage chain
  GapsReport report_;
};

}  // namespace

std::string stage_count_class_name(int64_t nstages) {
  switch (nstages) {
    case 4: return "attn(4st)";
    case 3: return "attn(3st)";
    case 2: return "ffn";
    case 1: return "final";
    default: return std::to_string(nstages) + "st";
  }
}

bool compute_gaps(const Trace& trace, Range range, const GapsOptions& options, GapsReport* report,
                  std::string* error) {
  PhaseClock clock("analysis", PhaseKind::scales);
  return GapsBuilder(trace, range, options).build(report, error);
}

}  // namespace jqtrace
