#include "whatif.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "jobque.h"
#include "flat_map.h"
#include "parallel.h"
#include "quantile.h"
#include "rounding.h"
#include "timings.h"

namespace jqtrace {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

enum class SpanKind : uint8_t { other, chunk, publish, stage_wait, wake, stage };
enum NodeFlags : uint8_t {
  kByReady = 1,       ///< the binding predecessor is the readiness (else the lane's previous span)
  kReadyAtStart = 2,  ///< the readiness is the publish's start (a chunk claimed while it ran)
  kNested = 4,        ///< started inside its lane's previous span: keeps its offset from its start
  kPredLater = 8,     ///< its pred is placed after it in the replay's order (a cycle): read as recorded
  kReadyLater = 16,   ///< ... its ready
};

/// A (chain, stage) or (category, stage) pair as one hash key.
struct PairHash {
  std::size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    uint64_t h = static_cast<uint64_t>(p.first) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(p.second);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};
template <typename V>
using PairMap = std::unordered_map<std::pair<int64_t, int64_t>, V, PairHash>;

int64_t median_of(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

/// How many of a lane's spans start by `at`.
std::size_t spans_started_by(const SpanTable& s, int64_t at) {
  std::size_t lo = 0, hi = s.size();
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (s.ts[mid] <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// ns x factor, to the nearest ns (halves away from zero).
int64_t scaled(int64_t ns, double factor) { return round_half_away(static_cast<double>(ns) * factor); }

/// (chain, stage) as one int64 key, where it fits (stages 0..255 and chains within ±2^54:
/// all but hostile traces); false where it does not. The stage is the high bits and the
/// chain the low ones, so that the chains of one stage number have neighbouring keys: the
/// FlatMap keeps runs of 64 neighbouring keys in one block of slots. (Packed as chain * 256
/// + stage, a chain's few stages took the first slots of a block of their own, every
/// block's first slots collided, and probing was a tenth of a whatif.)
bool packed_stage_key(int64_t chain, int64_t stage, int64_t* key) {
  constexpr int64_t kChainBias = int64_t{1} << 54;
  if (stage < 0 || stage > 255 || chain <= -kChainBias || chain >= kChainBias) return false;
  *key = (stage << 55) | (chain + kChainBias);
  return true;
}

}  // namespace

/// What a replay reads of a node (40 bytes). The gap after its binding predecessor is not
/// kept: the recorded times give it.
struct ReplayGraph::Slot {
  int64_t ts = 0, dur = 0;    ///< recorded (a stage: ts its recorded completion, dur 0)
  uint32_t pred = kNone;      ///< the lane's latest-ending non-wake span before it
  uint32_t ready = kNone;     ///< chunk: its publish or previous stage; stage_wait: its stage
  uint32_t stage = kNone;     ///< chunk, stage: the stage's index (balance, its chunks)
  uint32_t cap = kNone;       ///< chunk, publish: its (group, stage)'s work cap in caps_
  uint32_t category = 0;
  SpanKind kind = SpanKind::other;
  uint8_t flags = 0;
  int64_t recorded_end() const { return ts + dur; }
};

/// Builds the graph in span ids (a span's id: its lane's offset plus its index there; the
/// stages' nodes after the spans) and the order a replay reads them in.
class ReplayGraph::Builder {
 public:
  Builder(ReplayGraph& g, double work_cap) : g_(g), work_cap_(work_cap), names_(JobqueNames::found(g.trace_.names)) {}

  void run() {
    index_spans();
    link_stages();
    bind();
    cap_work();
    HugeTable<uint32_t> ids = order();
    drop_lookups();
    lay_out(ids);
  }

 private:
  ReplayGraph& g_;
  double work_cap_;
  JobqueNames names_;
  HugeTable<uint32_t> lane_of_;  ///< per span id
  HugeTable<Slot> nodes_;        ///< per span id, then per stage (spans_ + s); indices in ids
  /// Stage ids: (chain, stage) packed into one key where it fits (packed_stage_key), else
  /// through the pair map; each stage's chain and chunk count, made with its id.
  FlatMap<uint32_t> packed_stage_ids_;
  PairMap<uint32_t> other_stage_ids_;
  std::size_t stages_ = 0;
  std::vector<int64_t> stage_chain_;
  std::vector<uint32_t> stage_chunk_counts_;
  std::vector<uint32_t> stage_begin_, stage_chunks_;  ///< per stage id: its chunks' ids (CSR)
  std::vector<int64_t> stage_recorded_;
  /// Every publish's id, by chain and then time; a chain's are at publish_runs_[chain].
  std::vector<uint32_t> publishes_;
  struct Run {
    uint32_t begin = 0, count = 0;
  };
  FlatMap<Run> publish_runs_;

  const SpanTable& table(uint32_t g) const { return g_.trace_.lanes[lane_of_[g]].spans; }
  std::size_t local(uint32_t g) const { return g - g_.offset_[lane_of_[g]]; }
  int64_t chain(uint32_t g) const { return table(g).chain[local(g)]; }
  int64_t stage(uint32_t g) const { return table(g).stage[local(g)]; }
  bool is_stage(uint32_t id) const { return id >= g_.spans_; }
  int64_t recorded_end(uint32_t id) const {
    return is_stage(id) ? stage_recorded_[id - g_.spans_] : nodes_[id].recorded_end();
  }

  SpanKind kind_of(int64_t name) const {
    if (name == names_.chunk) return SpanKind::chunk;
    if (name == names_.publish) return SpanKind::publish;
    if (name == names_.stage_wait) return SpanKind::stage_wait;
    if (name == names_.wake) return SpanKind::wake;
    return SpanKind::other;
  }

  /// Lanes, kinds, categories, each span's lane predecessor and the frontier instants read.
  void index_spans() {
    const Trace& t = g_.trace_;
    g_.offset_.assign(t.lanes.size() + 1, 0);
    for (std::size_t l = 0; l < t.lanes.size(); ++l) g_.offset_[l + 1] = g_.offset_[l] + t.lanes[l].spans.size();
    g_.spans_ = g_.offset_.back();
    lane_of_.resize(g_.spans_);
    // Room for the stages' nodes too (lay_out appends them): growing a table of every
    // span later copied all of it (a second of a whatif on a 570 MB trace). A stage is
    // made for a chunk or a stage_wait: there are no more stages than those.
    std::size_t chained = 0;
    for (const Lane& lane : t.lanes)
      for (std::size_t i = 0; i < lane.spans.size(); ++i) {
        int64_t name = lane.spans.name[i];
        chained += name == names_.chunk || name == names_.stage_wait;
      }
    nodes_.reserve(g_.spans_ + chained);
    nodes_.resize(g_.spans_);
    g_.lane_frontier_.assign(t.lanes.size(), kNone);
    g_.last_work_end_ = INT64_MIN;
    for (std::size_t l = 0; l < t.lanes.size(); ++l) {
      const SpanTable& s = t.lanes[l].spans;
      uint32_t frontier = kNone;  // lane-local
      int64_t frontier_end = INT64_MIN;
      for (std::size_t i = 0; i < s.size(); ++i) {
        auto g = static_cast<uint32_t>(g_.offset_[l] + i);
        lane_of_[g] = static_cast<uint32_t>(l);
        Slot& n = nodes_[g];
        n.ts = s.ts[i];
        n.dur = s.dur[i];
        n.kind = kind_of(s.name[i]);
        n.category = s.category.empty() ? 0 : static_cast<uint32_t>(s.category[i]);
        if (frontier != kNone) n.pred = static_cast<uint32_t>(g_.offset_[l] + frontier);
        if (n.kind != SpanKind::wake && s.end(i) >= frontier_end) {
          frontier = static_cast<uint32_t>(i);
          frontier_end = s.end(i);
          g_.last_work_end_ = std::max(g_.last_work_end_, frontier_end);
        }
        if (n.kind == SpanKind::publish) {
          publishes_.push_back(g);
          g_.has_publishes_ = true;
        }
      }
      if (frontier != kNone) g_.lane_frontier_[l] = static_cast<uint32_t>(g_.offset_[l] + frontier);
    }
  }

  /// The id of (chain, stage), made on first use when `make`; kNone when there is none.
  uint32_t stage_id(int64_t c, int64_t s, bool make) {
    int64_t key = 0;
    bool packed = packed_stage_key(c, s, &key);
    if (packed) {
      if (const uint32_t* id = packed_stage_ids_.find(key)) return *id;
    } else if (auto it = other_stage_ids_.find({c, s}); it != other_stage_ids_.end()) {
      return it->second;
    }
    if (!make) return kNone;
    auto id = static_cast<uint32_t>(stages_++);
    if (packed) packed_stage_ids_[key] = id;
    else other_stage_ids_[{c, s}] = id;
    stage_chain_.push_back(c);
    g_.stage_number_.push_back(s);
    stage_chunk_counts_.push_back(0);
    return id;
  }

  /// Each stage's chunks, completion and median; each chunk's and stage_wait's stage; each
  /// chain's publishes in time order.
  void link_stages() {
    {  // by chain, then time: sorted as (chain, ts, id) triples, read once each
      std::vector<std::tuple<int64_t, int64_t, uint32_t>> keyed;
      keyed.reserve(publishes_.size());
      for (uint32_t p : publishes_) keyed.emplace_back(chain(p), nodes_[p].ts, p);
      std::sort(keyed.begin(), keyed.end());
      for (std::size_t k = 0; k < keyed.size(); ++k) publishes_[k] = std::get<2>(keyed[k]);
    }
    publish_runs_.reserve(publishes_.size());  // no more chains than publishes
    for (std::size_t k = 0; k < publishes_.size(); ++k) {
      Run& run = publish_runs_[chain(publishes_[k])];
      if (run.count++ == 0) run.begin = static_cast<uint32_t>(k);
      else if (run.count == 2) ++g_.anomalies_.republished_chains;
    }
    // Room for two stages a publish up front (a guess: a chain has a few): growing the map
    // from empty rehashed it a dozen times, 0.09 s of the 0.33 s this loop took on the
    // 570 MB bench trace. A wrong guess costs growth, or a table twice the size it needed.
    packed_stage_ids_.reserve(publishes_.size() * 2);
    // The lanes are read side by side, the same share of each at a time (about the same
    // stretch of time): read a lane at a time, each lane swept the whole stage-id map, on
    // 32 lanes 32 sweeps of a table bigger than the cache.
    const std::size_t lanes = g_.offset_.size() - 1, rounds = std::max<std::size_t>(1, g_.spans_ / 4096);
    std::vector<std::size_t> done(lanes, 0);
    for (std::size_t round = 1; round <= rounds; ++round)
      for (std::size_t l = 0; l < lanes; ++l) {
        const SpanTable& s = g_.trace_.lanes[l].spans;
        std::size_t until = s.size() * round / rounds;  // whole lanes by the last round
        for (std::size_t i = done[l]; i < until; ++i) {
          Slot& n = nodes_[g_.offset_[l] + i];
          if (n.kind != SpanKind::chunk && n.kind != SpanKind::stage_wait) continue;
          n.stage = stage_id(s.chain[i], s.stage[i], true);
          if (n.kind == SpanKind::stage_wait) g_.has_waits_ = true;
          else ++stage_chunk_counts_[n.stage];
        }
        done[l] = until;
      }
    std::vector<uint32_t>& counts = stage_chunk_counts_;
    stage_begin_.assign(stages_ + 1, 0);
    for (std::size_t s = 0; s < stages_; ++s) stage_begin_[s + 1] = stage_begin_[s] + counts[s];
    stage_chunks_.resize(stage_begin_.back());
    for (uint32_t g = 0; g < g_.spans_; ++g)
      if (nodes_[g].kind == SpanKind::chunk) stage_chunks_[stage_begin_[nodes_[g].stage + 1] - counts[nodes_[g].stage]--] = g;
    stage_recorded_.assign(stages_, INT64_MIN);
    g_.stage_median_.assign(stages_, 0);
    std::vector<int64_t> durations;
    for (std::size_t s = 0; s < stages_; ++s) {
      durations.clear();
      for (uint32_t k = stage_begin_[s]; k < stage_begin_[s + 1]; ++k) {
        // A stage's chunks lie across the lanes: asked for ahead, their reads overlap.
        if (k + 16 < stage_chunks_.size()) __builtin_prefetch(&nodes_[stage_chunks_[k + 16]]);
        const Slot& c = nodes_[stage_chunks_[k]];
        stage_recorded_[s] = std::max(stage_recorded_[s], c.recorded_end());
        durations.push_back(c.dur);
      }
      g_.stage_median_[s] = median_of(durations);
    }
    // Each stage's chain's publish: the latest before its first chunk.
    g_.stage_publish_.assign(stages_, kNone);
    for (std::size_t s = 0; s < stages_; ++s)
      if (has_chunks(static_cast<uint32_t>(s)))
        g_.stage_publish_[s] = publish_before(stage_chain_[s], nodes_[stage_chunks_[stage_begin_[s]]].ts);
    std::vector<uint32_t> ready = stage_readiness();
    for (uint32_t g = 0; g < g_.spans_; ++g) {
      Slot& n = nodes_[g];
      if (n.kind == SpanKind::stage_wait) {
        if (has_chunks(n.stage)) n.ready = static_cast<uint32_t>(g_.spans_) + n.stage;
      } else if (n.kind == SpanKind::chunk) {
        n.ready = ready[n.stage] == kEachChunk ? publish_before(chain(g), n.ts) : ready[n.stage];
      }
    }
  }

  bool has_chunks(uint32_t s) const { return stage_begin_[s + 1] > stage_begin_[s]; }

  /// The chain's latest publish that started by `at` (its first when none did); kNone when
  /// it has none.
  uint32_t publish_before(int64_t c, int64_t at) const {
    const Run* run = publish_runs_.find(c);
    if (!run) return kNone;
    auto first = publishes_.begin() + run->begin, last = first + run->count;
    if (run->count == 1) return *first;  // most chains: no search (each probe missed the cache)
    auto after = std::upper_bound(first, last, at, [&](int64_t t, uint32_t p) { return t < nodes_[p].ts; });
    return after == first ? *first : *(after - 1);
  }

  /// Per stage, its chunks' readiness: its chain's publish (stage 0), or its previous stage;
  /// kNone when that was not recorded, kEachChunk for a stage 0 of a chain published more
  /// than once (each chunk follows the latest publish before it). Found once a stage, not
  /// once a chunk: the lookups were a third of the graph's links.
  static constexpr uint32_t kEachChunk = kNone - 1;
  std::vector<uint32_t> stage_readiness() {
    std::vector<uint32_t> ready(stages_, kNone);
    for (std::size_t s = 0; s < stages_; ++s) {
      int64_t c = stage_chain_[s], number = g_.stage_number_[s];
      if (number == 0) {
        const Run* run = publish_runs_.find(c);
        if (run) ready[s] = run->count == 1 ? publishes_[run->begin] : kEachChunk;
        continue;
      }
      uint32_t previous = stage_id(c, number - 1, false);
      if (previous != kNone && has_chunks(previous)) ready[s] = static_cast<uint32_t>(g_.spans_) + previous;
    }
    return ready;
  }

  /// Each span's binding predecessor and the gap after it, from the recording alone.
  void bind() {
    for (uint32_t g = 0; g < g_.spans_; ++g) {
      Slot& n = nodes_[g];
      if (n.pred != kNone && n.ts < nodes_[n.pred].recorded_end()) {  // nested in its predecessor
        ++g_.anomalies_.nested;
        n.flags |= kNested;
        continue;
      }
      int64_t pred_end = n.pred == kNone ? INT64_MIN : nodes_[n.pred].recorded_end();
      int64_t ready_at = INT64_MIN;
      if (n.kind == SpanKind::chunk && n.ready != kNone) {
        ready_at = recorded_end(n.ready);
        // A chunk claimed while its publish ran: the publish had queued the work before it
        // returned (on real traces a preempted 1.98 ms publish had its chunks claimed 5 us in).
        if (!is_stage(n.ready) && n.ts < ready_at && n.ts >= nodes_[n.ready].ts) {
          ++g_.anomalies_.claimed_during_publish;
          n.flags |= kReadyAtStart;
          ready_at = nodes_[n.ready].ts;
        }
      }
      if (ready_at == INT64_MIN && pred_end == INT64_MIN) continue;  // follows nothing: stays
      bool by_ready = ready_at > pred_end;
      if (by_ready) n.flags |= kByReady;
      if (by_ready && n.ts < ready_at) ++g_.anomalies_.early_chunks;
    }
  }

  /// Each (group, stage)'s cap of a chunk's work (and each group's of a publish's).
  void cap_work() {
    PairMap<uint32_t> ids;
    std::vector<std::vector<int64_t>> samples;
    // The last (category, cap) of each stage's chunks: a stage's chunks are nearly always of
    // one category, and the map's lookup was most of this pass.
    std::vector<std::pair<uint32_t, uint32_t>> stage_cap(stages_, {0, kNone});
    std::vector<bool> category_has_chunks;
    for (uint32_t g = 0; g < g_.spans_; ++g) {
      Slot& n = nodes_[g];
      if (n.kind != SpanKind::chunk && n.kind != SpanKind::publish) continue;
      if (n.kind == SpanKind::chunk) {
        if (category_has_chunks.size() <= n.category) category_has_chunks.resize(n.category + 1, false);
        category_has_chunks[n.category] = true;
      }
      auto* memo = n.kind == SpanKind::chunk ? &stage_cap[n.stage] : nullptr;
      if (!memo || memo->second == kNone || memo->first != n.category) {
        // Publishes keyed apart from chunks: stage -1.
        int64_t key_stage = n.kind == SpanKind::chunk ? stage(g) : -1;
        auto [it, added] = ids.try_emplace({n.category, key_stage}, static_cast<uint32_t>(samples.size()));
        if (added) samples.emplace_back();
        n.cap = it->second;
        if (memo) *memo = {n.category, n.cap};
      } else {
        n.cap = memo->second;
      }
      samples[n.cap].push_back(n.dur);
    }
    for (std::size_t c = 0; c < category_has_chunks.size(); ++c)
      if (category_has_chunks[c]) g_.chunk_categories_.push_back(c);
    for (auto& durations : samples) {
      int64_t median = median_of(durations);
      g_.medians_.push_back(median);
      g_.caps_.push_back(scaled(median, work_cap_));
    }
  }

  /// The predecessors a replay reads of a node, in a fixed order.
  std::size_t dependency_count(uint32_t id) const {
    return is_stage(id) ? stage_begin_[id - g_.spans_ + 1] - stage_begin_[id - g_.spans_] : 2;
  }
  uint32_t dependency(uint32_t id, std::size_t k) const {
    if (is_stage(id)) return stage_chunks_[stage_begin_[id - g_.spans_] + k];
    const Slot& n = nodes_[id];
    return k == 0 ? n.pred : (n.flags & kNested) ? kNone : n.ready;
  }

  /// Frees what finding the links took before the layout's copy needs room (55 MB on the
  /// bench traces).
  void drop_lookups() {
    lane_of_ = HugeTable<uint32_t>();
    packed_stage_ids_ = FlatMap<uint32_t>();
    other_stage_ids_ = PairMap<uint32_t>();
    publish_runs_ = FlatMap<Run>();
    publishes_ = std::vector<uint32_t>();
    stage_chain_ = std::vector<int64_t>();
    stage_chunk_counts_ = std::vector<uint32_t>();
  }

  /// Per node: 1 when some node depends on it.
  HugeTable<uint8_t> needed_nodes() const {
    std::size_t count = g_.spans_ + stages_;
    HugeTable<uint8_t> needed(count, 0);
    for (uint32_t id = 0; id < count; ++id)
      for (std::size_t k = 0; k < dependency_count(id); ++k)
        if (uint32_t dep = dependency(id, k); dep != kNone) needed[dep] = 1;
    return needed;
  }

  /// A depth-first walk's post-order: each node after its predecessors (the recording's
  /// order is not one: a stage_wait's end waits on chunks that start after it). An edge to
  /// a node still on the walk's stack closes a cycle: the replay reads it as recorded.
  HugeTable<uint32_t> order() {
    std::size_t count = g_.spans_ + stages_;
    HugeTable<uint8_t> state(count, 0);  // 0 not reached, 1 on the stack, 2 placed
    HugeTable<uint32_t> ids;
    ids.reserve(count);
    HugeTable<uint8_t> needed = needed_nodes();
    // A span no one depends on (a wake, a span nested in the one before) is placed right
    // after the spans before it on its lane, once what it follows is placed: as a root of
    // its own it came when the walk reached its id, after every lane's later spans. The
    // places of the other nodes, and so the cycles found, are the same either way; what
    // changes is that the layout copy can give each block of the table back as the walk
    // passes it (a nested span or a wake in every block had kept them all until the end).
    auto place_unneeded_after = [&](uint32_t id) {
      if (is_stage(id)) return;
      for (uint32_t next = id + 1; next < g_.spans_ && lane_of_[next] == lane_of_[id] && !needed[next] && !state[next];
           ++next) {
        for (std::size_t k = 0; k < dependency_count(next); ++k)
          if (uint32_t dep = dependency(next, k); dep != kNone && state[dep] != 2) return;
        state[next] = 2;
        ids.push_back(next);
      }
    };
    std::vector<std::pair<uint32_t, std::size_t>> stack;
    for (uint32_t root = 0; root < count; ++root) {
      if (state[root]) continue;
      stack.emplace_back(root, 0);
      state[root] = 1;
      while (!stack.empty()) {
        uint32_t id = stack.back().first;
        std::size_t next = stack.back().second;
        if (next < dependency_count(id)) {
          ++stack.back().second;
          uint32_t dep = dependency(id, next);
          if (dep == kNone) continue;
          if (state[dep] == 1) ++g_.anomalies_.cycles;
          if (state[dep] == 0) {
            state[dep] = 1;
            stack.emplace_back(dep, 0);
          }
          continue;
        }
        stack.pop_back();
        state[id] = 2;
        ids.push_back(id);
        place_unneeded_after(id);
      }
    }
    return ids;
  }

  /// What a replay reads as recorded because it comes later in the order (a cycle): a
  /// node's pred or ready (its flags), a stage's chunks (the latest recorded end of those,
  /// per stage). A replay then never looks up where a node is placed.
  void mark_cycles(const HugeTable<uint32_t>& position) {
    for (uint32_t id = 0; id < g_.spans_; ++id) {
      Slot& n = nodes_[id];
      if (n.pred != kNone && position[n.pred] > position[id]) n.flags |= kPredLater;
      if (n.ready != kNone && position[n.ready] > position[id]) n.flags |= kReadyLater;
    }
    g_.stage_late_end_.assign(stages_, INT64_MIN);
    for (std::size_t s = 0; s < stages_; ++s)
      for (uint32_t k = stage_begin_[s]; k < stage_begin_[s + 1]; ++k)
        if (position[stage_chunks_[k]] > position[g_.spans_ + s])
          g_.stage_late_end_[s] = std::max(g_.stage_late_end_[s], nodes_[stage_chunks_[k]].recorded_end());
  }

  /// The nodes (spans, then stages) laid out in the order a replay reads them, their
  /// predecessors and stages' chunks by their places there: a replay reads one table
  /// front to back, and the ends it reads were mostly written just before. (Read through
  /// an order table instead, a replay jumped between lanes and waited on cache misses:
  /// laid out, the rank's replays take half the time.) The table is copied in the walk's
  /// order, not permuted in place: the walk is a merge of the lanes' spans, each read front
  /// to back, where following a permutation's cycles is one cache miss after another.
  void lay_out(const HugeTable<uint32_t>& ids) {
    nodes_.resize(ids.size());
    for (std::size_t s = 0; s < stages_; ++s) {
      Slot& stage = nodes_[g_.spans_ + s];
      stage.kind = SpanKind::stage;
      stage.stage = static_cast<uint32_t>(s);
      stage.ts = stage_recorded_[s];
    }
    HugeTable<uint32_t> position(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) position[ids[k]] = static_cast<uint32_t>(k);
    mark_cycles(position);
    auto placed = [&](uint32_t id) { return id == kNone ? kNone : position[id]; };
    // The copy grows as it is written (its pages touched then, not zeroed all at once
    // before), and the original gives its pages back as they are read: the table's two
    // copies are never whole at once.
    g_.slots_.clear();
    g_.slots_.reserve(ids.size());
    ReleaseAsRead<Slot> release(nodes_);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      // The walk's order reads the lanes' spans side by side: each read missed the cache
      // (two thirds of the copy's time) until asked for ahead.
      if (k + 32 < ids.size()) __builtin_prefetch(&nodes_[ids[k + 32]]);
      Slot& n = g_.slots_.emplace_back(nodes_[ids[k]]);
      release.read(ids[k]);
      n.pred = placed(n.pred);
      n.ready = placed(n.ready);
      if (n.flags & kNested) g_.start_read_.push_back(n.pred);
      else if (n.flags & kReadyAtStart) g_.start_read_.push_back(n.ready);
      for (uint32_t dep : {n.pred, n.ready})
        if (dep != kNone && dep < k && k - dep >= g_.recent_ends_) g_.far_read_.push_back(dep);
    }
    nodes_ = HugeTable<Slot>();  // freed before the replays allocate theirs
    for (auto* places : {&g_.start_read_, &g_.far_read_}) {
      std::sort(places->begin(), places->end());
      places->erase(std::unique(places->begin(), places->end()), places->end());
    }
    for (uint32_t& chunk : stage_chunks_) chunk = position[chunk];
    position.resize(g_.spans_);
    g_.position_ = std::move(position);
    renumber_stages(ids);
  }

  /// The stages numbered in the order their nodes are placed. A replay keeps a running
  /// completion per stage and updates it at every chunk: numbered as link_stages met them
  /// (then a lane at a time), the stages a replay has open at once were spread over the
  /// whole table, one cache miss a chunk (a fifth of a rank's replay on 32 lanes). The
  /// numbers are the graph's own: no output shows them.
  void renumber_stages(const HugeTable<uint32_t>& ids) {
    std::vector<uint32_t> renumbered(stages_, kNone);
    uint32_t next = 0;
    for (uint32_t id : ids)
      if (is_stage(id)) renumbered[id - g_.spans_] = next++;
    for (Slot& n : g_.slots_)
      if (n.stage != kNone) n.stage = renumbered[n.stage];
    auto permute = [&](auto& per_stage) {
      std::remove_reference_t<decltype(per_stage)> moved(per_stage.size());
      for (std::size_t s = 0; s < stages_; ++s) moved[renumbered[s]] = per_stage[s];
      per_stage = std::move(moved);
    };
    permute(g_.stage_median_);
    permute(g_.stage_late_end_);
    permute(g_.stage_publish_);
    permute(g_.stage_number_);
    // Each stage's chunks (CSR), in the new numbering.
    g_.stage_begin_.assign(stages_ + 1, 0);
    for (std::size_t s = 0; s < stages_; ++s)
      g_.stage_begin_[renumbered[s] + 1] = stage_begin_[s + 1] - stage_begin_[s];
    for (std::size_t s = 0; s < stages_; ++s) g_.stage_begin_[s + 1] += g_.stage_begin_[s];
    g_.stage_chunks_.resize(stage_chunks_.size());
    for (std::size_t s = 0; s < stages_; ++s)
      std::copy(stage_chunks_.begin() + stage_begin_[s], stage_chunks_.begin() + stage_begin_[s + 1],
                g_.stage_chunks_.begin() + g_.stage_begin_[renumbered[s]]);
  }
};

ReplayGraph::ReplayGraph(const Trace& trace, double work_cap, uint32_t recent_ends)
    : trace_(trace), recent_ends_(recent_ends) {
  if (recent_ends == 0 || (recent_ends & (recent_ends - 1)) != 0)
    throw std::invalid_argument("whatif: the replay's ring of recent ends must be a power of two");
  PhaseClock clock("graph", PhaseKind::serial);
  Builder(*this, work_cap).run();
}
ReplayGraph::~ReplayGraph() = default;

const ReplayGraph::Slot& ReplayGraph::slot_of_span(std::size_t id) const { return slots_[position_[id]]; }


Replay::Replay(const ReplayGraph& graph, const std::vector<LanePoint>& points) : g_(graph) {
  // Each point's spans, found once: its lane's latest-ending span before it (the next
  // span's predecessor, or the lane's last one) and the span after it, whose starts are kept.
  kept_ = g_.start_read_;
  far_ = g_.far_read_;
  for (const LanePoint& p : points) {
    const SpanTable& s = g_.trace_.lanes[p.lane].spans;
    std::size_t after = spans_started_by(s, p.ts), base = g_.offset_[p.lane];
    ResolvedPoint r{p.lane, p.ts};
    if (after < s.size()) {
      r.next = g_.position_[base + after];
      r.frontier = g_.slots_[r.next].pred;
    } else if (g_.lane_frontier_[p.lane] != kNone) {
      r.frontier = g_.position_[g_.lane_frontier_[p.lane]];
    }
    for (uint32_t place : {r.frontier, r.next})
      if (place != kNone) kept_.push_back(place);
    if (r.frontier != kNone) far_.push_back(r.frontier);  // its end is read after the run
    points_.push_back(r);
  }
  for (auto* places : {&kept_, &far_}) {
    std::sort(places->begin(), places->end());
    places->erase(std::unique(places->begin(), places->end()), places->end());
  }
  for (ResolvedPoint& r : points_) {
    r.frontier_kept = r.frontier == kNone ? 0 : kept_index(r.frontier);
    r.frontier_far = r.frontier == kNone ? 0 : far_index(r.frontier);
    r.next_kept = r.next == kNone ? 0 : kept_index(r.next);
  }
  std::sort(points_.begin(), points_.end(), [](const ResolvedPoint& a, const ResolvedPoint& b) {
    return std::tie(a.lane, a.ts) < std::tie(b.lane, b.ts);
  });
}

std::size_t Replay::kept_index(uint32_t place) const {
  auto at = std::lower_bound(kept_.begin(), kept_.end(), place);
  if (at == kept_.end() || *at != place) throw std::logic_error("whatif: a replayed start that was not kept was read");
  return static_cast<std::size_t>(at - kept_.begin());
}

std::size_t Replay::far_index(uint32_t place) const {
  auto at = std::lower_bound(far_.begin(), far_.end(), place);
  if (at == far_.end() || *at != place) throw std::logic_error("whatif: a replayed end that was not kept was read");
  return static_cast<std::size_t>(at - far_.begin());
}

void Replay::run(const std::vector<WhatIfChanges>& changes) {
  PhaseClock clock("replay", PhaseKind::scales);
  if (changes.size() > kMaxWidth) throw std::invalid_argument("whatif: too many sets of changes in one replay");
  // The widths the commands use, compiled apart: the loop over the sets unrolled, their
  // running values in registers.
  switch (changes.size()) {
    case 1: return run_width<1>(changes);
    case 2: return run_width<2>(changes);
    case 3: return run_width<3>(changes);
    case kMaxWidth: return run_width<kMaxWidth>(changes);
    default: return run_width<0>(changes);
  }
}

template <std::size_t kFixedWidth>
void Replay::run_width(const std::vector<WhatIfChanges>& changes) {
  const auto& slots = g_.slots_;
  const std::size_t width = kFixedWidth ? kFixedWidth : changes.size();
  width_ = width;
  const uint32_t ring = g_.recent_ends_, last_in_ring = ring - 1;
  recent_end_.resize(std::size_t{ring} * width);
  far_end_.resize(far_.size() * width);
  kept_start_.resize(kept_.size() * width);
  // Each stage's latest chunk end so far: a chunk's end is pushed here as it is replayed,
  // and the stage's node (after its chunks) reads it; chunks placed after it (a cycle)
  // count as recorded (stage_late_end_).
  completion_.resize(g_.stage_late_end_.size() * width);
  for (std::size_t s = 0; s < g_.stage_late_end_.size(); ++s)
    std::fill_n(completion_.begin() + static_cast<std::ptrdiff_t>(s * width), width, g_.stage_late_end_[s]);
  // Per category (the last entry: any other), the sets that change its chunks' and its
  // publishes' durations, as bits.
  std::size_t categories = 0;
  for (const WhatIfChanges& c : changes) categories = std::max({categories, c.chunk_factor.size(), c.publish_factor.size()});
  std::vector<uint32_t> chunks_changed(categories + 1, 0), publishes_changed(categories + 1, 0);
  for (std::size_t k = 0; k < width; ++k)
    for (std::size_t c = 0; c <= categories; ++c) {
      if (changes[k].balance != 0 || WhatIfChanges::factor(changes[k].chunk_factor, c) != 1) chunks_changed[c] |= 1u << k;
      if (WhatIfChanges::factor(changes[k].publish_factor, c) != 1) publishes_changed[c] |= 1u << k;
    }
  int64_t last_work[kMaxWidth], worst[kMaxWidth];
  std::fill_n(last_work, width, INT64_MIN);
  std::fill_n(worst, width, 0);
  // The error is measured only where it means something: the sets that change nothing (a
  // rank's passes have none, and saved the two comparisons a node and set).
  uint32_t unchanged = 0;
  for (std::size_t k = 0; k < width; ++k)
    if (changes[k].changes_nothing()) unchanged |= 1u << k;
  // Each node's decisions (which predecessor binds, read as replayed or as recorded) are
  // the same under every set of changes: they are made once, and each loop over the sets
  // is straight-line code. (Branching inside the loop, each of its unrolled copies
  // mispredicted on its own: three sets cost as much as three replays.)
  bool wake_as_recorded[kMaxWidth];
  for (std::size_t k = 0; k < width; ++k) wake_as_recorded[k] = changes[k].wake_factor == 1;
  std::size_t next_kept = 0, next_far = 0;
  const auto count = static_cast<uint32_t>(slots.size());
  for (uint32_t id = 0; id < count; ++id) {
    const ReplayGraph::Slot& n = slots[id];
    // A node's ends are written where the next nodes of the ring find them, and kept apart
    // too when a node farther on reads them (far_).
    int64_t* ends = &recent_end_[(id & last_in_ring) * width];
    auto end_of = [&](uint32_t place) -> const int64_t* {
      return id - place < ring ? &recent_end_[(place & last_in_ring) * width] : &far_end_[far_index(place) * width];
    };
    auto keep_far = [&] {
      if (next_far < far_.size() && far_[next_far] == id) std::copy_n(ends, width, &far_end_[next_far++ * width]);
    };
    int64_t* kept = nullptr;  // where its start is kept, if it is
    if (next_kept < kept_.size() && kept_[next_kept] == id) kept = &kept_start_[next_kept++ * width];
    if (n.kind == SpanKind::stage) {
      for (std::size_t k = 0; k < width; ++k) ends[k] = completion_[n.stage * width + k];
      if (kept) std::copy_n(ends, width, kept);
      keep_far();
      continue;
    }
    // A predecessor's replayed times, or (placed later: a cycle) its recorded one in each set.
    auto replayed_or = [&](bool recorded, int64_t value, const int64_t* replayed, int64_t* fill) -> const int64_t* {
      if (!recorded) return replayed;
      std::fill_n(fill, width, value);
      return fill;
    };
    int64_t starts[kMaxWidth], scratch[3][kMaxWidth];
    bool readies = n.kind == SpanKind::chunk && n.ready != kNone;
    bool pred_later = n.flags & kPredLater, ready_later = n.flags & kReadyLater;
    if (n.flags & kNested) {
      // Its offset from its lane's previous span's start.
      const ReplayGraph::Slot& p = slots[n.pred];
      const int64_t* base = replayed_or(pred_later, p.ts, pred_later ? nullptr : &kept_start_[kept_index(n.pred) * width], scratch[0]);
      for (std::size_t k = 0; k < width; ++k) starts[k] = base[k] + (n.ts - p.ts);
    } else if (n.pred != kNone || readies) {
      const int64_t* pred_end = nullptr;
      int64_t pred_recorded = INT64_MIN;
      if (n.pred != kNone) {
        pred_recorded = slots[n.pred].recorded_end();
        pred_end = replayed_or(pred_later, pred_recorded, pred_later ? nullptr : end_of(n.pred), scratch[0]);
      } else {
        pred_end = replayed_or(true, INT64_MIN, nullptr, scratch[0]);
      }
      const int64_t* ready_at = nullptr;
      int64_t ready_recorded = INT64_MIN;
      if (readies) {
        bool at_start = n.flags & kReadyAtStart;
        ready_recorded = at_start ? slots[n.ready].ts : slots[n.ready].recorded_end();
        const int64_t* replayed =
            ready_later ? nullptr : at_start ? &kept_start_[kept_index(n.ready) * width] : end_of(n.ready);
        ready_at = replayed_or(ready_later, ready_recorded, replayed, scratch[1]);
      } else {
        ready_at = replayed_or(true, INT64_MIN, nullptr, scratch[1]);
      }
      // The recorded gap after the binding predecessor, kept after its replayed time; never
      // before the other one.
      bool by_ready = n.flags & kByReady;
      int64_t gap = n.ts - (by_ready ? ready_recorded : pred_recorded);
      const int64_t* binding = by_ready ? ready_at : pred_end;
      const int64_t* other = by_ready ? pred_end : ready_at;
      for (std::size_t k = 0; k < width; ++k) starts[k] = std::max(binding[k] + gap, other[k]);
    } else {
      std::fill_n(starts, width, n.ts);
    }
    if (n.kind == SpanKind::stage_wait && n.ready != kNone) {
      // Its stage's replayed completion plus its recorded wake-up, never before it starts.
      int64_t wake = n.recorded_end() - slots[n.ready].ts;
      const int64_t* stage_end =
          replayed_or(ready_later, slots[n.ready].recorded_end(), ready_later ? nullptr : end_of(n.ready), scratch[2]);
      for (std::size_t k = 0; k < width; ++k)
        ends[k] = std::max(starts[k], stage_end[k] + (wake_as_recorded[k] ? wake : scaled(wake, changes[k].wake_factor)));
    } else {
      // Which sets change its duration (bit k; most nodes keep theirs under most changes).
      uint32_t changed = n.kind == SpanKind::chunk ? chunks_changed[std::min<std::size_t>(n.category, categories)]
                         : n.kind == SpanKind::publish ? publishes_changed[std::min<std::size_t>(n.category, categories)]
                                                       : 0;
      for (std::size_t k = 0; k < width; ++k) ends[k] = starts[k] + n.dur;
      for (std::size_t k = 0; changed; ++k, changed >>= 1)
        if (changed & 1) ends[k] = starts[k] + changed_duration(g_, n, changes[k]);
    }
    if (kept) std::copy_n(starts, width, kept);
    keep_far();
    // Every chunk has a stage (link_stages makes one for each).
    if (n.kind == SpanKind::chunk)
      for (std::size_t k = 0; k < width; ++k)
        completion_[n.stage * width + k] = std::max(completion_[n.stage * width + k], ends[k]);
    if (n.kind != SpanKind::wake)
      for (std::size_t k = 0; k < width; ++k) last_work[k] = std::max(last_work[k], ends[k]);
    for (uint32_t left = unchanged; left; left &= left - 1) {
      auto k = static_cast<std::size_t>(__builtin_ctz(left));
      worst[k] = std::max(worst[k], std::max(std::abs(starts[k] - n.ts), std::abs(ends[k] - n.recorded_end())));
    }
  }
  worst_.assign(width, -1);
  for (std::size_t k = 0; k < width; ++k)
    if (unchanged >> k & 1) worst_[k] = worst[k];
  int64_t hi = whole_trace(g_.trace_).hi;
  trace_end_.resize(width);
  for (std::size_t k = 0; k < width; ++k)
    trace_end_[k] = last_work[k] == INT64_MIN ? hi : last_work[k] + (hi - g_.last_work_end_);
}

int64_t Replay::changed_duration(const ReplayGraph& g, const ReplayGraph::Slot& n, const WhatIfChanges& c) {
  int64_t d = n.dur;
  if (n.kind == SpanKind::chunk && c.balance != 0) d += scaled(g.stage_median_[n.stage] - d, c.balance);
  double factor = n.kind == SpanKind::chunk     ? WhatIfChanges::factor(c.chunk_factor, n.category)
                  : n.kind == SpanKind::publish ? WhatIfChanges::factor(c.publish_factor, n.category)
                                                : 1.0;
  if (factor != 1 && n.cap != kNone) {
    // A chunk past the cap was preempted: its work is its group's typical one (the
    // median), not the cap (taking the cap overstated the work of preempted chunks: moe
    // experts' twins, 5% of them preempted, predicted a third more than they saved).
    int64_t work = d <= g.caps_[n.cap] ? d : std::min(d, g.medians_[n.cap]);
    d += scaled(work, factor) - work;
  }
  return d;
}

int64_t Replay::max_error_ns(std::size_t k) const {
  if (worst_.at(k) < 0) throw std::logic_error("whatif: the replay error of a set that changes something");
  return worst_[k];
}

int64_t Replay::time_at(std::size_t lane, int64_t at, std::size_t k) const {
  auto found = std::lower_bound(points_.begin(), points_.end(), std::make_pair(lane, at),
                                [](const ResolvedPoint& r, const std::pair<std::size_t, int64_t>& p) {
                                  return std::tie(r.lane, r.ts) < std::tie(p.first, p.second);
                                });
  if (found == points_.end() || found->lane != lane || found->ts != at)
    throw std::logic_error("whatif: the replayed time of an instant no one asked for");
  const ResolvedPoint& r = *found;
  int64_t replayed = at;
  if (r.frontier != kNone) {
    const ReplayGraph::Slot& f = g_.slots_[r.frontier];
    int64_t end = far_end_[r.frontier_far * width_ + k];
    replayed = at >= f.recorded_end() ? end + (at - f.recorded_end())
                                      : std::min(kept_start_[r.frontier_kept * width_ + k] + (at - f.ts), end);
  }
  if (r.next != kNone) replayed = std::min(replayed, kept_start_[r.next_kept * width_ + k]);
  return replayed;
}

UnitReplayer::UnitReplayer(const Trace& trace, const UnitRequest& unit_at) : trace_(trace) {
  kinds_ = marker_kinds(trace);
  markers_ = markers_of_kinds(trace, kinds_);
  UnitPlanner planner(trace, unit_at);
  for (std::size_t k = 0; k < kinds_.size(); ++k) plans_.push_back(planner.plan(kinds_[k], markers_[k]));
}

std::vector<LanePoint> UnitReplayer::points() const {
  std::vector<LanePoint> out;
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    const Markers& m = markers_[k];
    for (std::size_t i = 0; i < m.size(); ++i) out.push_back({static_cast<std::size_t>(m.lane[i]), m.ts[i]});
    if (m.size() && plans_[k].rule.lane_stopped) out.push_back({static_cast<std::size_t>(m.lane.back()), plans_[k].outer.hi});
  }
  return out;
}

std::vector<WhatIfKind> UnitReplayer::units(const Replay& replay, std::size_t k, const std::string& only) const {
  return units([&](std::size_t lane, int64_t ts) { return replay.time_at(lane, ts, k); }, replay.trace_end(k), only);
}

std::vector<WhatIfKind> UnitReplayer::units(const std::function<int64_t(std::size_t, int64_t)>& time_at,
                                            int64_t trace_end, const std::string& only) const {
  PhaseClock clock("units", PhaseKind::scales);
  // The kinds asked for and those they nest in (their markers bound its units).
  std::vector<bool> wanted(kinds_.size(), only.empty());
  for (std::string kind = only; !kind.empty();) {
    auto at = std::find(kinds_.begin(), kinds_.end(), kind);
    if (at == kinds_.end()) break;
    std::size_t j = static_cast<std::size_t>(at - kinds_.begin());
    if (wanted[j]) break;
    wanted[j] = true;
    kind = plans_[j].rule.nested_in;
  }
  // Every marker at its replayed time, in the same order; a nested kind's bounds (its
  // coarser kinds' marker times) looked up among them.
  std::vector<Markers> moved;
  std::vector<std::pair<int64_t, int64_t>> times;
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    const Markers& m = markers_[k];
    Markers& out = moved.emplace_back(wanted[k] ? m : Markers{});
    if (!wanted[k]) continue;
    for (std::size_t i = 0; i < m.size(); ++i) {
      out.ts[i] = time_at(static_cast<std::size_t>(m.lane[i]), m.ts[i]);
      if (i > 0) out.ts[i] = std::max(out.ts[i], out.ts[i - 1]);
      times.emplace_back(m.ts[i], out.ts[i]);
    }
  }
  std::sort(times.begin(), times.end());
  auto mapped = [&](int64_t at) {
    auto it = std::lower_bound(times.begin(), times.end(), std::make_pair(at, INT64_MIN));
    return it != times.end() && it->first == at ? it->second : at;
  };
  std::vector<WhatIfKind> out;
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    if (markers_[k].size() == 0 || !wanted[k] || (!only.empty() && kinds_[k] != only)) continue;
    const KindUnits& plan = plans_[k];
    KindUnits replayed = plan;
    replayed.outer.hi = plan.rule.lane_stopped ? time_at(static_cast<std::size_t>(markers_[k].lane.back()), plan.outer.hi)
                                               : trace_end;
    for (int64_t& b : replayed.bounds) b = mapped(b);
    std::sort(replayed.bounds.begin(), replayed.bounds.end());
    out.push_back({kinds_[k], plan.rule, cut_units(markers_[k], plan), cut_units(moved[k], replayed)});
  }
  return out;
}

