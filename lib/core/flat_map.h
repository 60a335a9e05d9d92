#pragma once
// An open-addressing hash map from int64 keys (chain ids) to small values: one flat array,
// no node per entry, so a million chains cost tens of MB, not hundreds.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
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
  /// Empties the map. The table is kept for the next use when it is not much bigger than
  /// what it held (a stage's lanes are indexed anew for every chain: a new table each time
  /// was a quarter of gaps' walk over a 32-lane trace), so a clear costs what was added.
  void clear() {
    if (slots_.size() > 4 * size_ + 64) {
      std::vector<Slot>().swap(slots_);
    } else {
      for (Slot& s : slots_) s.used = false;
    }
    size_ = 0;
  }
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

/// Where each key of a list that is nearly always short (a chain's stages, a stage's
/// lanes, a class's stages, a unit's categories) stands: a scan while it is short, a hash
/// map once it grows, which hostile traces make it do (a chain with 100,000 stages made
/// gaps quadratic). The list is the caller's; this indexes it.
template <typename Key>
class ShortListIndex {
 public:
  /// The position of key among the first `size` entries (key_of(i) gives entry i's), or SIZE_MAX.
  template <typename KeyOf>
  std::size_t find(Key key, std::size_t size, KeyOf&& key_of) {
    if (size <= kScan) {
      for (std::size_t i = size; i-- > 0;)  // the latest entry first: keys come in runs
        if (key_of(i) == key) return i;
      return SIZE_MAX;
    }
    for (std::size_t i = indexed_; i < size; ++i) map_[static_cast<int64_t>(key_of(i))] = i;  // keys are unique
    indexed_ = size;
    const std::size_t* at = map_.find(static_cast<int64_t>(key));
    return at ? *at : SIZE_MAX;
  }
  void clear() {
    if (indexed_) map_.clear();
    indexed_ = 0;
  }

 private:
  static constexpr std::size_t kScan = 8;
  FlatMap<std::size_t> map_;
  std::size_t indexed_ = 0;  ///< entries [0, indexed_) are in map_
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

/// Values by int64 id when the range is not known in advance (the validator's chains, met as
/// the file is read): pages of an array over the ids seen so far, else (ids spread out:
/// another tracer's, or a hostile file's) a FlatMap for good. The tracer numbers chains 0,
/// 2, 4, ... and the validator looks one up for every chunk: an array index, where a FlatMap
/// probe through runs of neighbouring ids cost ~150 instructions. Pages, not one array
/// that doubles: growth copies nothing and touches only the memory it keeps (fresh pages
/// cost ~10 us each to fault in on a VM: a doubling array and its copies made validating
/// along a load 40% slower than the instructions say).
/// The pages are bounded by the lookups made, not by the ids in them: a file read lane
/// after lane meets a few of the chains at first (the first of 32 lanes, one id in 11 of
/// those it spans), all of them in the end. More than 16 slots a lookup in pages (plus
/// 65536), or ids spread over more than 64 a lookup (plus 2^24: the directory, a pointer a
/// page), send everything to the FlatMap, so memory stays linear in the input (at worst
/// ~16 slots a lookup, against the FlatMap's ~5 an id) and every operation O(1) amortised.
template <typename V>
class DenseFirstMap {
 public:
  /// The value for id, default-constructed on first use.
  V& operator[](int64_t id) {
    ++lookups_;
    if (!sparse_mode_) {
      uint64_t at = static_cast<uint64_t>(id) - static_cast<uint64_t>(base_);
      uint64_t p = at >> kPageBits;
      if (p < pages_.size() && pages_[p]) return pages_[p]->at(at & (kPage - 1), &size_);
      if (add_page(id)) return (*this)[id];
    }
    return sparse_[id];
  }
  const V* find(int64_t id) const {
    if (sparse_mode_) return sparse_.find(id);
    uint64_t at = static_cast<uint64_t>(id) - static_cast<uint64_t>(base_);
    uint64_t p = at >> kPageBits;
    if (p >= pages_.size() || !pages_[p]) return nullptr;
    return pages_[p]->find(at & (kPage - 1));
  }
  V* find(int64_t id) { return const_cast<V*>(static_cast<const DenseFirstMap*>(this)->find(id)); }
  std::size_t size() const { return sparse_mode_ ? sparse_.size() : size_; }
  /// True once the ids proved too spread out for pages.
  bool sparse() const { return sparse_mode_; }
  std::size_t bytes() const {
    return sparse_mode_ ? sparse_.bytes() : allocated_ * sizeof(Page) + pages_.size() * sizeof(pages_[0]);
  }

