#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace jqtrace {

/// The indices of the `keep` largest values, in index order (ties go to the earlier index),
/// or every index when there are no more than `keep`. O(n) to pick, O(keep log keep) to sort.
/// Pictures and tables that show the busiest lanes of a million use it.
template <class Value>
std::vector<std::size_t> indices_of_largest(const std::vector<Value>& values, std::size_t keep) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (order.size() <= keep) return order;
  auto larger = [&](std::size_t a, std::size_t b) { return values[a] != values[b] ? values[b] < values[a] : a < b; };
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(), larger);
  order.resize(keep);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace jqtrace
