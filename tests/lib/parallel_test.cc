#include "parallel.h"

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

using jqtrace::run_parallel;

TEST_CASE("run_parallel: every item once, on any number of threads") {
  for (unsigned threads : {1u, 2u, 5u}) {
    std::vector<std::atomic<int>> seen(100);
    run_parallel(seen.size(), threads, [&](std::size_t i) { ++seen[i]; });
    for (const auto& s : seen) CHECK(s == 1);
  }
}

TEST_CASE("run_parallel: an exception in any thread reaches the caller, and no new item starts") {
  // Thrown from a helper thread it used to end the process (std::terminate: a signal).
  // Items after the throwing one wait for it, then give its catch time: a thread that took
  // item 3 and was then descheduled let the others run all 1000 items (a flaky failure).
  for (unsigned threads : {1u, 2u, 4u}) {
    std::atomic<int> started{0};
    std::atomic<bool> thrown{false};
    auto work = [&](std::size_t i) {
      ++started;
      if (i == 3) {
        thrown = true;
        throw std::bad_alloc();
      }
      if (i < 3) return;
      while (!thrown) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    };
    CHECK_THROWS_AS(run_parallel(1000, threads, work), std::bad_alloc);
    CHECK(started < 100);
  }
}
