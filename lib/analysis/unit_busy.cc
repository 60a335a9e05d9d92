#include "unit_busy.h"

#include <algorithm>
#include <atomic>

#include "jobque.h"
#include "parallel.h"

namespace jqtrace {
namespace {

/// Units one after another, none ending before it starts and none overlapping the next:
/// then a span that reaches past a unit's end covers every unit before the last it meets.
bool in_order_without_overlaps(const std::vector<Unit>& units) {
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (units[u].range.lo > units[u].range.hi) return false;
    if (u > 0 && units[u - 1].range.hi > units[u].range.lo) return false;
  }
  return true;
}

/// Rows [begin, end) of a lane, walked on one thread.
struct Piece {
  std::size_t lane, begin, end;
};

/// What one thread adds up, flat by [list][unit][category]: the busy time of the spans
/// that meet a unit in part, and, for the units spans cover whole, "one more covering span
/// from this unit on" (+1) and "one fewer" (-1) — a span across a thousand units costs two
/// words, not a thousand.
struct Tally {
  std::vector<int64_t> busy, covers;
};

class BusyWalk {
 public:
  BusyWalk(const Trace& t, const std::vector<std::vector<Unit>>& units)
      : t_(t), units_(units), names_(JobqueNames::found(t.names)), categories_(t.categories.size()) {
    offset_.push_back(0);
    for (const std::vector<Unit>& list : units) offset_.push_back(offset_.back() + (list.size() + 1) * categories_);
  }

  /// Words of one array of a Tally.
  std::size_t entries() const { return offset_.back(); }

  /// Adds the piece's busy spans to the units they meet.
  void walk(const Piece& piece, Tally& tally) const {
    const SpanTable& s = t_.lanes[piece.lane].spans;
    std::vector<std::size_t> next(units_.size());  // per list: the first unit a span can reach
    int64_t first_ts = s.ts[piece.begin];
    for (std::size_t k = 0; k < units_.size(); ++k) next[k] = first_ending_after(units_[k], first_ts);
    for (std::size_t i = piece.begin; i < piece.end; ++i) {
      if (!names_.busy(s.name[i])) continue;
      int64_t ts = s.ts[i], end = ts + s.dur[i];
      if (end <= ts) continue;  // no time to add
      auto category = static_cast<std::size_t>(s.category[i]);
      for (std::size_t k = 0; k < units_.size(); ++k) add(k, next[k], ts, end, category, tally);
    }
  }

  /// The threads' tallies summed, the covers turned into time, and each unit's categories
  /// ordered and shared as StatsBuilder orders and shares its groups.
  UnitsBusy finish(std::vector<Tally>& tallies) const {
    Tally& sum = tallies.front();
    for (std::size_t t = 1; t < tallies.size(); ++t) {
      for (std::size_t e = 0; e < entries(); ++e) sum.busy[e] += tallies[t].busy[e];
      for (std::size_t e = 0; e < entries(); ++e) sum.covers[e] += tallies[t].covers[e];
      tallies[t] = Tally{};
    }
    UnitsBusy out(units_.size());
    for (std::size_t k = 0; k < units_.size(); ++k) {
      add_covered_time(k, sum);
      out[k].resize(units_[k].size());
      for (std::size_t u = 0; u < units_[k].size(); ++u) out[k][u] = shares(&sum.busy[at(k, u, 0)]);
    }
    return out;
  }

 private:
  std::size_t at(std::size_t k, std::size_t u, std::size_t category) const {
    return offset_[k] + u * categories_ + category;
  }

  static std::size_t first_ending_after(const std::vector<Unit>& units, int64_t ts) {
    auto it = std::partition_point(units.begin(), units.end(), [&](const Unit& u) { return u.range.hi <= ts; });
    return static_cast<std::size_t>(it - units.begin());
  }

  /// One span [ts, end] of a category, added to list k's units. Spans come in order of
  /// start, so `next` (the first unit not yet over) only moves forward.
  void add(std::size_t k, std::size_t& next, int64_t ts, int64_t end, std::size_t category, Tally& tally) const {
    const std::vector<Unit>& units = units_[k];
    while (next < units.size() && units[next].range.hi <= ts) ++next;
    if (next == units.size() || units[next].range.lo >= end) return;
    const Range& first = units[next].range;
    tally.busy[at(k, next, category)] += first.clipped(ts, end);
    if (first.hi >= end) return;  // mostly: the span ends inside the unit
    // It reaches into later units: those it meets are [next + 1, last); every one of them
    // covered whole but perhaps the last.
    auto after = units.begin() + static_cast<std::ptrdiff_t>(next + 1);
    auto met_end = std::partition_point(after, units.end(), [&](const Unit& u) { return u.range.lo < end; });
    std::size_t last = static_cast<std::size_t>(met_end - units.begin());
    std::size_t whole_end = last;
    if (last > next + 1 && units[last - 1].range.hi > end) {
      tally.busy[at(k, last - 1, category)] += units[last - 1].range.clipped(ts, end);
      whole_end = last - 1;
    }
    if (next + 1 < whole_end) {
      tally.covers[at(k, next + 1, category)] += 1;
      tally.covers[at(k, whole_end, category)] -= 1;
    }
  }

