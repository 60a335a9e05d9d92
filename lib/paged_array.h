#pragma once
// An array kept in fixed-size pages, so that a reader walking it front to back can hand
// back what it has read: gaps reads its per-chain rows and per-chunk references once, in
// order, while filling sample vectors of about the same total size, and releasing the
// pages behind it keeps the two from adding up. Growth never copies either.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace jqtrace {

template <typename T, std::size_t kPageBits = 16>
class PagedArray {
 public:
  static constexpr std::size_t kPage = std::size_t{1} << kPageBits;

  T& operator[](std::size_t i) { return pages_[i >> kPageBits][i & (kPage - 1)]; }
  const T& operator[](std::size_t i) const { return pages_[i >> kPageBits][i & (kPage - 1)]; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void push_back(const T& v) {
    if ((size_ >> kPageBits) == pages_.size()) pages_.push_back(std::make_unique<T[]>(kPage));
    (*this)[size_++] = v;
  }
  /// Grows to n value-initialised elements.
  void resize(std::size_t n) {
    while (pages_.size() * kPage < n) pages_.push_back(std::make_unique<T[]>(kPage));
    size_ = n;
  }
  /// Frees every page wholly before element i; those elements must not be touched again.
  void release_before(std::size_t i) {
    for (std::size_t p = released_; p < (i >> kPageBits) && p < pages_.size(); ++p) pages_[p].reset();
    released_ = std::max(released_, i >> kPageBits);
  }
  void clear() {
    pages_.clear();
    size_ = released_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> pages_;
  std::size_t size_ = 0;
  std::size_t released_ = 0;  ///< pages before this one are freed
};

}  // namespace jqtrace
