#include "parallel.h"

#include <condition_variable>
#include <system_error>

namespace jqtrace::detail {
namespace {

/// Threads that wait for a job, take at most one share of each, and wait again. A job asks
/// for some helpers; those that wake after the caller has finished its own share find the
/// job closed and go back to waiting, so the caller never waits for a thread that did not
/// start (a helper on a descheduled core only makes the caller do more of the work).
class Pool {
 public:
  bool run(std::size_t helpers, void (*job)(void*), void* context) {
    bool free = false;
    if (!taken_.compare_exchange_strong(free, true)) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        while (started_ < helpers) start_thread();
      } catch (const std::system_error&) {  // no more threads: the job is shared among fewer
      }
      job_ = job;
      context_ = context;
      open_ = std::min(helpers, started_);
      joined_ = finished_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    job(context);  // the caller's share
    {
      std::unique_lock<std::mutex> lock(mutex_);
      open_ = joined_;  // close the job to those not yet awake
      done_.wait(lock, [&] { return finished_ == joined_; });
    }
    taken_ = false;
    return true;
  }

  /// Starts threads up to `helpers` now, so that the first job does not wait for them.
  void start(std::size_t helpers) {
    if (taken_) return;  // a job is running: it started what it needed
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      while (started_ < helpers) start_thread();
    } catch (const std::system_error&) {
    }
  }

  std::size_t threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }

 private:
  void start_thread() {
    std::thread([this] { serve(); }).detach();  // the pool lives as long as the process
    ++started_;  // counted once it exists: a thread that could not start is tried again next time
  }

  void serve() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen && joined_ < open_; });
      seen = generation_;
      ++joined_;
      void (*job)(void*) = job_;
      void* context = context_;
      lock.unlock();
      job(context);  // run_parallel's worker: it catches what its work throws
      lock.lock();
      if (++finished_ == joined_) done_.notify_one();
    }
  }

  std::atomic<bool> taken_{false};
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::size_t started_ = 0;
  uint64_t generation_ = 0;
  std::size_t open_ = 0, joined_ = 0, finished_ = 0;  ///< of the current job: shares offered, taken, done
  void (*job_)(void*) = nullptr;
  void* context_ = nullptr;
};

Pool& pool() {
  static Pool* pool = new Pool;  // never destroyed: its threads outlive main's return
  return *pool;
}

}  // namespace

bool run_on_pool(std::size_t helpers, void (*job)(void*), void* context) { return pool().run(helpers, job, context); }

std::size_t pool_threads() { return pool().threads(); }

}  // namespace jqtrace::detail

namespace jqtrace {

void start_pool_threads(unsigned threads) {
  if (threads > 1) detail::pool().start(threads - 1);
}

}  // namespace jqtrace