WhatIfResult what_if(const ReplayGraph& graph, const WhatIfChanges& changes, const UnitRequest& unit_at) {
  WhatIfResult result;
  UnitReplayer units(graph.trace(), unit_at);
  Replay replay(graph, units.points());
  replay.run({WhatIfChanges{}, changes});  // 0: the recording, the test of the graph; 1: the changes
  result.identity_error_ns = replay.max_error_ns(0);
  result.spans = graph.spans();
  result.anomalies = graph.anomalies();
  Range whole = whole_trace(graph.trace());
  result.measured_ns = whole.length();
  result.predicted_ns = replay.trace_end(1) - whole.lo;
  result.kinds = units.units(replay, 1);
  return result;
}

namespace {

/// The median duration of a kind's units (0 when it has none).
int64_t median_unit(const std::vector<Unit>& units) {
  std::vector<int64_t> d;
  for (const Unit& u : units) d.push_back(u.range.length());
  std::sort(d.begin(), d.end());
  return d.empty() ? 0 : static_cast<int64_t>(std::llround(median(d)));
}

}  // namespace

WhatIfRank what_if_rank(const ReplayGraph& graph, const UnitRequest& unit_at, const std::string& unit_kind,
                        unsigned threads) {
  const Trace& trace = graph.trace();
  WhatIfRank rank;
  Range whole = whole_trace(trace);
  rank.measured_ns = whole.length();
  UnitReplayer units(trace, unit_at);
  rank.unit_kind = unit_kind;
  std::vector<LanePoint> points = units.points();
  auto unit_median = [&](const Replay& replay, std::size_t k) -> int64_t {
    if (rank.unit_kind.empty()) return 0;
    for (const WhatIfKind& kind : units.units(replay, k, rank.unit_kind))
      if (kind.kind == rank.unit_kind) return median_unit(kind.predicted);
    return 0;
  };
  constexpr int kSpeedups[] = {25, 50, 100};
  constexpr std::size_t kWidth = std::size(kSpeedups);
  // Each candidate: its name and the changes that remove `fraction` of it.
  struct Candidate {
    std::string name;
    std::function<WhatIfChanges(double fraction)> change;
  };
  std::vector<Candidate> candidates;
  for (std::size_t category : graph.categories_with_chunks())
    candidates.push_back({trace.categories[category].name, [category](double f) {
                            WhatIfChanges c;
                            c.chunk_factor.assign(category + 1, 1.0);
                            c.chunk_factor[category] = 1 - f;
                            return c;
                          }});
  if (graph.has_publishes())
    candidates.push_back({"publish", [&trace](double f) {
                            WhatIfChanges c;
                            c.publish_factor.assign(trace.categories.size(), 1 - f);
                            return c;
                          }});
  if (graph.has_waits()) {
    candidates.push_back({"wake-up", [](double f) {
                            WhatIfChanges c;
                            c.wake_factor = 1 - f;
                            return c;
                          }});
    candidates.push_back({"imbalance", [](double f) {
                            WhatIfChanges c;
                            c.balance = f;
                            return c;
                          }});
  }
  // Every set of changes replayed: the recording (set 0), then each candidate at each
  // speedup, kMaxWidth sets a pass (a pass costs less a set the more sets it carries: on
  // the 8-lane bench trace 41 ms for one, 67 ms for three, about 130 ms for eight). The passes are
  // independent: on `threads`, each thread replaying in the memory of a replay it took
  // from the pool.
  std::vector<WhatIfChanges> sets(1);
  for (const Candidate& c : candidates)
    for (int speedup : kSpeedups) sets.push_back(c.change(speedup / 100.0));
  std::vector<int64_t> trace_end(sets.size()), median(sets.size());
  const std::size_t passes = (sets.size() + Replay::kMaxWidth - 1) / Replay::kMaxWidth;
  std::vector<std::unique_ptr<Replay>> pool;
  std::mutex pool_mutex;
  run_parallel(passes, threads, [&](std::size_t pass) {
    std::size_t first = pass * Replay::kMaxWidth, last = std::min(sets.size(), first + Replay::kMaxWidth);
    std::unique_ptr<Replay> replay;
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (!pool.empty()) {
        replay = std::move(pool.back());
        pool.pop_back();
      }
    }
    if (!replay) replay = std::make_unique<Replay>(graph, points);
    replay->run(std::vector<WhatIfChanges>(sets.begin() + static_cast<std::ptrdiff_t>(first),
                                           sets.begin() + static_cast<std::ptrdiff_t>(last)));
    for (std::size_t j = first; j < last; ++j) {
      trace_end[j] = replay->trace_end(j - first);
      median[j] = unit_median(*replay, j - first);
    }
    std::lock_guard<std::mutex> lock(pool_mutex);
    pool.push_back(std::move(replay));
  });
  rank.unit_median_ns = median[0];
  for (std::size_t j = 1; j < sets.size(); ++j) {
    const Candidate& c = candidates[(j - 1) / kWidth];
    rank.rows.push_back({c.name, kSpeedups[(j - 1) % kWidth], whole.hi - trace_end[j],
                         rank.unit_kind.empty() ? 0 : rank.unit_median_ns - median[j]});
  }
  std::stable_sort(rank.rows.begin(), rank.rows.end(),
                   [](const RankRow& a, const RankRow& b) { return a.saving_ns > b.saving_ns; });
  return rank;
}

