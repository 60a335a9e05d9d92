#include "parts.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <mutex>

#include "parallel.h"
#include "raw_input.h"
#include "timings.h"

namespace jqtrace {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// Where the line after the newline at `nl` starts a part: its '{', when the line's first
/// non-blank character is '{' and the text before it, blanks aside, ends with ','; else npos.
std::size_t part_start_after(std::string_view text, std::size_t nl) {
  std::size_t at = nl + 1;
  while (at < text.size() && blank(text[at])) ++at;
  if (at >= text.size() || text[at] != '{') return std::string_view::npos;
  std::size_t before = nl;
  while (before > 0 && blank(text[before - 1])) --before;
  return before > 0 && text[before - 1] == ',' ? at : std::string_view::npos;
}

/// The first place after or at `from` (and before `limit`) where a part may start; npos
/// when there is none.
std::size_t next_cut(std::string_view text, std::size_t from, std::size_t limit) {
  for (std::size_t nl = text.find('\n', from); nl != std::string_view::npos && nl < limit;
       nl = text.find('\n', nl + 1))
    if (std::size_t at = part_start_after(text, nl); at != std::string_view::npos) return at;
  return std::string_view::npos;
}

/// Sums the parts' progress for one bar; drawn by whichever thread gets the lock.
class SharedProgress {
 public:
  SharedProgress(const ProgressFn& draw, const PartPlan& plan) : draw_(draw), plan_(plan), done_(plan.starts.size()) {}
  ProgressFn for_part(std::size_t k) {
    if (!draw_) return {};
    return [this, k](uint64_t consumed, uint64_t total) {
      uint64_t end = k + 1 < plan_.starts.size() ? plan_.starts[k + 1] : total;
      done_[k] = std::min(consumed, end) - std::min(plan_.starts[k], consumed);
      std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
      if (!lock) return;
      uint64_t sum = 0;
      for (const auto& d : done_) sum += d;
      draw_(sum, total);
    };
  }

 private:
  const ProgressFn& draw_;
  const PartPlan& plan_;
  std::vector<std::atomic<uint64_t>> done_;
  std::mutex mutex_;
};

}  // namespace

std::optional<std::string> part_prefix(std::string_view text) {
  std::size_t first = 0;
  while (first < text.size() && blank(text[first])) ++first;
  if (first == text.size()) return std::nullopt;
  // Assigned from std::string: GCC 12 warns falsely (-Wrestrict) on assigning literals here.
  static const std::string kObjectPrefix = "{\"traceEvents\":[", kArrayPrefix = "[", kNone;
  return text[first] == '{' ? kObjectPrefix : text[first] == '[' ? kArrayPrefix : kNone;
}

std::size_t last_part_start(std::string_view text, std::size_t min_start) {
  for (std::size_t end = text.size(); end > 0;) {
    const void* found = ::memrchr(text.data(), '\n', end);
    if (!found) break;
    std::size_t nl = static_cast<std::size_t>(static_cast<const char*>(found) - text.data());
    std::size_t at = part_start_after(text, nl);
    if (at != std::string_view::npos && at >= min_start) return at;
    if (nl < min_start) break;  // the lines before start before min_start
    end = nl;
  }
  return std::string_view::npos;
}

