#include "gaps.h"

#include <algorithm>
#include <map>

#include "flat_map.h"
#include "jobque.h"

namespace jqtrace {
namespace {

constexpr std::size_t kFatShown = 12;

/// A span of the model: its lane and row packed in 4 bytes (a reference per chunk is the
/// one per-chunk cost of gaps). The lane takes as few top bits as the lane count needs.
struct SpanRef {
  uint32_t packed;
};

/// The file's microseconds as the scripts' floats: nearest double to the decimal text.
double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

/// What one chain contributed in the range.
struct ChainRow {
  int64_t chain = 0;
  int64_t pub_ts = 0;
  double wait_end = 0;      ///< end (µs, ts + dur as the scripts added) of the caller's last stage_wait
  uint32_t pub_dur = 0;     ///< ns (a publish over 4.29 s is clamped: it is not a publish)
  int32_t pub_stage = 0;
  int32_t pub_arg = 0;
  uint32_t chunks = 0;
  uint32_t first_chunk = 0;  ///< into the chunk order
  bool published = false;
  bool waited = false;
};

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
  LaneGapMetrics finish(std::string lane, std::string name) {
    LaneGapMetrics m;
    m.lane = std::move(lane);
    m.name = std::move(name);
    m.gaps = gaps_.size();
    m.idle_ns = idle_;
    m.gap_us = map_values(gaps_.summarize(), [](double ns) { return ns / 1000.0; });
    return m;
  }

 private:
  DurationSample gaps_;
  int64_t idle_ = 0, busy_until_ = 0;
  bool any_ = false;
};

struct Pub {
  int64_t ts, dur, stage, arg, chain;
};

struct ClassAccumulator {
  ChainClass out;
  std::size_t first_chain = SIZE_MAX;  ///< dense index of its first chain
  std::vector<double> wall, publish, first_claim;
  std::map<int64_t, std::vector<double>> span, busy, eff, lanes, last, gap;
};

struct TailAccumulator {
  std::vector<double> span, lanes, idle, tail;
};

class GapsBuilder {
 public:
  GapsBuilder(const Trace& t, Range r, const GapsOptions& o) : t_(t), r_(r), o_(o) {
    publish_ = t.names.find(kPublish);
    chunk_ = t.names.find(kChunk);
    stage_wait_ = t.names.find(kStageWait);
    wake_ = t.names.find(kWake);
    fifo_ = t.names.find(kFifoJob);
  }

  bool build(GapsReport* out, std::string* error) {
    report_.by = o_.by;
    if (!size_refs()) {
      *error = "too many spans to index (a lane with over 2^32 / lanes spans)";
      return false;
    }
    find_caller();
    collect_chains();
    order_chunks();
    for (std::size_t c = 0; c < rows_.size(); ++c)
      if (rows_[c].published) chain_metrics(c);
    finish_classes();
    publish_metrics();
    *out = std::move(report_);
    return true;
  }

 private:
  bool in_range(const SpanTable& s, std::size_t i) const { return r_.overlaps(s.ts[i], s.end(i)); }

  /// SPEC §2: the caller is the highest tid with X events.
  void find_caller() {
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const Lane& lane = t_.lanes[l];
      if (lane.spans.size() == 0 || lane.tid.is_string) continue;
      if (caller_ == SIZE_MAX || lane.tid.number > t_.lanes[caller_].tid.number) caller_ = l;
    }
  }

  std::size_t dense(int64_t chain) {
    uint32_t& slot = dense_[chain];
    if (slot == 0) {
      rows_.push_back(ChainRow{});
      rows_.back().chain = chain;
      slot = static_cast<uint32_t>(rows_.size());
    }
    return slot - 1;
  }