namespace {

/// One chain as the work/span count reads it.
struct ChainCost {
  int64_t publish_ts = INT64_MAX;  ///< its (first) publish's start; INT64_MAX: none recorded
  int64_t completion = INT64_MIN;  ///< its last chunk's end
  int64_t work = 0;                ///< chunks and publishes
  int64_t path = 0;                ///< publish, then each stage's longest chunk
};

/// Every chain with a recorded publish, in publish order.
std::vector<ChainCost> chain_costs(const Trace& trace) {
  JobqueNames names = JobqueNames::found(trace.names);
  FlatMap<uint32_t> index;  // chain id -> its place in costs, + 1
  std::vector<ChainCost> costs;
  FlatMap<int64_t> longest;  // packed_stage_key -> the stage's longest chunk
  auto cost_of = [&](int64_t chain) -> ChainCost& {
    uint32_t& at = index[chain];
    if (at == 0) {
      costs.emplace_back();
      at = static_cast<uint32_t>(costs.size());
    }
    return costs[at - 1];
  };
  for (const Lane& lane : trace.lanes) {
    const SpanTable& s = lane.spans;
    for (std::size_t i = 0; i < s.size(); ++i) {
      int64_t name = s.name[i];
      if (name != names.publish && name != names.chunk) continue;
      ChainCost& c = cost_of(s.chain[i]);
      c.work += s.dur[i];
      if (name == names.publish) {
        c.publish_ts = std::min(c.publish_ts, s.ts[i]);
        c.path += s.dur[i];
        continue;
      }
      c.completion = std::max(c.completion, s.end(i));
      int64_t key = 0;
      if (!packed_stage_key(s.chain[i], s.stage[i], &key)) {
        c.path += s.dur[i];  // a hostile stage number: counted as a stage of its own
        continue;
      }
      int64_t& max = longest[key];
      if (s.dur[i] > max) {
        c.path += s.dur[i] - max;
        max = s.dur[i];
      }
    }
  }
  costs.erase(std::remove_if(costs.begin(), costs.end(), [](const ChainCost& c) { return c.publish_ts == INT64_MAX; }),
              costs.end());
  std::sort(costs.begin(), costs.end(), [](const ChainCost& a, const ChainCost& b) { return a.publish_ts < b.publish_ts; });
  return costs;
}

}  // namespace

