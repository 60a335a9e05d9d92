#pragma once
// An open-addressing hash map from int64 keys (chain ids) to small values: one flat array,
// no node per entry, so a million chains cost tens of MB, not hundreds.
#include <cstdint>
#include <vector>

namespace jqtrace {

template <typename V>
class FlatMap {
 public:
  /// The value for key, default-constructed on first use.
  V& operator[](int64_t key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    std::size_t i = probe(key);
    if (!slots_[i].used) {
      slots_[i].used = true;
      slots_[i].key = key;
      slots_[i].value = V{};
      ++size_;
    }
    return slots_[i].value;
  }
  /// Makes room for n entries without growing (growth holds the old and new tables at once).
  void reserve(std::size_t n) {
    std::size_t want = 64;
    while (want * 3 < n * 4) want *= 2;
    if (want <= slots_.size()) return;
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(want);
    size_ = 0;
    for (Slot& s : old)
      if (s.used) (*this)[s.key] = std::move(s.value);
  }
  const V* find(int64_t key) const {
    if (slots_.empty()) return nullptr;
    std::size_t i = probe(key);
    return slots_[i].used ? &slots_[i].value : nullptr;
  }
  V* find(int64_t key) { return const_cast<V*>(static_cast<const FlatMap*>(this)->find(key)); }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return slots_.size() * sizeof(Slot); }

  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }
  template <typename F>
  void for_each(F&& f) {
    for (Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }

 private:
  struct Slot {
    int64_t key = 0;
    V value{};
    bool used = false;
  };
  /// Near-identity on purpose: chain ids rise steadily through a trace, so neighbouring
  /// chains land in neighbouring slots and the table is walked, not jumped about (a
  /// multiplicative hash cost 10% of validate in cache misses). Folding the high bits in
  /// keeps strided ids (multiples of 2^k) spread.
  static std::size_t hash(int64_t key) {
    uint64_t x = static_cast<uint64_t>(key);
    x ^= x >> 17;
    x ^= x >> 34;
    return static_cast<std::size_t>(x);
  }
  std::size_t probe(int64_t key) const {
    std::size_t mask = slots_.size() - 1;
    std::size_t i = hash(key) & mask;
    while (slots_[i].used && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 64 : old.size() * 2);
    size_ = 0;
    for (Slot& s : old)
      if (s.used) (*this)[s.key] = std::move(s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace jqtrace
