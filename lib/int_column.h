#pragma once
// A column of integers stored in as few bytes as its values need (0..8, zigzag-encoded so
// small negatives stay small; 0 bytes while every value is zero). The trace model keeps one
// per field: a jobque span takes ~15 bytes instead of the 40+ a struct would, which is what
// lets a whole multi-GB trace sit in a quarter of its file size. Widening re-encodes once
// per width step.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace jqtrace {

/// Bytes that grow without a second copy: small buffers by realloc, large ones mapped and
/// grown by mremap, so a 30 MB column growing to 60 MB never holds 90 MB at once. Bytes past
/// what is written are never touched, so capacity costs address space, not memory.
///
/// Until it first grows, the bytes are one word inside the object: an empty or all-zero
/// column allocates nothing (a trace of a million one-span lanes has eight columns a lane,
/// most of them zeros).
///
/// 24 bytes: buffers of kMapAbove bytes or more are the mapped ones, and the capacity's top
/// byte is the owner's (IntColumn keeps its width there), so a column is 32 bytes and a
/// lane's eight of them 256 (a million one-span lanes: 256 MB instead of 512).
class ColumnBytes {
 public:
  static constexpr std::size_t kMapAbove = std::size_t{1} << 20;  ///< buffers this large are mapped
  ColumnBytes() = default;
  ColumnBytes(ColumnBytes&& o) noexcept { *this = std::move(o); }
  /// Takes o's bytes; the owner's byte stays this object's own.
  ColumnBytes& operator=(ColumnBytes&& o) noexcept;
  ~ColumnBytes() { release(); }
  uint8_t* get() const { return data_; }
  std::size_t capacity() const { return capacity_; }
  /// Grows to at least n bytes, keeping the contents.
  void grow(std::size_t n);
  uint8_t owner_byte() const { return static_cast<uint8_t>(owner_byte_); }
  void set_owner_byte(uint8_t b) { owner_byte_ = b; }

 private:
  bool in_place() const { return data_ == reinterpret_cast<const uint8_t*>(&word_); }
  bool mapped() const { return capacity_ >= kMapAbove; }
  void set_capacity(std::size_t n) { capacity_ = n & ((uint64_t{1} << 56) - 1); }  // grow refuses more
  void release();
  uint64_t word_ = 0;
  uint8_t* data_ = reinterpret_cast<uint8_t*>(&word_);
  uint64_t capacity_ : 56 = sizeof word_;
  uint64_t owner_byte_ : 8 = 0;
};

