#pragma once
// Reordering in place by a permutation's cycles: new[i] = old[order[i]] with one value held
// aside at a time, so a large table is never copied whole to be reordered.
#include <cstdint>
#include <utility>
#include <vector>

namespace jqtrace {

/// For every i, put(i, value that take(order[i]) gave), following order's cycles; take(i)
/// is called once for each i, before put(i, ...). A bit a position marks what is placed.
template <typename Take, typename Put>
void permute_by_cycles(const std::vector<uint32_t>& order, Take&& take, Put&& put) {
  std::vector<bool> placed(order.size(), false);
  for (std::size_t start = 0; start < order.size(); ++start) {
    if (placed[start]) continue;
    auto held = take(start);
    std::size_t at = start;
    for (std::size_t from = order[at]; from != start; at = from, from = order[at]) {
      put(at, take(from));
      placed[at] = true;
    }
    put(at, std::move(held));
    placed[at] = true;
  }
}

}  // namespace jqtrace