namespace {

/// The plan for a text of `size` bytes whose first bytes are head (enough of them to hold
/// its first non-blank byte), with next_cut_at(from, limit) finding cuts in it.
PartPlan plan_with(uint64_t size, std::string_view head, unsigned parts, uint64_t min_part,
                   const std::function<uint64_t(uint64_t, uint64_t)>& next_cut_at) {
  PartPlan plan;
  plan.starts.push_back(0);
  std::optional<std::string> prefix = part_prefix(head);
  if (!prefix || prefix->empty()) return plan;  // blank, or not a trace: the sequential reader says why
  plan.prefix = *prefix;
  if (parts < 2 || size < 2 * min_part) return plan;
  uint64_t want = std::min<uint64_t>(parts, size / min_part);
  for (uint64_t k = 1; k < want; ++k) {
    uint64_t target = size * k / want;
    if (target <= plan.starts.back() + min_part / 2) continue;
    // Search up to a part's length for a cut: the next part starts there.
    uint64_t cut = next_cut_at(target, std::min<uint64_t>(size, target + size / want));
    if (cut == std::string_view::npos || cut < plan.prefix.size()) continue;
    if (cut + min_part / 2 > size) break;
    plan.starts.push_back(cut);
  }
  return plan;
}

/// Reads [lo, hi) of the input into *out: shorter at the file's end, or where it was cut since.
void read_range(const Input& input, uint64_t lo, uint64_t hi, std::string* out) {
  out->resize(hi - lo);
  out->resize(input.read_at(lo, out->data(), out->size()));
}

/// next_cut over a file, read a window at a time: each window starts kContext bytes early
/// and ends kContext late, for the blanks a cut looks across (a cut behind more blanks than
/// that is missed, which only makes a part longer). Read, not mapped: a file cut short
/// under a mapping kills the reader with SIGBUS; read, it is only short.
uint64_t next_cut_in_file(const Input& input, uint64_t from, uint64_t limit) {
  constexpr uint64_t kWindow = 64 * 1024, kContext = 4096;
  std::string window;
  for (uint64_t lo = from; lo < limit; lo += kWindow) {
    uint64_t begin = lo > kContext ? lo - kContext : 0;
    uint64_t stop = std::min(limit, lo + kWindow);
    read_range(input, begin, stop + kContext, &window);
    std::size_t cut = next_cut(window, static_cast<std::size_t>(lo - begin), static_cast<std::size_t>(stop - begin));
    if (cut != std::string_view::npos) return begin + cut;
    if (window.size() < stop - begin) break;  // the file ends (or was cut) before the window did
  }
  return std::string_view::npos;
}

}  // namespace

PartPlan plan_parts(std::string_view text, unsigned parts, uint64_t min_part) {
  return plan_with(text.size(), text, parts, min_part,
                   [&](uint64_t from, uint64_t limit) { return next_cut(text, from, limit); });
}

/// The cut plan of a regular, uncompressed file (one part when it does not split).

PartPlan plan_file(const Input& input, unsigned threads, uint64_t min_part) {
  PhaseClock clock("plan", PhaseKind::serial);
  PartPlan plan;
  plan.starts.push_back(0);
  min_part = std::max<uint64_t>(min_part, 1);
  uint64_t size = input.size();
  if (threads < 2 || !input.splits() || size < 2 * min_part || size < 2) return plan;
  std::string head;
  read_range(input, 0, std::min<uint64_t>(size, 64 * 1024), &head);
  if (head.size() < 2) return plan;
  return plan_with(size, head, threads * kPartsPerThread, min_part,
                   [&](uint64_t from, uint64_t limit) { return next_cut_in_file(input, from, limit); });
}

PartOpener file_parts(std::shared_ptr<Input> input) {
  return [input](uint64_t begin, const std::string& prefix) {
    return begin == 0 && prefix.empty() ? Source::open(*input) : Source::open_part(*input, begin, prefix);
  };
}

PartOpener text_parts(std::shared_ptr<const std::string> text) {
  return [text](uint64_t begin, const std::string& prefix) { return Source::text_part(text, begin, prefix); };
}

namespace {

/// The parts of a planned read as threads read them, joined in order as they become ready
/// (see read_parts).
class PlannedRead {
 public:
  PlannedRead(const PartOpener& open, const PartPlan& plan, const ProgressFn& progress, const PartWork& work)
      : open_(open), plan_(plan), work_(work), shared_(progress, plan), parts_(plan.starts.size()), end_(parts_.size()) {}

  std::vector<PartRead> run(unsigned threads) {
    run_parallel(parts_.size(), threads, [&](std::size_t k) { read_part(k); });
    if (rest_from_ != kNone) read_rest(rest_from_);
    return std::move(counted_);
  }

 private:
  static constexpr std::size_t kNone = SIZE_MAX;
  struct Part {
    ReadResult result;
    bool done = false;
    bool dropped = false;
  };

  std::unique_ptr<Source> open_part(std::size_t k) {
    return k == 0 ? open_(0, "") : open_(plan_.starts[k], plan_.prefix);
  }

  void read_part(std::size_t k) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (k >= end_) return;  // the read ended before this part: not read at all
    }
    ReadResult r;
    std::unique_ptr<Source> src = open_part(k);
    if (src) {
      if (ProgressFn bar = shared_.for_part(k)) src->set_progress(std::move(bar));
      ReadOptions options;
      if (k + 1 < parts_.size()) options.stop_at = plan_.starts[k + 1];
      r = work_.read(k, *src, options);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (!src) {
      // A part 0 that does not open leaves nothing read (the caller reads in one pass and
      // says why); a later one is read with the rest, which says why if it fails again.
      if (k < end_) {
        end_at(k, lock);
        rest_from_ = k > 0 ? k : kNone;
      }
      return;
    }
    parts_[k].result = std::move(r);
    parts_[k].done = true;
    if (k >= end_) drop(k, lock);
    join_ready(lock);
  }

