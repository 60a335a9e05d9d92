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
class ColumnBytes {
 public:
  ColumnBytes() = default;
  ColumnBytes(ColumnBytes&& o) noexcept { *this = std::move(o); }
  ColumnBytes& operator=(ColumnBytes&& o) noexcept;
  ~ColumnBytes() { release(); }
  uint8_t* get() const { return data_; }
  std::size_t capacity() const { return capacity_; }
  /// Grows to at least n bytes, keeping the contents.
  void grow(std::size_t n);

 private:
  bool in_place() const { return data_ == reinterpret_cast<const uint8_t*>(&word_); }
  void release();
  uint64_t word_ = 0;
  uint8_t* data_ = reinterpret_cast<uint8_t*>(&word_);
  std::size_t capacity_ = sizeof word_;
  bool mapped_ = false;
};

class IntColumn {
 public:
  IntColumn() = default;  // width 0: every access reads the bytes' first word, masked to 0
  IntColumn(IntColumn&& o) noexcept { *this = std::move(o); }
  /// The column moved from is left empty (and usable).
  IntColumn& operator=(IntColumn&& o) noexcept {
    if (this != &o) {
      data_ = std::move(o.data_);
      capacity_ = std::exchange(o.capacity_, kUnbounded);
      size_ = std::exchange(o.size_, 0);
      width_ = std::exchange(o.width_, 0u);
      max_for_width_ = std::exchange(o.max_for_width_, 0);
    }
    return *this;
  }

  /// Appends v. The common case (fits the width, room left) is a store and an increment.
  __attribute__((always_inline)) void push(int64_t v) {
    uint64_t z = zigzag(v);
    std::size_t at = size_ * width_;
    if (__builtin_expect(z <= max_for_width_ && at + 8 <= capacity_, 1)) {
      std::memcpy(data_.get() + at, &z, 8);  // little-endian; the extra bytes get overwritten
      ++size_;
      return;
    }
    push_slow(z);
  }
  int64_t operator[](std::size_t i) const {
    uint64_t z;
    std::memcpy(&z, data_.get() + i * width_, 8);
    return unzigzag(z & max_for_width_);
  }
  void set(std::size_t i, int64_t v) {
    uint64_t z = zigzag(v);
    if (z > max_for_width_) widen(z);
    if (width_ == 0) return;
    uint64_t old;
    std::memcpy(&old, data_.get() + i * width_, 8);
    uint64_t merged = (old & ~max_for_width_) | z;
    std::memcpy(data_.get() + i * width_, &merged, 8);
  }
  /// Room for n values of `width` bytes, so that filling an empty column known in advance
  /// (an index's) neither copies nor widens it.
  void reserve(std::size_t n, unsigned width) {
    if (size_ != 0 || width == 0 || width > 8) return;
    widen(mask(width));
    std::size_t need = n * width_ + 8;
    if (need > capacity_) {
      data_.grow(need);
      capacity_ = data_.capacity();
    }
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  unsigned width() const { return width_; }
  /// Resident bytes of the values (capacity beyond size is never touched).
  std::size_t bytes() const { return size_ * width_; }
  /// Appends every value of other: one copy of its bytes when the widths agree (parts of
  /// a file parsed in parallel are joined this way).
  void append(const IntColumn& other) {
    if (other.size_ == 0) return;
    if (other.max_for_width_ > max_for_width_) widen(other.max_for_width_);
    if (width_ == 0) {  // both all zeros
      size_ += other.size_;
      return;
    }
    if (other.width_ != width_) {
      for (std::size_t i = 0; i < other.size_; ++i) push(other[i]);
      return;
    }
    std::size_t need = (size_ + other.size_) * width_ + 8;
    if (need > capacity_) {
      std::size_t grown = need > capacity_ * 2 ? need : capacity_ * 2;
      data_.grow(grown);
      capacity_ = data_.capacity();
    }
    std::memcpy(data_.get() + size_ * width_, other.data_.get(), other.size_ * width_);
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
    if (width_) out.widen(max_for_width_);
    for (uint32_t i : order) out.push((*this)[i]);
    *this = std::move(out);
  }

 private:
  static constexpr std::size_t kUnbounded = SIZE_MAX / 2;  // width 0 needs no room
  /// The first allocation: room for a value or two (a lane with one span needs no more).
  static constexpr std::size_t kFirstBytes = 16;
  static uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
  static int64_t unzigzag(uint64_t z) { return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1); }
  static uint64_t mask(unsigned width) { return width >= 8 ? ~0ull : (1ull << (8 * width)) - 1; }

  __attribute__((noinline)) void push_slow(uint64_t z) {
    if (z > max_for_width_) widen(z);
    std::size_t at = size_ * width_;
    if (at + 8 > capacity_) {
      data_.grow(std::max<std::size_t>(kFirstBytes, capacity_ * 2));
      capacity_ = data_.capacity();
    }
    std::memcpy(data_.get() + at, &z, 8);
    ++size_;
  }
  void widen(uint64_t z) {
    unsigned w = std::max(width_, 1u);
    while (z > mask(w)) ++w;
    ColumnBytes wider;
    wider.grow(std::max<std::size_t>(kFirstBytes, size_ * w * 2 + 8));
    for (std::size_t i = 0; i < size_; ++i) {
      uint64_t v = 0;
      if (width_) std::memcpy(&v, data_.get() + i * width_, 8);
      v &= max_for_width_;
      std::memcpy(wider.get() + i * w, &v, 8);
    }
    data_ = std::move(wider);
    capacity_ = data_.capacity();
    width_ = w;
    max_for_width_ = mask(w);
  }

  ColumnBytes data_;
  std::size_t capacity_ = kUnbounded;  // usable bytes: unbounded while width is 0
  std::size_t size_ = 0;
  unsigned width_ = 0;           // 0: every value so far is zero
  uint64_t max_for_width_ = 0;
};

}  // namespace jqtrace