  /// Each unit gets its length for every span then covering it.
  void add_covered_time(std::size_t k, Tally& sum) const {
    for (std::size_t c = 0; c < categories_; ++c) {
      int64_t covering = 0;
      for (std::size_t u = 0; u < units_[k].size(); ++u) {
        covering += sum.covers[at(k, u, c)];
        if (covering != 0) sum.busy[at(k, u, c)] += covering * std::max<int64_t>(0, units_[k][u].range.length());
      }
    }
  }

  /// A unit's categories with busy time: by busy (descending), name, index; shares of
  /// their sum (StatsBuilder::finish_groups, whose groups by category are the categories
  /// in index order).
  std::vector<CategoryBusy> shares(const int64_t* busy) const {
    std::vector<CategoryBusy> out;
    int64_t total = 0;
    for (std::size_t c = 0; c < categories_; ++c) {
      total += busy[c];
      if (busy[c] > 0) out.push_back({static_cast<uint32_t>(c), busy[c], 0.0});
    }
    std::sort(out.begin(), out.end(), [&](const CategoryBusy& x, const CategoryBusy& y) {
      if (x.busy_ns != y.busy_ns) return x.busy_ns > y.busy_ns;
      if (int c = t_.categories[x.category].name.compare(t_.categories[y.category].name)) return c < 0;
      return x.category < y.category;
    });
    for (CategoryBusy& c : out) c.share_pct = 100.0 * static_cast<double>(c.busy_ns) / static_cast<double>(total);
    return out;
  }

  const Trace& t_;
  const std::vector<std::vector<Unit>>& units_;
  JobqueNames names_;
  std::size_t categories_;
  std::vector<std::size_t> offset_;  ///< per list, where its units' entries start
};

/// Each lane's spans that can meet [lo, hi], cut into pieces of at most kPieceRows rows so
/// that two threads share a long lane.
std::vector<Piece> pieces_of(const Trace& t, const SpanIndex& index, int64_t lo, int64_t hi) {
  constexpr std::size_t kPieceRows = std::size_t{1} << 18;
  std::vector<Piece> pieces;
  for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
    auto [begin, end] = index.candidate_rows(t, lane, {lo, hi});
    for (; begin < end; begin += std::min(kPieceRows, end - begin))
      pieces.push_back({lane, begin, begin + std::min(kPieceRows, end - begin)});
  }
  return pieces;
}

}  // namespace

std::optional<UnitsBusy> busy_by_category_of_units(const Trace& trace, const SpanIndex& index,
                                                   const std::vector<std::vector<Unit>>& units, unsigned threads) {
  if (!trace.jobque) return std::nullopt;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const std::vector<Unit>& list : units) {
    if (!in_order_without_overlaps(list)) return std::nullopt;
    if (list.empty()) continue;
    lo = std::min(lo, list.front().range.lo);
    hi = std::max(hi, list.back().range.hi);
  }
  BusyWalk walk(trace, units);
  std::vector<Piece> pieces = lo <= hi ? pieces_of(trace, index, lo, hi) : std::vector<Piece>{};
  std::size_t workers = std::clamp<std::size_t>(pieces.size(), 1, std::max(1u, threads));
  // Two arrays a worker: kept well under the model's size (a span takes ~15 bytes in it),
  // so a trace of thousands of categories and units goes the general way instead.
  std::size_t spans = 0;
  for (const Lane& lane : trace.lanes) spans += lane.spans.size();
  if (walk.entries() * 2 * workers > spans / 4 + (std::size_t{1} << 17)) return std::nullopt;

  std::vector<Tally> tallies(workers);
  std::atomic<std::size_t> next_piece{0};
  run_parallel(workers, static_cast<unsigned>(workers), [&](std::size_t w) {
    Tally& tally = tallies[w];
    tally.busy.assign(walk.entries(), 0);
    tally.covers.assign(walk.entries(), 0);
    for (std::size_t p = next_piece++; p < pieces.size(); p = next_piece++) walk.walk(pieces[p], tally);
  });
  return walk.finish(tallies);
}

}  // namespace jqtrace
