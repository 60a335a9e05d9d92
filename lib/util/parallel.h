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

namespace detail {
/// Runs job(context) on `helpers` threads of a process-wide pool and on the caller, and
/// returns once every call that started has returned. False, doing nothing, while the pool
/// is taken (a run_parallel inside another's work, or on another thread): the caller then
/// starts threads of its own. Pooled threads are started once and wait between jobs:
/// starting a thread took 0.7-1.2 ms on a two-core VM, and gaps alone asks for a few
/// dozen short parallel passes.
bool run_on_pool(std::size_t helpers, void (*job)(void*), void* context);
/// Threads the pool has started (for tests: it grows to the most helpers asked at once).
std::size_t pool_threads();
}  // namespace detail

/// Starts the pool's helper threads for `threads` threads (the caller's among them) ahead
/// of the first run_parallel: a thread took 1-5 ms to start and wake on the two-core VMs
/// here, the head start of the first part of a parallel read over the second.
void start_pool_threads(unsigned threads);

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
  std::size_t helpers = std::min<std::size_t>(threads, items);
  helpers = helpers ? helpers - 1 : 0;
  auto call = [](void* w) { (*static_cast<decltype(worker)*>(w))(); };
  if (helpers == 0) {
    worker();
  } else if (!detail::run_on_pool(helpers, call, &worker)) {
    std::vector<std::thread> own;
    for (std::size_t t = 0; t < helpers; ++t) own.emplace_back(worker);
    worker();
    for (std::thread& h : own) h.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace jqtrace