std::vector<WorkSpan> work_span(const Trace& trace, const std::vector<Unit>& units) {
  std::vector<ChainCost> chains = chain_costs(trace);
  std::vector<WorkSpan> out;
  std::size_t first = 0;
  for (const Unit& unit : units) {
    WorkSpan ws;
    ws.unit = unit;
    // The unit's chains: published in [lo, hi). Each one's longest path ends its own path
    // after the longest of those that completed before it was published.
    while (first < chains.size() && chains[first].publish_ts < unit.range.lo) ++first;
    std::size_t last = first;
    while (last < chains.size() && chains[last].publish_ts < unit.range.hi) ++last;
    // (completion, the longest path end of the chains completed by then), in completion
    // order: chains complete nearly in publish order, so an insertion is nearly always at
    // the end and a lookup a binary search.
    std::vector<std::pair<int64_t, int64_t>> done;
    for (std::size_t k = first; k < last; ++k) {
      const ChainCost& c = chains[k];
      auto by = std::upper_bound(done.begin(), done.end(), std::make_pair(c.publish_ts, INT64_MAX));
      int64_t end = (by == done.begin() ? 0 : (by - 1)->second) + c.path;
      auto at = std::upper_bound(done.begin(), done.end(), std::make_pair(c.completion, INT64_MAX));
      int64_t running = std::max(end, at == done.begin() ? 0 : (at - 1)->second);
      at = done.insert(at, {c.completion, running});
      for (++at; at != done.end() && at->second < running; ++at) at->second = running;
      ws.work_ns += c.work;
      ws.span_ns = std::max(ws.span_ns, end);
      ++ws.chains;
    }
    first = last;
    out.push_back(ws);
  }
  return out;
}

