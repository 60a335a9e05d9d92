#pragma once
// An open-addressing hash map from int64 keys (chain ids) to small values: one flat array,
// no node per entry, so a million chains cost tens of MB, not hundreds.
#include <algorithm>
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
  /// The longest run of occupied slots: a lookup that lands in a run may probe all of it.
  std::size_t longest_run() const {
    std::size_t longest = 0, run = 0;
    for (const Slot& s : slots_) {
      run = s.used ? run + 1 : 0;
      longest = std::max(longest, run);
    }
    return longest;
  }
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
  /// Calls f(key, value) for every entry of other, to take it in here: this table first
  /// grows to at least other's size, then other is walked in its slot order. Both tables
  /// hash alike, so the keys' slots here rise with it (two interleaved runs at most): one
  /// cache line after another, where a walk in scattered order missed the cache twice an
  /// entry (joining parts' chain tables: ~60 ms -> ~10 ms on the bench trace). It grows no
  /// further in advance: keys the tables share need no room (validate -j 2: 47 MB, not 70).
  template <typename F>
  void absorb_each(const FlatMap& other, F&& f) {
    reserve(std::max(size_, other.slots_.size() / 4 * 3));
    other.for_each(f);
  }

 private:
  struct Slot {
    int64_t key = 0;
    V value{};
    bool used = false;
  };
  /// Runs of 64 neighbouring ids stay together (chain ids rise through a trace, so a walk
  /// touches nearby slots; a fully multiplicative hash cost validate 10% in cache misses),
  /// but the runs are scattered. A near-identity hash kept dense ids in one long run of
  /// occupied slots, and a key landing inside such a run probes to its end: joining the
  /// tables of parts read in parallel turned quadratic. (Runs of 8 scattered cost ~5%.)
  static std::size_t hash(int64_t key) {
    uint64_t x = static_cast<uint64_t>(key);
    uint64_t run = (x >> 6) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(((run >> 24) << 6) | (x & 63));
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

/// Values by int64 id: a plain array over [lo, hi] when that range is small enough (the
/// tracer numbers chains from 0, so theirs is), else a FlatMap. An array index instead of
/// a hash probe that misses the cache once the table outgrows it. Ids outside [lo, hi]
/// work too (they go to the FlatMap).
template <typename V>
class IdMap {
 public:
  /// ids mostly in [lo, hi]; the array is used when it needs fewer than max_slots entries.
  IdMap(int64_t lo, int64_t hi, std::size_t max_slots) {
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (hi >= lo && span < max_slots) {
      first_ = lo;
      dense_.assign(span + 1, V{});
    }
  }
  /// The value for id, default-constructed on first use.
  V& operator[](int64_t id) {
    if (V* v = in_array(id)) return *v;
    return sparse_[id];
  }
  /// The value for id: in the array, default-constructed when never set; else nullptr
  /// when absent.
  const V* find(int64_t id) const {
    if (const V* v = const_cast<IdMap*>(this)->in_array(id)) return v;
    return sparse_.find(id);
  }

 private:
  V* in_array(int64_t id) {
    uint64_t at = static_cast<uint64_t>(id) - static_cast<uint64_t>(first_);
    return at < dense_.size() ? &dense_[at] : nullptr;
  }
  int64_t first_ = 0;
  std::vector<V> dense_;  // empty: ids too spread out
  FlatMap<V> sparse_;
};

}  // namespace jqtrace
