#include "parallel.h"

#include <doctest/doctest.h>

#include <stdexcept>

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
  for (unsigned threads : {1u, 2u, 4u}) {
    std::atomic<int> started{0};
    auto work = [&](std::size_t i) {
      ++started;
      if (i == 3) throw std::bad_alloc();
    };
    CHECK_THROWS_AS(run_parallel(1000, threads, work), std::bad_alloc);
    CHECK(started < 1000);
  }
}
