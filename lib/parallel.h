#pragma once
// A work queue over numbered items on a few threads, for the passes that split: parts of
// a file, slices of a lane's spans, groups to summarise.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace jqtrace {

/// Calls work(i) for every i in [0, items) on up to `threads` threads, the caller's among
/// them. Each thread takes the next item when done with its last, so a thread on a busy
/// core takes fewer. Items must not depend on each other; results go to per-item slots.
/// If work throws (std::bad_alloc, mostly), no new item starts and the first exception is
/// thrown again in the caller once every thread has stopped: an exception escaping a
/// thread would end the process with a signal.
template <typename F>
void run_parallel(std::size_t items, unsigned threads, F&& work) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&]() {
    try {
      for (std::size_t i = next++; i < items; i = next++) work(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = items;
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < std::min<std::size_t>(threads, items); ++t) helpers.emplace_back(worker);
  worker();
  for (std::thread& h : helpers) h.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace jqtrace
