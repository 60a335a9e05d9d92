#pragma once
// A column of integers stored in as few bytes as its values need (0..8, zigzag-encoded so
// small negatives stay small; 0 bytes while every value is zero). The trace model keeps one
// per field: a jobque span takes ~15 bytes instead of the 40+ a struct would, which is what
// lets a whole multi-GB trace sit in a quarter of its file size. Widening re-encodes once
// per width step.
//
// 16 bytes, the first value in place: a trace of a million one-span lanes holds eight
// columns a lane, and their size was most of what such a trace cost (issue 17).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "permute.h"

namespace jqtrace {

class IntColumn {
 public:
  IntColumn() = default;  // width 0: every access reads the word in place, masked to 0
  IntColumn(IntColumn&& o) noexcept
      : word_(o.word_), meta_(o.meta_) {
    o.forget();
  }
  /// The column moved from is left empty (and usable).
  IntColumn& operator=(IntColumn&& o) noexcept {
    if (this != &o) {
      release();
      word_ = o.word_;
      meta_ = o.meta_;
      o.forget();
    }
    return *this;
  }
  ~IntColumn() { release(); }

  /// Appends v. The common case (fits the width, room left) is a store and an increment.
  __attribute__((always_inline)) void push(int64_t v) {
    uint64_t z = zigzag(v);
    std::size_t at = size() * width();
    // Width 0 holds its bytes in place (never grown): at is 0 and the word takes the zero.
    if (__builtin_expect(z <= max_for_width() && at + 8 <= capacity(), 1)) {
      std::memcpy(bytes_at() + at, &z, 8);  // little-endian; the extra bytes get overwritten
      count_one();
      return;
    }
    push_slow(z);
  }
  int64_t operator[](std::size_t i) const {
    uint64_t z;
    std::memcpy(&z, bytes_at() + i * width(), 8);
    return unzigzag(z & max_for_width());
  }
  void set(std::size_t i, int64_t v) {
    uint64_t z = zigzag(v);
    if (z > max_for_width()) widen(z);
    if (width() == 0) return;
    uint64_t old;
    std::memcpy(&old, bytes_at() + i * width(), 8);
    uint64_t merged = (old & ~max_for_width()) | z;
    std::memcpy(bytes_at() + i * width(), &merged, 8);
  }
  /// Room for n values of `width` bytes, so that filling an empty column known in advance
  /// (an index's) neither copies nor widens it.
  void reserve(std::size_t n, unsigned width) {
    if (size() != 0 || width == 0 || width > 8) return;
    widen(mask(width));
    grow(n * width + 8);
  }
  std::size_t size() const { return meta_ & kSizeMask; }
  /// True while the values live in the object's own word (nothing allocated).
  bool in_place() const { return cap_log2() == kInPlaceLog2; }
  bool empty() const { return size() == 0; }
  unsigned width() const { return static_cast<uint8_t>(meta_ >> kWidthShift); }
  /// Resident bytes of the values (capacity beyond size is never touched).
  std::size_t bytes() const { return size() * width(); }
  /// Appends every value of other: one copy of its bytes when the widths agree (parts of
  /// a file parsed in parallel are joined this way).
  void append(const IntColumn& other) {
    if (other.size() == 0) return;
    if (other.max_for_width() > max_for_width()) widen(other.max_for_width());
    if (width() == 0) {  // both all zeros
      set_size(size() + other.size());
      return;
    }
    if (other.width() != width()) {
      for (std::size_t i = 0; i < other.size(); ++i) push(other[i]);
      return;
    }
    // Room for the last value's 8-byte read (and the next push's 8-byte store checks its own):
    // a column of one value stays in its word.
    std::size_t need = (size() + other.size() - 1) * width() + 8;
    if (need > capacity()) grow(std::max(need, capacity() * 2));
    std::memcpy(bytes_at() + size() * width(), other.bytes_at(), other.size() * width());
    set_size(size() + other.size());
  }
  /// Appends f(v) for every value v of other.
  template <typename F>
  void append_mapped(const IntColumn& other, F&& f) {
    for (std::size_t i = 0; i < other.size(); ++i) push(f(other[i]));
  }
  /// Reorders so that new[i] = old[order[i]], in place, a cycle of the permutation at a
  /// time (a second column held a whole lane's column twice while its spans were sorted).
  void permute(const std::vector<uint32_t>& order) {
    if (width() == 0) return;  // every value is zero
    permute_by_cycles(order, [&](std::size_t i) { return (*this)[i]; }, [&](std::size_t i, int64_t v) { set(i, v); });
  }

