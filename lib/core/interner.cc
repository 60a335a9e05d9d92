#include "interner.h"

#include <cstring>
#include <functional>

namespace jqtrace {
namespace {
/// Arena blocks start small and double up to this: a trace with a few names (or a part of
/// one, parsed with its own interner) does not take 64 KiB, or fault its pages in, for them.
constexpr std::size_t kFirstArenaBlock = 1024, kArenaBlock = 64 * 1024;
std::size_t hash_of(std::string_view s) { return std::hash<std::string_view>{}(s); }
}  // namespace

Interner::Interner() : slots_(64, 0) {}

uint32_t Interner::find(std::string_view s) const {
  std::size_t mask = slots_.size() - 1;
  std::size_t h = hash_of(s);
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t slot = slots_[i];
    if (slot == 0) return kNone;
    if (hashes_[slot - 1] == h && views_[slot - 1] == s) return slot - 1;
  }
}

uint32_t Interner::intern_slow(std::string_view s) {
  std::size_t mask = slots_.size() - 1;
  std::size_t h = hash_of(s);
  std::size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    uint32_t slot = slots_[i];
    if (slot == 0) break;
    if (hashes_[slot - 1] == h && views_[slot - 1] == s) return slot - 1;
  }
  uint32_t id = static_cast<uint32_t>(views_.size());
  views_.push_back(store(s));
  hashes_.push_back(h);
  slots_[i] = id + 1;
  if (views_.size() * 2 > slots_.size()) grow();
  return id;
}

std::string_view Interner::store(std::string_view s) {
  if (s.size() > arena_left_) {
    std::size_t grown = std::min(kArenaBlock, kFirstArenaBlock << std::min<std::size_t>(arena_.size(), 6));
    std::size_t block = std::max(grown, s.size());
    arena_.push_back(std::make_unique_for_overwrite<char[]>(block));  // written before read
    arena_next_ = arena_.back().get();
    arena_left_ = block;
  }
  if (!s.empty()) std::memcpy(arena_next_, s.data(), s.size());
  std::string_view stored(arena_next_, s.size());
  arena_next_ += s.size();
  arena_left_ -= s.size();
  return stored;
}

void Interner::grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  std::size_t mask = bigger.size() - 1;
  for (uint32_t id = 0; id < views_.size(); ++id) {
    std::size_t i = hashes_[id] & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = id + 1;
  }
  slots_.swap(bigger);
}

}  // namespace jqtrace
