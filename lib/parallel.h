#pragma once
// A work queue over numbered items on a few threads, for the passes that split: parts of
// a file, slices of a lane's spans, groups to summarise.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace jqtrace {

/// Calls work(i) for every i in [0, items) on up to `threads` threads, the caller's among
/// them. Each thread takes the next item when done with its last, so a thread on a busy
/// core takes fewer. Items must not depend on each other; results go to per-item slots.
template <typename F>
void run_parallel(std::size_t items, unsigned threads, F&& work) {
  std::atomic<std::size_t> next{0};
  auto worker = [&]() {
    for (std::size_t i = next++; i < items; i = next++) work(i);
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < std::min<std::size_t>(threads, items); ++t) helpers.emplace_back(worker);
  worker();
  for (std::thread& h : helpers) h.join();
}

}  // namespace jqtrace
