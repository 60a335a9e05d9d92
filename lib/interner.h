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
    uint64_t w[2] = {0, 0};
    std::memcpy(w, s.data(), s.size());
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

 private:
  uint32_t intern_slow(std::string_view s);
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