class IntColumn {
 public:
  IntColumn() = default;  // width 0: every access reads the bytes' first word, masked to 0
  IntColumn(IntColumn&& o) noexcept { *this = std::move(o); }
  /// The column moved from is left empty (and usable).
  IntColumn& operator=(IntColumn&& o) noexcept {
    if (this != &o) {
      data_ = std::move(o.data_);
      data_.set_owner_byte(o.data_.owner_byte());  // the width
      o.data_.set_owner_byte(0);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  /// Appends v. The common case (fits the width, room left) is a store and an increment.
  __attribute__((always_inline)) void push(int64_t v) {
    uint64_t z = zigzag(v);
    std::size_t at = size_ * width();
    // Width 0 holds its bytes in place (never grown): at is 0 and the word takes the zero.
    if (__builtin_expect(z <= max_for_width() && at + 8 <= data_.capacity(), 1)) {
      std::memcpy(data_.get() + at, &z, 8);  // little-endian; the extra bytes get overwritten
      ++size_;
      return;
    }
    push_slow(z);
  }
  int64_t operator[](std::size_t i) const {
    uint64_t z;
    std::memcpy(&z, data_.get() + i * width(), 8);
    return unzigzag(z & max_for_width());
  }
  void set(std::size_t i, int64_t v) {
    uint64_t z = zigzag(v);
    if (z > max_for_width()) widen(z);
    if (width() == 0) return;
    uint64_t old;
    std::memcpy(&old, data_.get() + i * width(), 8);
    uint64_t merged = (old & ~max_for_width()) | z;
    std::memcpy(data_.get() + i * width(), &merged, 8);
  }
  /// Room for n values of `width` bytes, so that filling an empty column known in advance
  /// (an index's) neither copies nor widens it.
  void reserve(std::size_t n, unsigned width) {
    if (size_ != 0 || width == 0 || width > 8) return;
    widen(mask(width));
    std::size_t need = n * width + 8;
    if (need > data_.capacity()) data_.grow(need);
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  unsigned width() const { return data_.owner_byte(); }
  /// Resident bytes of the values (capacity beyond size is never touched).
  std::size_t bytes() const { return size_ * width(); }
  /// Appends every value of other: one copy of its bytes when the widths agree (parts of
  /// a file parsed in parallel are joined this way).
  void append(const IntColumn& other) {
    if (other.size_ == 0) return;
    if (other.max_for_width() > max_for_width()) widen(other.max_for_width());
    if (width() == 0) {  // both all zeros
      size_ += other.size_;
      return;
    }
    if (other.width() != width()) {
      for (std::size_t i = 0; i < other.size_; ++i) push(other[i]);
      return;
    }
    std::size_t need = (size_ + other.size_) * width() + 8;
    if (need > data_.capacity()) data_.grow(need > data_.capacity() * 2 ? need : data_.capacity() * 2);
    std::memcpy(data_.get() + size_ * width(), other.data_.get(), other.size_ * width());
    size_ += other.size_;
  }
  /// Appends f(v) for every value v of other.
  template <typename F>
  void append_mapped(const IntColumn& other, F&& f) {
    for (std::size_t i = 0; i < other.size_; ++i) push(f(other[i]));
  }
  /// Reorders so that new[i] = old[order[i]].
  void permute(const std::vector<uint32_t>& order) {
    IntColumn out;
    if (width()) out.widen(max_for_width());
    for (uint32_t i : order) out.push((*this)[i]);
    *this = std::move(out);
  }

 private:
  /// The first allocation, at the second value (the first stays in place): room for two.
  static constexpr std::size_t kFirstBytes = 16;
  static uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
  static int64_t unzigzag(uint64_t z) { return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1); }
  static uint64_t mask(unsigned width) { return kMaxForWidth[std::min(width, 8u)]; }

  __attribute__((noinline)) void push_slow(uint64_t z) {
    if (z > max_for_width()) widen(z);
    std::size_t at = size_ * width();
    if (at + 8 > data_.capacity()) data_.grow(std::max<std::size_t>(kFirstBytes, data_.capacity() * 2));
    std::memcpy(data_.get() + at, &z, 8);
    ++size_;
  }
  void widen(uint64_t z) {
    unsigned w = std::max(width(), 1u);
    while (z > mask(w)) ++w;
    if (size_ == 0) {  // nothing to re-encode: the first value goes in place (a one-span lane allocates nothing)
      data_.set_owner_byte(static_cast<uint8_t>(w));
      return;
    }
    ColumnBytes wider;
    wider.grow(std::max<std::size_t>(kFirstBytes, size_ * w * 2 + 8));
    for (std::size_t i = 0; i < size_; ++i) {
      uint64_t v;
      std::memcpy(&v, data_.get() + i * width(), 8);
      v &= max_for_width();
      std::memcpy(wider.get() + i * w, &v, 8);
    }
    data_ = std::move(wider);
    data_.set_owner_byte(static_cast<uint8_t>(w));
  }
  uint64_t max_for_width() const { return kMaxForWidth[width()]; }

  static constexpr uint64_t kMaxForWidth[9] = {0,       0xFF,         0xFFFF,         0xFFFFFF,          0xFFFFFFFF,
                                               0xFFFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF, ~0ull};
  ColumnBytes data_;  ///< its owner byte is the width: 0 while every value so far is zero
  std::size_t size_ = 0;
};

}  // namespace jqtrace
