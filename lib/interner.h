#pragma once
// String interning: each distinct name gets a dense id, so events store 4-byte ids and
// names compare as integers. Views stay valid for the interner's lifetime (an arena).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace jqtrace {

class Interner {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  Interner();
  /// The id of s, adding it on first sight.
  uint32_t intern(std::string_view s);
  /// The id of s, or kNone.
  uint32_t find(std::string_view s) const;
  std::string_view view(uint32_t id) const { return views_[id]; }
  std::size_t size() const { return views_.size(); }

 private:
  std::string_view store(std::string_view s);
  void grow();

  std::vector<uint32_t> slots_;  // id + 1, 0 = empty; size is a power of two
  std::vector<std::string_view> views_;
  std::vector<std::size_t> hashes_;
  std::vector<std::unique_ptr<char[]>> arena_;
  std::size_t arena_left_ = 0;
  char* arena_next_ = nullptr;
};

}  // namespace jqtrace
