#pragma once
// SPEC §2's pairing of B and E events, written once for the model, the validator and the
// window index: per lane, in file order, an E closes the innermost open B; a B never
// closed runs to the trace end; an E with nothing open closes nothing. Each caller keeps
// one pairing per lane.
#include <optional>
#include <utility>
#include <vector>

namespace jqtrace {

/// Begin and End are what the caller needs back of a B and an E (a row, a file offset).
template <typename Begin, typename End = Begin>
class BeginEndPairing {
 public:
  void begin(Begin b) { open_.push_back(std::move(b)); }

  /// An E: the B it closes, or nullopt when nothing is open (the E is kept in unmatched()).
  std::optional<Begin> end(End e) {
    if (open_.empty()) {
      unmatched_.push_back(std::move(e));
      return std::nullopt;
    }
    Begin b = std::move(open_.back());
    open_.pop_back();
    return b;
  }

  /// The Bs still open, outermost first: at the end of the file they run to the trace end.
  const std::vector<Begin>& unclosed() const { return open_; }
  /// The Es that closed nothing, in file order.
  const std::vector<End>& unmatched() const { return unmatched_; }

  /// Joins the pairing of the same lane in the next part of a file read in parts: each of
  /// its unmatched Es closes this part's innermost open B instead (on_closed(begin, end)),
  /// as one pass would have, and its open Bs go on top of this part's.
  template <typename OnClosed>
  void absorb(BeginEndPairing&& later, OnClosed on_closed) {
    for (End& e : later.unmatched_) {
      if (open_.empty()) {
        unmatched_.push_back(std::move(e));
        continue;
      }
      on_closed(std::move(open_.back()), e);
      open_.pop_back();
    }
    for (Begin& b : later.open_) open_.push_back(std::move(b));
    later = BeginEndPairing{};
  }

 private:
  std::vector<Begin> open_;
  std::vector<End> unmatched_;
};

}  // namespace jqtrace