  /// Joins every read part in order, from whichever thread finished one (mutex held; let go
  /// around the join). One thread at a time joins.
  void join_ready(std::unique_lock<std::mutex>& lock) {
    if (joining_) return;
    joining_ = true;
    while (next_to_join_ < end_ && parts_[next_to_join_].done) {
      std::size_t k = next_to_join_;
      const ReadResult& r = parts_[k].result;
      bool last = k + 1 == parts_.size();
      bool error = r.status == ReadStatus::input_error;
      bool joined = false;
      if (last || error || r.stop == ReadResult::Stop::at_boundary) {  // else the cut after part k was wrong
        lock.unlock();
        joined = work_.join(k);
        lock.lock();
      }
      if (!joined) {
        end_at(k, lock);
        rest_from_ = k;
        break;
      }
      counted_.push_back(PartRead{parts_[k].result, true});
      ++next_to_join_;
      if (error) {
        end_at(k + 1, lock);
        rest_from_ = kNone;  // a later part that did not open is past the end now
        break;
      }
    }
    joining_ = false;
  }

  /// Parts from `end` on do not count: those read are dropped now, those being read when
  /// they are done, those not started are not read.
  void end_at(std::size_t end, std::unique_lock<std::mutex>& lock) {
    end_ = std::min(end_, end);
    for (std::size_t k = end; k < parts_.size(); ++k)
      if (parts_[k].done) drop(k, lock);
  }

  void drop(std::size_t k, std::unique_lock<std::mutex>& lock) {
    if (parts_[k].dropped) return;
    parts_[k].dropped = true;
    lock.unlock();
    work_.drop(k);
    lock.lock();
  }

  /// Reads the file from part k's start to its end into the state joined so far (k = 0:
  /// the whole file as part 0), on the calling thread once the others are done.
  void read_rest(std::size_t k) {
    std::unique_ptr<Source> src = open_part(k);
    if (!src) {
      ReadResult failed;
      failed.status = ReadStatus::input_error;
      failed.message = fmt_read_failure(plan_.starts[k]);
      counted_.push_back(PartRead{failed, true});
      return;
    }
    if (ProgressFn bar = shared_.for_part(k)) src->set_progress(std::move(bar));
    if (k > 0) {
      counted_.push_back(PartRead{work_.read_rest(k, *src), true});
      return;
    }
    ReadResult r = work_.read(0, *src, ReadOptions{});
    work_.join(0);
    counted_.push_back(PartRead{r, true});
  }

  static std::string fmt_read_failure(uint64_t at) {
    return "could not read the file from byte " + std::to_string(at) + " (it is shorter than when it was planned)";
  }

  const PartOpener& open_;
  const PartPlan& plan_;
  const PartWork& work_;
  SharedProgress shared_;
  std::mutex mutex_;
  std::vector<Part> parts_;
  std::size_t end_;                ///< parts from here on do not count
  std::size_t next_to_join_ = 0;
  bool joining_ = false;
  std::size_t rest_from_ = kNone;  ///< the part whose start the rest is read from
  std::vector<PartRead> counted_;
};

}  // namespace

std::vector<PartRead> read_parts(const PartOpener& open, const PartPlan& plan, unsigned threads,
                                 const ProgressFn& progress, const PartWork& work) {
  PhaseClock clock("parse", PhaseKind::scales);
  PlannedRead read(open, plan, progress, work);
  return read.run(threads);
}

ReadResult joined_result(const std::vector<PartRead>& reads, std::size_t count) {
  ReadResult r = reads[count - 1].result;
  r.stop = ReadResult::Stop::not_reached;
  r.container = reads[0].result.container;
  r.events = r.view_events = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const ReadResult& part = reads[k].result;
    r.events += part.events;
    r.view_events += part.view_events;
    r.has_events_array = r.has_events_array || part.has_events_array;
    if (part.profile_end) {
      r.profile_offset = part.profile_offset;
      r.profile_end = part.profile_end;
    }
  }
  return r;
}

}  // namespace jqtrace
