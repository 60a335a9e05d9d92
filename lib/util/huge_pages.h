#pragma once
// An allocator for the few tables that hold a value per span of a whole trace (the replay
// graph's nodes, a replay's times): a table of 4 MiB or more is placed on 2 MiB boundaries
// and the kernel is asked to back it with huge pages (madvise MADV_HUGEPAGE; Debian's
// default "madvise" mode gives them only when asked). Each 4 KiB page of a fresh table is a
// fault on first touch, and on the virtual machines we run on faults were a fifth of a
// whatif's time (perf: the kernel's irq-enable path); a huge page is one fault for 512 of
// them. Smaller tables, or a kernel that says no, get ordinary memory: only the speed
// differs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include <sys/mman.h>

namespace jqtrace {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugeTableMin = std::size_t{4} << 20;

/// Memory for `bytes`, on huge pages when it is a big table (free it with huge_free).
inline void* huge_alloc(std::size_t bytes) {
  if (bytes < kHugeTableMin) return ::operator new(bytes);
  std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
  madvise(p, rounded, MADV_HUGEPAGE);  // advice: refused, the memory is still good
  return p;
}

inline void huge_free(void* p, std::size_t bytes) {
  if (bytes < kHugeTableMin) ::operator delete(p);
  else std::free(p);
}

/// std::vector<T, HugePageAllocator<T>>: a big table on huge pages.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: converting, as allocators are
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(huge_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) { huge_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

template <typename T>
using HugeTable = std::vector<T, HugePageAllocator<T>>;

/// Gives a big table's memory back to the kernel while it is copied out once in any order:
/// when every element that lies in a block (kBlock) has been read (read(i)), the block is
/// released (MADV_DONTNEED), so that a copy into another order does not hold both tables
/// whole. The table must not be read there again: it is for a table about to be dropped.
/// A small table (ordinary memory) is left alone.
template <typename T>
class ReleaseAsRead {
 public:
  /// What is given back at once: a whole huge page. (A smaller block split the huge page
  /// it lay in, and the copy's reads of what was left of it took five times as long: 0.3 s
  /// of a whatif. It kept 55 MB less resident on 32 lanes, where a lane's spans are a few
  /// blocks and each block is finished long after it was begun.)
  static constexpr std::size_t kBlock = kHugePage;
  explicit ReleaseAsRead(HugeTable<T>& table) : table_(table) {
    if (table.capacity() * sizeof(T) < kHugeTableMin) return;  // not on 2 MiB boundaries
    left_.assign((table.size() * sizeof(T) + kBlock - 1) / kBlock, 0);
    for (std::size_t i = 0; i < table.size(); ++i) {
      ++left_[first_block(i)];
      if (last_block(i) != first_block(i)) ++left_[last_block(i)];
    }
  }
  /// Element i has been read for the last time.
  void read(std::size_t i) {
    if (left_.empty()) return;
    settle(first_block(i));
    if (last_block(i) != first_block(i)) settle(last_block(i));
  }

 private:
  HugeTable<T>& table_;
  std::vector<uint32_t> left_;  ///< per 2 MiB block: the elements in it (even in part) not read yet
  static std::size_t first_block(std::size_t i) { return i * sizeof(T) / kBlock; }
  static std::size_t last_block(std::size_t i) { return ((i + 1) * sizeof(T) - 1) / kBlock; }
  void settle(std::size_t block) {
    if (--left_[block] == 0)
      madvise(reinterpret_cast<char*>(table_.data()) + block * kBlock, kBlock, MADV_DONTNEED);
  }
};

}  // namespace jqtrace