  /// Calls f(id, value) for every entry: by rising id while in pages, else in slot order.
  template <typename F>
  void for_each(F&& f) const {
    visit(*this, f);
  }
  template <typename F>
  void for_each(F&& f) {
    visit(*this, f);
  }
  /// Calls f(id, value) for every entry of other, to take it in here (two FlatMaps: in the
  /// order FlatMap::absorb_each walks them).
  template <typename F>
  void absorb_each(const DenseFirstMap& other, F&& f) {
    if (sparse_mode_ && other.sparse_mode_) return sparse_.absorb_each(other.sparse_, f);
    other.for_each(f);
  }

 private:
  static constexpr unsigned kPageBits = 8;  // 256 ids: 2-4 KB a page, small beside a tiny trace
  static constexpr std::size_t kPage = std::size_t{1} << kPageBits;
  static constexpr uint64_t kFreeSlots = 65536;        ///< slots in pages allowed for any lookup count
  static constexpr uint64_t kFreeSpread = 1u << 24;    ///< ids may span this many for any lookup count

  struct Page {
    V values[kPage]{};
    uint64_t used[kPage / 64]{};
    V& at(std::size_t i, std::size_t* size) {
      uint64_t bit = uint64_t{1} << (i & 63);
      if (!(used[i >> 6] & bit)) {
        used[i >> 6] |= bit;
        ++*size;
      }
      return values[i];
    }
    bool is_used(std::size_t i) const { return used[i >> 6] >> (i & 63) & 1; }
    const V* find(std::size_t i) const { return is_used(i) ? &values[i] : nullptr; }
  };

  template <typename Self, typename F>
  static void visit(Self& self, F& f) {
    if (self.sparse_mode_) return self.sparse_.for_each(f);
    for (std::size_t p = 0; p < self.pages_.size(); ++p)
      if (auto& page = self.pages_[p])
        for (std::size_t i = 0; i < kPage; ++i)
          if (page->is_used(i)) f(self.id_at(p, i), page->values[i]);
  }

  int64_t id_at(std::size_t page, std::size_t i) const {
    return static_cast<int64_t>(static_cast<uint64_t>(base_) + (page << kPageBits) + i);
  }

  /// Makes a page for id, or gives the pages up for the FlatMap; true when id has a page.
  bool add_page(int64_t id) {
    uint64_t page_start = static_cast<uint64_t>(id) & ~static_cast<uint64_t>(kPage - 1);
    if (pages_.empty()) {
      base_ = static_cast<int64_t>(page_start);
      lo_ = hi_ = id;
    }
    lo_ = std::min(lo_, id);
    hi_ = std::max(hi_, id);
    uint64_t spread = static_cast<uint64_t>(hi_) - static_cast<uint64_t>(lo_);  // any int64s
    if (spread >= 64 * lookups_ + kFreeSpread || (allocated_ + 1) * kPage > 16 * lookups_ + kFreeSlots) {
      go_sparse();
      return false;
    }
    if (id < base_) {
      // Room below, at least as much as there is: ids met in falling order keep falling.
      std::size_t short_by = (static_cast<uint64_t>(base_) - page_start) >> kPageBits;
      // (Not below INT64_MIN: base_ stays the lowest id of its page's range.)
      uint64_t room = (static_cast<uint64_t>(base_) - static_cast<uint64_t>(INT64_MIN)) >> kPageBits;
      std::size_t add = static_cast<std::size_t>(std::min<uint64_t>(std::max(short_by, pages_.size()), room));
      std::vector<std::unique_ptr<Page>> wider(add + pages_.size());
      std::move(pages_.begin(), pages_.end(), wider.begin() + static_cast<std::ptrdiff_t>(add));
      pages_.swap(wider);
      base_ = static_cast<int64_t>(static_cast<uint64_t>(base_) - (uint64_t{add} << kPageBits));
    }
    uint64_t p = (static_cast<uint64_t>(id) - static_cast<uint64_t>(base_)) >> kPageBits;
    if (p >= pages_.size()) pages_.resize(p + 1);
    pages_[p] = std::make_unique<Page>();
    ++allocated_;
    return true;
  }

  void go_sparse() {
    sparse_.reserve(size_);
    for (std::size_t p = 0; p < pages_.size(); ++p)
      if (pages_[p])
        for (std::size_t i = 0; i < kPage; ++i)
          if (pages_[p]->is_used(i)) sparse_[id_at(p, i)] = std::move(pages_[p]->values[i]);
    std::vector<std::unique_ptr<Page>>().swap(pages_);
    sparse_mode_ = true;
  }

  std::vector<std::unique_ptr<Page>> pages_;  ///< pages_[p] holds ids base_ + p * kPage + [0, kPage)
  int64_t base_ = 0;          ///< a multiple of kPage
  int64_t lo_ = 0, hi_ = 0;   ///< the lowest and highest id given a page so far
  std::size_t size_ = 0;      ///< entries used (while in pages)
  std::size_t allocated_ = 0; ///< pages made
  uint64_t lookups_ = 0;      ///< calls of operator[] so far
  bool sparse_mode_ = false;
  FlatMap<V> sparse_;
};

}  // namespace jqtrace
