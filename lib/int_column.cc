#include "int_column.h"

#include <cstdlib>
#include <new>
#include <sys/mman.h>

namespace jqtrace {
ColumnBytes& ColumnBytes::operator=(ColumnBytes&& o) noexcept {
  if (this != &o) {
    release();
    if (o.in_place()) {
      word_ = o.word_;  // data_ and capacity_ already name this object's word
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = reinterpret_cast<uint8_t*>(&o.word_);
      o.capacity_ = sizeof o.word_;
    }
    o.word_ = 0;
  }
  return *this;
}

void ColumnBytes::grow(std::size_t n) {
  if (n <= capacity_) return;
  if (n >> 56) throw std::bad_alloc();  // the capacity's 56 bits
  bool was_in_place = in_place();  // leaving the word for a buffer that holds it
  if (n < kMapAbove) {
    void* p = was_in_place ? std::malloc(n) : std::realloc(data_, n);
    if (!p) throw std::bad_alloc();
    if (was_in_place) std::memcpy(p, &word_, sizeof word_);
    data_ = static_cast<uint8_t*>(p);
    set_capacity(n);
    return;
  }
  n = (n + 4095) & ~std::size_t{4095};
  void* p;
  if (mapped()) {
    p = ::mremap(data_, capacity_, n, MREMAP_MAYMOVE);
  } else {
    p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      std::memcpy(p, data_, capacity_);
      if (!was_in_place) std::free(data_);
    }
  }
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(p);
  set_capacity(n);  // >= kMapAbove: mapped() from now on
}

void ColumnBytes::release() {
  if (in_place()) return;
  if (mapped()) ::munmap(data_, capacity_);
  else std::free(data_);
  data_ = reinterpret_cast<uint8_t*>(&word_);
  capacity_ = sizeof word_;
  word_ = 0;
}

}  // namespace jqtrace
