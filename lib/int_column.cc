#include "int_column.h"

#include <cstdlib>
#include <new>
#include <sys/mman.h>

namespace jqtrace {
namespace {
constexpr std::size_t kMapAbove = 1u << 20;  // buffers this large are mapped, and grow by mremap
}  // namespace

ColumnBytes& ColumnBytes::operator=(ColumnBytes&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    capacity_ = o.capacity_;
    mapped_ = o.mapped_;
    o.data_ = nullptr;
    o.capacity_ = 0;
    o.mapped_ = false;
  }
  return *this;
}

void ColumnBytes::grow(std::size_t n) {
  if (n <= capacity_) return;
  if (n < kMapAbove) {
    void* p = std::realloc(data_, n);
    if (!p) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(p);
    capacity_ = n;
    return;
  }
  n = (n + 4095) & ~std::size_t{4095};
  void* p;
  if (mapped_) {
    p = ::mremap(data_, capacity_, n, MREMAP_MAYMOVE);
  } else {
    p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED && data_) {
      std::memcpy(p, data_, capacity_);
      std::free(data_);
    }
  }
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(p);
  capacity_ = n;
  mapped_ = true;
}

void ColumnBytes::release() {
  if (!data_) return;
  if (mapped_) ::munmap(data_, capacity_);
  else std::free(data_);
  data_ = nullptr;
  capacity_ = 0;
}

}  // namespace jqtrace
