#include "read_ahead.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace jqtrace {
namespace {

class ReadAheadInput final : public RawInput {
 public:
  ReadAheadInput(std::unique_ptr<RawInput> inner, std::size_t slot_bytes, unsigned slots)
      : inner_(std::move(inner)), slots_(std::max(slots, 2u)), slot_bytes_(std::max<std::size_t>(slot_bytes, 1)),
        fill_bytes_(std::min(slot_bytes_, kFirstFillBytes)) {
    thread_ = std::thread([this] { guarded_produce(); });
  }
  ~ReadAheadInput() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ReadAheadInput(const ReadAheadInput&) = delete;
  ReadAheadInput& operator=(const ReadAheadInput&) = delete;

  long read(char* out, std::size_t size) override {
    for (;;) {
      Slot& s = slots_[take_];
      if (taking_ && taken_ < s.size) {
        std::size_t n = std::min(size, s.size - taken_);
        std::memcpy(out, s.bytes.get() + taken_, n);
        taken_ += n;
        consumed_ = s.consumed;
        return static_cast<long>(n);
      }
      std::unique_lock<std::mutex> lock(mutex_);
      if (taking_) {  // the slot is used up: hand it back
        taking_ = false;
        --full_;
        take_ = (take_ + 1) % slots_.size();
        changed_.notify_all();
      }
      changed_.wait(lock, [&] { return full_ > 0 || ended_; });
      if (full_ == 0 && failure_) std::rethrow_exception(failure_);  // thrown on the reading thread
      if (full_ == 0) {  // ended: 0, or -1 with the inner input's error
        consumed_ = final_consumed_;
        return status_;
      }
      taking_ = true;
      taken_ = 0;
    }
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return consumed_; }
  bool cut_short() const override { return cut_short_; }

 private:
  struct Slot {
    std::unique_ptr<char[]> bytes;
    std::size_t capacity = 0;
    std::size_t size = 0;
    uint64_t consumed = 0;  ///< the inner input's consumed() once this slot was filled
  };

  /// An exception of the inner input or of a slot's allocation (std::bad_alloc) ends the
  /// reading, and the reader gets it once it has taken the slots filled before: escaping
  /// this thread, it would end the process with a signal.
  void guarded_produce() {
    try {
      produce();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
      ended_ = true;
      changed_.notify_all();
    }
  }

  void produce() {
    std::size_t fill = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return full_ < slots_.size() || stopping_; });
        if (stopping_) return;
      }
      Slot& s = slots_[fill];  // the reader does not touch a slot that is not full
      if (s.capacity < fill_bytes_) {
        s.bytes.reset(new char[fill_bytes_]);  // left unfilled: pages never reached are never touched
        s.capacity = fill_bytes_;
      }
      s.size = 0;
      long n = 0;
      while (s.size < s.capacity) {
        n = inner_->read(s.bytes.get() + s.size, s.capacity - s.size);
        if (n <= 0) break;
        s.size += static_cast<std::size_t>(n);
      }
      if (s.size == s.capacity) fill_bytes_ = std::min(slot_bytes_, 2 * fill_bytes_);
      s.consumed = inner_->consumed();
      std::lock_guard<std::mutex> lock(mutex_);
      if (s.size) {
        ++full_;
        fill = (fill + 1) % slots_.size();
      }
      if (n <= 0) {
        ended_ = true;
        status_ = n < 0 ? -1 : 0;
        error_ = inner_->error();
        cut_short_ = inner_->cut_short();
        final_consumed_ = inner_->consumed();
      }
      changed_.notify_all();
      if (ended_) return;
    }
  }

  /// Slots are allocated as the text comes, from this size up, doubling while the input
  /// fills them: a small input (a test's, a fuzz target's) never allocates megabytes.
  static constexpr std::size_t kFirstFillBytes = 64 * 1024;

  std::unique_ptr<RawInput> inner_;  // used by the producing thread only
  std::vector<Slot> slots_;
  const std::size_t slot_bytes_;
  std::size_t fill_bytes_;  // producing thread only
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t full_ = 0;  // slots filled and not yet handed back
  bool stopping_ = false;
  bool ended_ = false;
  std::exception_ptr failure_;  ///< what ended the producing thread, if it threw
  long status_ = 0;
  std::string error_;
  bool cut_short_ = false;
  uint64_t final_consumed_ = 0;
  // The reader's side.
  std::size_t take_ = 0;
  bool taking_ = false;
  std::size_t taken_ = 0;
  uint64_t consumed_ = 0;
};

}  // namespace

std::unique_ptr<RawInput> read_ahead(std::unique_ptr<RawInput> inner, std::size_t slot_bytes, unsigned slots) {
  return std::make_unique<ReadAheadInput>(std::move(inner), slot_bytes, slots);
}

}  // namespace jqtrace
