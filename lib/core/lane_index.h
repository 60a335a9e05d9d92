#pragma once
// Lanes by (pid, tid) for the loader and the validator.
#include <cstdint>
#include <utility>
#include <vector>

#include "event.h"

namespace jqtrace {

/// Lanes by (pid, tid): an open-addressing table of lane indices, whose keys are read
/// from the lanes themselves. A std::map took ~100 bytes a lane and twenty compares of
/// six-field keys for each event of a trace of a million one-span lanes; this takes 8
/// bytes a lane at most, and one or two probes. (The validator's map took ~100 bytes a lane
/// as well.)
class LaneIndex {
 public:
  /// The lane whose key is `key` (key_of(i) gives lane i's), or `fresh`, from now on the
  /// key's lane, when no lane has it; second: whether it was added.
  template <typename KeyOf>
  std::pair<uint32_t, bool> find_or_add(const LaneKey& key, uint32_t fresh, KeyOf&& key_of) {
    if ((size_ + 1) * 2 > slots_.size()) grow(key_of);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == kEmpty) {
        slots_[i] = fresh;
        ++size_;
        return {fresh, true};
      }
      if (key_of(slots_[i]) == key) return {slots_[i], false};
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static std::size_t hash(const LaneKey& k) {
    auto mix = [](uint64_t h, uint64_t v) {
      h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
      return h * 0xBF58476D1CE4E5B9ull;
    };
    uint64_t h = mix(std::get<0>(k), static_cast<uint64_t>(std::get<1>(k)));
    h = mix(h, std::get<2>(k));
    h = mix(h, std::get<3>(k));
    h = mix(h, static_cast<uint64_t>(std::get<4>(k)));
    h = mix(h, std::get<5>(k));
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
  template <typename KeyOf>
  void grow(KeyOf&& key_of) {
    std::vector<uint32_t> old(slots_.empty() ? 16 : slots_.size() * 2, kEmpty);
    old.swap(slots_);
    std::size_t mask = slots_.size() - 1;
    for (uint32_t lane : old) {
      if (lane == kEmpty) continue;
      std::size_t i = hash(key_of(lane)) & mask;
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = lane;
    }
  }
  std::vector<uint32_t> slots_;
  std::size_t size_ = 0;
};

}  // namespace jqtrace