  /// One pass over the spans in range: chains (in order of first appearance), their
  /// publishes and caller waits, chunk counts, the wakes, every publish, and each lane's
  /// busy spans in time order for its idle gaps.
  void collect_chains() {
    rows_.reserve(t_.chains.size() + t_.chains.size() / 8 + 16);  // publishes seen, plus orphans
    dense_.reserve(rows_.capacity());
    std::vector<double> wakes;
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const SpanTable& s = t_.lanes[l].spans;
      LaneGaps gaps;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (!in_range(s, i)) continue;
        int64_t name = s.name[i];
        if (name == chunk_ || name == fifo_ || name == publish_) gaps.busy(s.ts[i], s.end(i));
        if (name == wake_) {
          ++report_.wakes;
          wakes.push_back(us(s.dur[i]));
        } else if (name == publish_) {
          ChainRow& c = rows_[dense(s.chain[i])];
          c.published = true;
          c.pub_ts = s.ts[i];
          c.pub_dur = static_cast<uint32_t>(std::min<int64_t>(s.dur[i], UINT32_MAX));
          c.pub_stage = static_cast<int32_t>(s.stage[i]);
          c.pub_arg = static_cast<int32_t>(s.arg[i]);
          pubs_.push_back(ref(l, i));
        } else if (name == chunk_) {
          ++rows_[dense(s.chain[i])].chunks;
        } else if (name == stage_wait_ && l == caller_) {
          ChainRow& c = rows_[dense(s.chain[i])];
          double end = us(s.ts[i]) + us(s.dur[i]);
          c.wait_end = c.waited ? std::max(c.wait_end, end) : end;
          c.waited = true;
        }
      }
      report_.lanes.push_back(gaps.finish(t_.lane_label(l), t_.lanes[l].thread_name));
    }
    report_.chains = rows_.size();
    report_.wake_dur_us = summarize_values(std::move(wakes));
  }

  /// The chunks grouped by chain (counting sort on the chain's dense index), each chain's
  /// then sorted by stage and start: memory is one reference per chunk.
  void order_chunks() {
    uint32_t next = 0;
    for (ChainRow& c : rows_) {
      c.first_chunk = next;
      next += c.chunks;
      c.chunks = 0;
    }
    order_.resize(next);
    for (std::size_t l = 0; l < t_.lanes.size(); ++l) {
      const SpanTable& s = t_.lanes[l].spans;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.name[i] != chunk_ || !in_range(s, i)) continue;
        ChainRow& c = rows_[*dense_.find(s.chain[i]) - 1];
        order_[c.first_chunk + c.chunks++] = ref(l, i);
      }
    }
    for (const ChainRow& c : rows_) {
      auto begin = order_.begin() + c.first_chunk;
      // By stage, then in file order (lane after lane), the order the scripts summed in.
      std::sort(begin, begin + c.chunks, [&](const SpanRef& a, const SpanRef& b) {
        int64_t sa = stage(a), sb = stage(b);
        if (sa != sb) return sa < sb;
        return a.packed < b.packed;  // lane, then row
      });
    }
  }

  SpanRef ref(std::size_t lane, std::size_t row) const {
    return {static_cast<uint32_t>((lane << row_bits_) | row)};
  }
  uint32_t lane(SpanRef r) const { return row_bits_ >= 32 ? 0 : r.packed >> row_bits_; }
  uint32_t row(SpanRef r) const { return row_bits_ >= 32 ? r.packed : r.packed & ((1u << row_bits_) - 1); }
  int64_t ts(SpanRef r) const { return t_.lanes[lane(r)].spans.ts[row(r)]; }
  int64_t dur(SpanRef r) const { return t_.lanes[lane(r)].spans.dur[row(r)]; }
  int64_t stage(SpanRef r) const { return t_.lanes[lane(r)].spans.stage[row(r)]; }

  /// Splits the 32 bits of a SpanRef between lane and row; false when the trace is too big.
  bool size_refs() {
    unsigned lane_bits = 0;
    while ((std::size_t{1} << lane_bits) < t_.lanes.size()) ++lane_bits;
    row_bits_ = 32 - lane_bits;
    for (const Lane& l : t_.lanes)
      if (row_bits_ < 32 && l.spans.size() >= (std::size_t{1} << row_bits_)) return false;
    return true;
  }

  ClassAccumulator& class_of(const ChainRow& c, std::size_t dense_index) {
    int64_t nstages = publish_nstages(c.pub_stage);
    std::string key, name;
    if (o_.by == ClassBy::nstages) {
      key = std::to_string(nstages);
      name = stage_count_class_name(nstages);
    } else {
      key = name = chain_category(nstages, publish_tag(c.pub_stage), t_.profile);
    }
    auto [it, added] = classes_.try_emplace(key);
    ClassAccumulator& acc = it->second;
    if (added) {
      acc.out.key = key;
      acc.out.name = name;
    }
    if (dense_index < acc.first_chain) {
      acc.first_chain = dense_index;
      acc.out.chunks_per_chain = c.pub_arg;
    }
    return acc;
  }

  void chain_metrics(std::size_t index) {
    const ChainRow& c = rows_[index];
    ClassAccumulator& acc = class_of(c, index);
    ++acc.out.n;
    double pub_t0 = us(c.pub_ts), pub_end = pub_t0 + us(c.pub_dur);
    acc.wall.push_back((c.waited ? c.wait_end : pub_end) - pub_t0);
    acc.publish.push_back(us(c.pub_dur));
    bool claimed = false;
    double first_worker = 0;
    const SpanRef* chunks = order_.data() + c.first_chunk;
    for (uint32_t k = 0; k < c.chunks; ++k)
      if (lane(chunks[k]) != caller_) {
        double t0 = us(ts(chunks[k]));
        first_worker = claimed ? std::min(first_worker, t0) : t0;
        claimed = true;
      }
    if (claimed) acc.first_claim.push_back(first_worker - pub_end);
    stage_metrics(c, acc);
  }

  /// Per stage with chunks: span, busy, effective parallelism, lanes, last chunk, the gap
  /// from the previous stage; and the tail metrics of stages on 4 lanes or more.
  void stage_metrics(const ChainRow& c, ClassAccumulator& acc) {
    const SpanRef* chunks = order_.data() + c.first_chunk;
    bool have_prev = false;
    double prev_end = 0;
    for (uint32_t k = 0; k < c.chunks;) {
      int64_t s = stage(chunks[k]);
      uint32_t end_k = k;
      double first = 0, last = 0, busy = 0;
      lane_ends_.clear();
      for (; end_k < c.chunks && stage(chunks[end_k]) == s; ++end_k) {
        double t0 = us(ts(chunks[end_k])), d = us(dur(chunks[end_k])), t1 = t0 + d;
        first = end_k == k ? t0 : std::min(first, t0);
        last = end_k == k ? t1 : std::max(last, t1);
        busy += d;
        add_lane_end(lane(chunks[end_k]), t1);
      }
      double last_dur = 0;  // the longest chunk among those ending last
      for (uint32_t j = k; j < end_k; ++j) {
        double t0 = us(ts(chunks[j])), d = us(dur(chunks[j]));
        if (t0 + d == last) last_dur = std::max(last_dur, d);
      }
      double span = last - first;
      acc.span[s].push_back(span);
      acc.busy[s].push_back(busy);
      acc.eff[s].push_back(span > 0 ? busy / span : 1.0);
      acc.lanes[s].push_back(static_cast<double>(lane_ends_.size()));
      acc.last[s].push_back(last_dur);
      if (have_prev) acc.gap[s].push_back(first - prev_end);
      tail_metrics(acc.out, s, first, busy);
      have_prev = true;
      prev_end = last;
      k = end_k;
    }
  }

  void add_lane_end(uint32_t lane, double end) {
    for (auto& [l, e] : lane_ends_)
      if (l == lane) {
        e = std::max(e, end);
        return;
      }
    lane_ends_.push_back({lane, end});
  }

  /// SPEC §2 tail metrics, for a (chain, stage) on 4 lanes or more with a positive span.
  void tail_metrics(const ChainClass& cls, int64_t s, double first, double busy) {
    if (lane_ends_.size() < 4) return;
    std::vector<double> ends;
    for (const auto& le : lane_ends_) ends.push_back(le.second);
    std::sort(ends.begin(), ends.end());
    double span = ends.back() - first;
    if (span <= 0) return;
    double lanes = static_cast<double>(ends.size());
    TailAccumulator& t = tails_[{cls.key, s}];
    t.span.push_back(span);
    t.lanes.push_back(lanes);
    t.idle.push_back(1.0 - busy / (span * lanes));  // fractions, as the script kept them
    t.tail.push_back((ends.back() - ends[ends.size() / 2]) / span);
  }

  void finish_classes() {
    std::vector<ClassAccumulator*> order;
    for (auto& [key, acc] : classes_) order.push_back(&acc);
    // The old scripts' order: most stages first; categories in order of first appearance.
    std::sort(order.begin(), order.end(), [&](ClassAccumulator* a, ClassAccumulator* b) {
      if (o_.by == ClassBy::nstages) return std::stoll(a->out.key) > std::stoll(b->out.key);
      return a->first_chain < b->first_chain;
    });
    for (ClassAccumulator* acc : order) {
      ChainClass& out = acc->out;
      out.wall_us = summarize_values(std::move(acc->wall));
      out.publish_us = summarize_values(std::move(acc->publish));
      out.first_claim_us = summarize_values(std::move(acc->first_claim));
      for (auto& [s, spans] : acc->span) {
        StageMetrics m;
        m.stage = s;
        m.span_us = summarize_values(std::move(spans));
        m.busy_us = summarize_values(std::move(acc->busy[s]));
        m.eff_par = summarize_values(std::move(acc->eff[s]));
        m.lanes = summarize_values(std::move(acc->lanes[s]));
        m.last_chunk_us = summarize_values(std::move(acc->last[s]));
        m.gap_from_prev_us = summarize_values(std::move(acc->gap[s]));
        out.stages.push_back(std::move(m));
      }
      report_.classes.push_back(std::move(out));
    }
    for (const ChainClass& cls : report_.classes)
      for (auto& [key, t] : tails_) {
        if (key.first != cls.key) continue;
        TailMetrics m;
        m.key = cls.key;
        m.name = cls.name;
        m.stage = key.second;
        m.n = t.span.size();
        m.span_us = summarize_values(std::move(t.span));
        m.lanes = summarize_values(std::move(t.lanes));
        // The scripts printed 100 * median(fractions): scale after summarising, as they did.
        auto percent = [](double fraction) { return fraction * 100.0; };
        m.idle_pct = map_values(summarize_values(std::move(t.idle)), percent);
        m.tail_pct = map_values(summarize_values(std::move(t.tail)), percent);
        report_.tail.push_back(std::move(m));
      }
  }

  /// trace_publish_tail.py: publishes by time, the fat ones, and the gap from each
  /// one-stage chain's last chunk to the next publish.
  void publish_metrics() {
    std::vector<Pub> pubs;  // only now: a reference each was kept during the pass
    pubs.reserve(pubs_.size());
    for (SpanRef r : pubs_) {
      const SpanTable& s = t_.lanes[lane(r)].spans;
      std::size_t i = row(r);
      pubs.push_back({s.ts[i], s.dur[i], s.stage[i], s.arg[i], s.chain[i]});
    }
    std::vector<SpanRef>().swap(pubs_);
    std::stable_sort(pubs.begin(), pubs.end(), [](const Pub& a, const Pub& b) { return a.ts < b.ts; });
    PublishMetrics& m = report_.publish;
    m.count = pubs.size();
    m.fat_ns = o_.fat_ns;
    std::vector<double> durs;
    for (const Pub& p : pubs) {
      durs.push_back(us(p.dur));
      if (p.dur <= o_.fat_ns) continue;
      ++m.fat_count;
      if (m.fat.size() < kFatShown) m.fat.push_back({p.ts, p.dur, publish_nstages(p.stage), p.arg, p.chain});
    }
    m.dur_us = summarize_values(std::move(durs));
    std::vector<double> gaps, next_durs;
    for (const ChainRow& c : rows_) {
      if (!c.published || publish_nstages(c.pub_stage) != 1 || c.chunks == 0) continue;
      double end = 0;
      for (uint32_t k = 0; k < c.chunks; ++k) {
        SpanRef r = order_[c.first_chunk + k];
        end = k ? std::max(end, us(ts(r)) + us(dur(r))) : us(ts(r)) + us(dur(r));
      }
      auto next = std::upper_bound(pubs.begin(), pubs.end(), end,
                                   [](double v, const Pub& p) { return v < us(p.ts); });
      if (next == pubs.end()) continue;
      gaps.push_back(us(next->ts) - end);
      next_durs.push_back(us(next->dur));
    }
    m.post_cls_gap_us = summarize_values(std::move(gaps));
    m.next_publish_dur_us = summarize_values(std::move(next_durs));
  }

  const Trace& t_;
  Range r_;
  GapsOptions o_;
  uint32_t publish_, chunk_, stage_wait_, wake_, fifo_;
  std::size_t caller_ = SIZE_MAX;
  unsigned row_bits_ = 32;
  FlatMap<uint32_t> dense_;  ///< chain id → dense index + 1
  std::vector<ChainRow> rows_;
  std::vector<SpanRef> order_;
  std::vector<SpanRef> pubs_;
  std::vector<std::pair<uint32_t, double>> lane_ends_;
  std::map<std::string, ClassAccumulator> classes_;
  std::map<std::pair<std::string, int64_t>, TailAccumulator> tails_;
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

ClassBy default_class_by(const Trace& trace) {
  bool tagged = false;
  trace.chains.for_each([&](int64_t, const ChainInfo& c) { tagged = tagged || c.tag != 0; });
  return tagged ? ClassBy::category : ClassBy::nstages;
}

bool compute_gaps(const Trace& trace, Range range, const GapsOptions& options, GapsReport* report,
                  std::string* error) {
  return GapsBuilder(trace, range, options).build(report, error);
}

}  // namespace jqtrace
