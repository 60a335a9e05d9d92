#pragma once
// An array kept in fixed-size pages, so that a reader walking it front to back can hand
// back what it has read: gaps reads a class's chains and their chunk references once, in
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
  /// Frees pages behind a reader walking a slice [from, ...) front to back: each page
  /// wholly inside the slice and before the reader. Readers of disjoint slices may run on
  /// different threads; a page two slices share is freed by neither (until clear()).
  class Releaser {
   public:
    Releaser(PagedArray& array, std::size_t from) : array_(array), next_((from + kPage - 1) >> kPageBits) {}
    /// The reader will not touch the slice's elements before i again.
    void behind(std::size_t i) {
      for (; ((next_ + 1) << kPageBits) <= i && next_ < array_.pages_.size(); ++next_) array_.pages_[next_].reset();
    }

   private:
    PagedArray& array_;
    std::size_t next_;  ///< the first page not freed yet
  };
  /// Pages allocated and not freed.
  std::size_t pages_held() const {
    return static_cast<std::size_t>(std::count_if(pages_.begin(), pages_.end(), [](const auto& p) { return p != nullptr; }));
  }
  void clear() {
    pages_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> pages_;
  std::size_t size_ = 0;
};

}  // namespace jqtrace
