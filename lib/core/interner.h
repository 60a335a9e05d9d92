#pragma once
// String interning: each distinct name gets a dense id, so events store 4-byte ids and
// names compare as integers. Views stay valid for the interner's lifetime (an arena).
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace jqtrace {

class Interner {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  Interner();
  /// The id of s, adding it on first sight. Names of up to 16 bytes (nearly all of them)
  /// are found in a small direct-mapped cache compared as two words: no hashing of bytes.
  uint32_t intern(std::string_view s) {
    if (s.size() > 16) return intern_slow(s);
    uint64_t w[2];
    pack_short(s, w);
    uint64_t h = (w[0] * 0x9E3779B97F4A7C15ull) ^ (w[1] * 0xC2B2AE3D27D4EB4Full) ^ s.size();
    ShortEntry& e = short_cache_[(h >> 58) & (kShortCache - 1)];
    if (e.id != kNone && e.w[0] == w[0] && e.w[1] == w[1] && e.size == s.size()) return e.id;
    uint32_t id = intern_slow(s);
    e = ShortEntry{{w[0], w[1]}, static_cast<uint32_t>(s.size()), id};
    return id;
  }
  /// The id of s, or kNone.
  uint32_t find(std::string_view s) const;
  std::string_view view(uint32_t id) const { return views_[id]; }
  std::size_t size() const { return views_.size(); }
  /// Interns every name of other here; returns other's ids mapped to these (for joining
  /// what parts of a file, parsed with their own interners, found).
  std::vector<uint32_t> intern_all(const Interner& other) {
    std::vector<uint32_t> ids(other.size());
    for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = intern(other.view(id));
    return ids;
  }

 private:
  uint32_t intern_slow(std::string_view s);
  /// Two words that, with the length, identify a string of up to 16 bytes. Overlapping
  /// fixed-size loads instead of a variable-length copy: no store-forwarding stall, and
  /// never a byte outside the string.
  static void pack_short(std::string_view s, uint64_t w[2]) {
    const char* p = s.data();
    std::size_t n = s.size();
    if (n >= 8) {
      std::memcpy(&w[0], p, 8);
      std::memcpy(&w[1], p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      w[0] = a | (uint64_t{b} << 32);
      w[1] = 0;
    } else {
      w[0] = n ? static_cast<uint8_t>(p[0]) | (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) |
                     (uint64_t{static_cast<uint8_t>(p[n - 1])} << 16)
               : 0;
      w[1] = 0;
    }
  }
  std::string_view store(std::string_view s);

  static constexpr std::size_t kShortCache = 64;
  struct ShortEntry {
    uint64_t w[2] = {0, 0};
    uint32_t size = 0;
    uint32_t id = kNone;
  };
  ShortEntry short_cache_[kShortCache];
  void grow();

  std::vector<uint32_t> slots_;  // id + 1, 0 = empty; size is a power of two
  std::vector<std::string_view> views_;
  std::vector<std::size_t> hashes_;
  std::vector<std::unique_ptr<char[]>> arena_;
  std::size_t arena_left_ = 0;
  char* arena_next_ = nullptr;
};

}  // namespace jqtrace