LanesModel::LanesModel(const ReplayGraph& g, std::size_t marker_lane) : g_(g), lane_(marker_lane) {
  // The model's costs, the recording's medians: a worker's claim after its stage was ready,
  // its gap from its chunk before (of the same stage), the marker lane's wake-up.
  std::vector<int64_t> claims, gaps, wakes;
  for (std::size_t id = 0; id < g_.spans_; ++id) {
    const ReplayGraph::Slot& n = g_.slot_of_span(id);
    bool marker = id >= g_.offset_[lane_] && id < g_.offset_[lane_ + 1];
    if (n.kind == SpanKind::chunk && !marker && n.ready != kNone) {
      bool at_start = n.flags & kReadyAtStart;
      int64_t ready = at_start ? g_.slots_[n.ready].ts : g_.slots_[n.ready].recorded_end();
      if (n.flags & kByReady) claims.push_back(std::max<int64_t>(0, n.ts - ready));
      else if (n.pred != kNone && g_.slots_[n.pred].kind == SpanKind::chunk && g_.slots_[n.pred].stage == n.stage)
        gaps.push_back(std::max<int64_t>(0, n.ts - g_.slots_[n.pred].recorded_end()));
    }
    if (n.kind == SpanKind::stage_wait && marker && n.ready != kNone)
      wakes.push_back(std::max<int64_t>(0, n.recorded_end() - g_.slots_[n.ready].ts));
  }
  claim_latency_ = median_of(claims);
  chunk_gap_ = median_of(gaps);
  wake_ = median_of(wakes);
  for (std::size_t s = 0; s < g_.stage_publish_.size(); ++s) {
    uint32_t p = g_.stage_publish_[s];
    if (p == kNone || p < g_.offset_[lane_] || p >= g_.offset_[lane_ + 1]) continue;
    stages_of_publish_[p].push_back(static_cast<uint32_t>(s));
  }
  for (auto& [p, stages] : stages_of_publish_)
    std::sort(stages.begin(), stages.end(),
              [&](uint32_t a, uint32_t b) { return g_.stage_number_[a] < g_.stage_number_[b]; });
}

