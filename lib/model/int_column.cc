#include "int_column.h"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <sys/mman.h>

namespace jqtrace {
namespace {

/// Mapped buffers that columns gave back, kept for the next column that grows to their
/// size. A parallel load reads a part into columns of its own, appends them to the joined
/// model's and frees them; the next part's columns grow through the same sizes. Unmapped
/// and mapped again, every page of theirs was faulted in anew (on the VMs here a fault
/// costs ~10 us: 7,000 of them were a seventh of stats -j 2's CPU time); reused, the pages
/// are already there. A buffer found here replaces an mremap too: copying the old bytes
/// costs less than faulting the new half in. Bounded (kMaxBytes), and emptied when a
/// load is done (IntColumn::release_kept_buffers) so the memory is not held through the
/// analyses that follow.
class KeptBuffers {
 public:
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  void* take(unsigned log2) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<void*>& list = by_log2_[log2];
    if (list.empty()) return nullptr;
    void* p = list.back();
    list.pop_back();
    bytes_ -= std::size_t{1} << log2;
    return p;
  }
  /// False when full: the caller unmaps the buffer.
  bool keep(void* p, unsigned log2) {
    std::size_t size = std::size_t{1} << log2;
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes_ + size > kMaxBytes) return false;
    by_log2_[log2].push_back(p);
    bytes_ += size;
    return true;
  }
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (unsigned log2 = 0; log2 < 64; ++log2) {
      for (void* p : by_log2_[log2]) ::munmap(p, std::size_t{1} << log2);
      by_log2_[log2].clear();
    }
    bytes_ = 0;
  }

 private:
  std::mutex mutex_;
  std::vector<void*> by_log2_[64];
  std::size_t bytes_ = 0;
};

KeptBuffers& kept_buffers() {
  static auto* kept = new KeptBuffers;  // never destroyed: columns may be freed at exit
  return *kept;
}

void unmap_or_keep(void* p, unsigned log2) {
  if (!kept_buffers().keep(p, log2)) ::munmap(p, std::size_t{1} << log2);
}

}  // namespace

void IntColumn::grow(std::size_t n) {
  if (n <= capacity()) return;
  if (n > (std::size_t{1} << 62)) throw std::bad_alloc();
  unsigned log2 = std::max<unsigned>(kFirstLog2, static_cast<unsigned>(std::bit_width(n - 1)));
  std::size_t to = std::size_t{1} << log2;
  std::size_t from = capacity();
  void* p;
  if (to < kMapAbove) {
    p = in_place() ? std::malloc(to) : std::realloc(buffer_, to);
    if (!p) throw std::bad_alloc();
    if (in_place()) std::memcpy(p, &word_, sizeof word_);
  } else if (void* kept = kept_buffers().take(log2)) {
    p = kept;
    std::memcpy(p, bytes_at(), from);
    if (!in_place()) free_buffer(buffer_, cap_log2());
  } else if (from >= kMapAbove) {
    p = ::mremap(buffer_, from, to, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) throw std::bad_alloc();
  } else {
    p = ::mmap(nullptr, to, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    std::memcpy(p, bytes_at(), from);
    if (!in_place()) std::free(buffer_);
  }
  buffer_ = static_cast<uint8_t*>(p);
  set_cap_log2(log2);
}

void IntColumn::free_buffer(uint8_t* buffer, unsigned log2) {
  if ((std::size_t{1} << log2) >= kMapAbove) unmap_or_keep(buffer, log2);
  else std::free(buffer);
}

void IntColumn::release() {
  if (!in_place()) free_buffer(buffer_, cap_log2());
  forget();
}

void IntColumn::release_kept_buffers() { kept_buffers().release_all(); }

}  // namespace jqtrace