  /// Buffers this large are mapped and grown by mremap, so that a 30 MB column growing to
  /// 60 MB never holds 90 MB at once; smaller ones are malloc'd. Bytes past what is written
  /// are never touched, so capacity costs address space, not memory. 128 KB, where glibc
  /// starts mapping: above it, glibc raises its own threshold as mapped blocks are freed,
  /// and columns realloc'd in the heap left holes there (gaps -j 1 of the 32-lane bench
  /// trace peaked 1.5 MB higher with 1 MB here).
  static constexpr std::size_t kMapAbove = std::size_t{1} << 17;
  /// Unmaps the buffers freed columns left for reuse (int_column.cc): a load calls it when
  /// its columns are built.
  static void release_kept_buffers();

 private:
  /// Capacities are powers of two: 8 is the word in place, 16 the first buffer (at the
  /// second value of a non-zero width).
  static constexpr unsigned kInPlaceLog2 = 3, kFirstLog2 = 4;
  static uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
  static int64_t unzigzag(uint64_t z) { return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1); }
  static uint64_t mask(unsigned width) { return kMaxForWidth[std::min(width, 8u)]; }

  unsigned cap_log2() const { return static_cast<unsigned>(meta_ >> kCapShift); }
  std::size_t capacity() const { return std::size_t{1} << cap_log2(); }
  void set_width(unsigned w) { meta_ = (meta_ & ~(uint64_t{0xFF} << kWidthShift)) | uint64_t{w} << kWidthShift; }
  void set_cap_log2(unsigned c) { meta_ = (meta_ & ~(uint64_t{0xFF} << kCapShift)) | uint64_t{c} << kCapShift; }
  uint8_t* bytes_at() { return in_place() ? reinterpret_cast<uint8_t*>(&word_) : buffer_; }
  const uint8_t* bytes_at() const { return in_place() ? reinterpret_cast<const uint8_t*>(&word_) : buffer_; }
  /// Empty and in place, without freeing (what it held was taken).
  void forget() {
    word_ = 0;
    meta_ = kEmptyMeta;
  }
  /// Frees the buffer; empty and in place.
  void release();
  /// Frees a buffer of 2^log2 bytes as it was allocated (malloc'd or mapped).
  static void free_buffer(uint8_t* buffer, unsigned log2);
  /// Capacity for at least n bytes (the next power of two), keeping the contents.
  void grow(std::size_t n);

  __attribute__((noinline)) void push_slow(uint64_t z) {
    if (z > max_for_width()) widen(z);
    std::size_t at = size() * width();
    if (at + 8 > capacity()) grow(at + 8);
    std::memcpy(bytes_at() + at, &z, 8);
    count_one();
  }
  /// One more value. The size cannot reach 2^48 this way: that many values of a non-zero
  /// width would not fit a buffer, and a zero width counts spans of a file.
  void count_one() { ++meta_; }
  void set_size(std::size_t n) {
    if (n > kSizeMask) throw std::bad_alloc();
    meta_ = (meta_ & ~kSizeMask) | n;
  }
  void widen(uint64_t z) {
    unsigned w = std::max(width(), 1u);
    while (z > mask(w)) ++w;
    if (size() == 0) {  // nothing to re-encode: the first value goes in place (a one-span lane allocates nothing)
      set_width(w);
      return;
    }
    IntColumn wider;
    wider.set_width(w);
    wider.grow(size() * w * 2 + 8);
    for (std::size_t i = 0; i < size(); ++i) {
      uint64_t v;
      std::memcpy(&v, bytes_at() + i * width(), 8);
      v &= max_for_width();
      std::memcpy(wider.bytes_at() + i * w, &v, 8);
    }
    wider.set_size(size());
    *this = std::move(wider);
  }
  uint64_t max_for_width() const { return kMaxForWidth[width()]; }

  static constexpr uint64_t kMaxForWidth[9] = {0,       0xFF,         0xFFFF,         0xFFFFFF,          0xFFFFFFFF,
                                               0xFFFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF, ~0ull};
  union {
    uint64_t word_ = 0;  ///< in place (capacity 8): the values' bytes
    uint8_t* buffer_;    ///< else: malloc'd (below kMapAbove) or mapped
  };
  /// Bits 0-47 the size (values), 48-55 the width (bytes a value: 0 while every value so
  /// far is zero), 56-63 the capacity's log2 (3: the word in place).
  static constexpr unsigned kWidthShift = 48, kCapShift = 56;
  static constexpr uint64_t kSizeMask = (uint64_t{1} << kWidthShift) - 1;
  static constexpr uint64_t kEmptyMeta = uint64_t{kInPlaceLog2} << kCapShift;
  uint64_t meta_ = kEmptyMeta;
};

}  // namespace jqtrace