int64_t LanesModel::Run::time_at(int64_t ts) const {
  auto after = std::upper_bound(checkpoints.begin(), checkpoints.end(), std::make_pair(ts, INT64_MAX));
  if (after == checkpoints.begin()) return ts;
  return (after - 1)->second + (ts - (after - 1)->first);
}

LanesModel::Run LanesModel::run(const WhatIfChanges& c, std::size_t lanes) const {
  Run out;
  const SpanTable& own = g_.trace_.lanes[lane_].spans;
  std::size_t base = g_.offset_[lane_];
  // Lane 0 is the marker lane; each lane's time it is free.
  std::vector<int64_t> free(std::max<std::size_t>(lanes, 1), own.size() ? own.ts[0] : 0);
  int64_t recorded = own.size() ? own.ts[0] : 0, replayed = recorded;  // the marker lane's cursor
  std::vector<std::pair<int64_t, uint32_t>> chunks;
  for (std::size_t i = 0; i < own.size(); ++i) {
    auto id = static_cast<uint32_t>(base + i);
    const ReplayGraph::Slot& n = g_.slot_of_span(id);
    if (n.kind == SpanKind::wake || n.ts < recorded) continue;  // a wake, or work a chain covered
    int64_t start = replayed + (n.ts - recorded);
    auto stages = stages_of_publish_.find(id);
    if (n.kind != SpanKind::publish || stages == stages_of_publish_.end()) {
      // Work of its own (or a chunk or wait of a chain it did not publish): as recorded.
      recorded = n.recorded_end();
      replayed = start + (n.kind == SpanKind::stage_wait ? n.dur : Replay::changed_duration(g_, n, c));
      out.checkpoints.emplace_back(recorded, replayed);
      continue;
    }
    int64_t ready = start + Replay::changed_duration(g_, n, c);
    out.checkpoints.emplace_back(n.recorded_end(), ready);
    // Whether the marker lane waited on this chain (then it also ran chunks), and where its
    // part of the chain ended in the recording.
    int64_t chain_end = n.recorded_end();
    bool waits = false;
    for (std::size_t j = i + 1; j < own.size(); ++j) {
      const ReplayGraph::Slot& m = g_.slot_of_span(base + j);
      bool of_chain = (m.kind == SpanKind::chunk || m.kind == SpanKind::stage_wait) &&
                      std::find(stages->second.begin(), stages->second.end(), m.stage) != stages->second.end();
      if (!of_chain) break;
      waits = true;
      chain_end = std::max(chain_end, m.recorded_end());
    }
    free[0] = waits ? std::max(free[0], ready) : INT64_MAX;  // a lane that does not wait takes none
    for (uint32_t s : stages->second) {
      chunks.clear();
      for (uint32_t k = g_.stage_begin_[s]; k < g_.stage_begin_[s + 1]; ++k)
        chunks.emplace_back(g_.slots_[g_.stage_chunks_[k]].ts, g_.stage_chunks_[k]);
      std::sort(chunks.begin(), chunks.end());  // claimed in the order they were
      int64_t completion = ready;
      for (const auto& [at, chunk] : chunks) {
        std::size_t best = 0;
        int64_t best_start = INT64_MAX;
        for (std::size_t l = 0; l < free.size(); ++l) {
          if (free[l] == INT64_MAX) continue;
          int64_t can = std::max(free[l], l == 0 ? ready : ready + claim_latency_);
          if (can < best_start) best_start = can, best = l;
        }
        // No lane takes chunks (one lane, and it does not wait on this chain): that lane runs
        // them one after another after the claim latency.
        if (best_start == INT64_MAX) best_start = ready + claim_latency_;
        int64_t end = best_start + Replay::changed_duration(g_, g_.slots_[chunk], c);
        free[best] = end + chunk_gap_;
        completion = std::max(completion, end);
      }
      ready = completion;
    }
    if (waits) {
      replayed = ready + wake_;
      free[0] = replayed;
      recorded = chain_end;
    } else {
      replayed = start + Replay::changed_duration(g_, n, c);
      recorded = n.recorded_end();
      free[0] = replayed;
    }
    out.checkpoints.emplace_back(recorded, replayed);
  }
  int64_t last = replayed;
  for (int64_t f : free)
    if (f != INT64_MAX) last = std::max(last, f - chunk_gap_);
  int64_t recorded_last = std::max(recorded, own.size() ? own.end(own.size() - 1) : recorded);
  out.trace_end = last + (whole_trace(g_.trace_).hi - std::max(recorded_last, g_.last_work_end_));
  std::sort(out.checkpoints.begin(), out.checkpoints.end());
  return out;
}

