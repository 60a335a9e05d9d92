#include "int_column.h"

#include <bit>
#include <cstdlib>
#include <new>
#include <sys/mman.h>

namespace jqtrace {

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

void IntColumn::release() {
  if (!in_place()) {
    if (capacity() >= kMapAbove) ::munmap(buffer_, capacity());
    else std::free(buffer_);
  }
  forget();
}

}  // namespace jqtrace
