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

TEST_CASE("run_parallel: helpers come from a pool started once, not a thread a call") {
  // Starting a thread took 0.7-1.2 ms on the two-core VM, and report asks for a few
  // dozen short parallel passes.
  for (int call = 0; call < 500; ++call) {
    std::vector<std::atomic<int>> seen(7);
    run_parallel(seen.size(), 3, [&](std::size_t i) { ++seen[i]; });
    for (const auto& s : seen) REQUIRE(s == 1);
  }
  CHECK(jqtrace::detail::pool_threads() >= 1);
  CHECK(jqtrace::detail::pool_threads() <= 4);  // the most asked for at once by any test, not 500 x 2
}

TEST_CASE("run_parallel: inside another's work, and from two threads at once") {
  // The pool serves one job at a time; a nested or concurrent call starts threads of its own.
  std::vector<std::atomic<int>> seen(8 * 8);
  run_parallel(8, 2, [&](std::size_t outer) {
    run_parallel(8, 2, [&](std::size_t inner) { ++seen[outer * 8 + inner]; });
  });
  for (const auto& s : seen) CHECK(s == 1);
  std::vector<std::atomic<int>> a(1000), b(1000);
  std::thread other([&] {
    for (int k = 0; k < 50; ++k) run_parallel(20, 2, [&](std::size_t i) { ++a[k * 20 + i]; });
  });
  for (int k = 0; k < 50; ++k) run_parallel(20, 2, [&](std::size_t i) { ++b[k * 20 + i]; });
  other.join();
  for (std::size_t i = 0; i < a.size(); ++i) CHECK((a[i] == 1 && b[i] == 1));
}

TEST_CASE("start_pool_threads starts the helpers before the first job asks for them") {
  jqtrace::start_pool_threads(3);
  CHECK(jqtrace::detail::pool_threads() >= 2);
  jqtrace::start_pool_threads(1);  // one thread is the caller's: nothing to start
  CHECK(jqtrace::detail::pool_threads() <= 4);
}