std::size_t lanes_with_chunks(const Trace& trace) {
  JobqueNames names = JobqueNames::found(trace.names);
  std::size_t n = 0;
  for (const Lane& lane : trace.lanes)
    for (std::size_t i = 0; i < lane.spans.size(); ++i)
      if (lane.spans.name[i] == names.chunk) {
        ++n;
        break;
      }
  return n;
}

namespace {

/// base scaled by model_after / model_before, rounded (0 when the model had no length).
int64_t calibrated(int64_t base, int64_t model_before, int64_t model_after) {
  if (model_before <= 0) return base;
  return static_cast<int64_t>(std::llround(static_cast<double>(base) * static_cast<double>(model_after) /
                                           static_cast<double>(model_before)));
}

}  // namespace

WhatIfResult what_if_lanes(const ReplayGraph& graph, const WhatIfChanges& changes, const UnitRequest& unit_at,
                           std::size_t marker_lane, std::size_t lanes) {
  const Trace& trace = graph.trace();
  WhatIfResult result;
  Replay identity(graph, {});
  identity.run({WhatIfChanges{}});
  result.identity_error_ns = identity.max_error_ns();
  result.spans = graph.spans();
  result.anomalies = graph.anomalies();
  result.lanes = lanes;
  result.recorded_lanes = lanes_with_chunks(trace);
  LanesModel model(graph, marker_lane);
  LanesModel::Run before = model.run(WhatIfChanges{}, result.recorded_lanes);
  LanesModel::Run after = model.run(changes, lanes);
  Range whole = whole_trace(trace);
  result.measured_ns = whole.length();
  result.predicted_ns = calibrated(whole.length(), before.trace_end - whole.lo, after.trace_end - whole.lo);
  UnitReplayer units(trace, unit_at);
  auto on = [&](const LanesModel::Run& run) {
    return units.units([&](std::size_t lane, int64_t ts) { return lane == marker_lane ? run.time_at(ts) : ts; },
                       run.trace_end);
  };
  std::vector<WhatIfKind> modelled_before = on(before), modelled_after = on(after);
  std::vector<double> errors;
  for (std::size_t k = 0; k < modelled_before.size() && k < modelled_after.size(); ++k) {
    WhatIfKind kind = modelled_before[k];
    const std::vector<Unit>& b = modelled_before[k].predicted;
    const std::vector<Unit>& a = modelled_after[k].predicted;
    if (b.size() != kind.measured.size() || a.size() != kind.measured.size()) continue;
    for (std::size_t i = 0; i < kind.measured.size(); ++i) {
      int64_t measured = kind.measured[i].range.length();
      int64_t predicted = calibrated(measured, b[i].range.length(), a[i].range.length());
      kind.predicted[i].range = {kind.measured[i].range.lo, kind.measured[i].range.lo + predicted};
      if (k == 0 && measured > 0)
        errors.push_back(std::abs(static_cast<double>(b[i].range.length() - measured)) / static_cast<double>(measured));
    }
    result.kinds.push_back(std::move(kind));
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    result.model_error_pct = 100 * errors[errors.size() / 2];
  }
  return result;
}

}  // namespace jqtrace
