#include "raw_input.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace jqtrace {

std::size_t read_at(int fd, uint64_t offset, char* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}
namespace {

class FdInput final : public RawInput {
 public:
  FdInput(int fd, bool owned) : fd_(fd), owned_(owned) {}
  ~FdInput() override {
    if (owned_) ::close(fd_);
  }
  FdInput(const FdInput&) = delete;
  FdInput& operator=(const FdInput&) = delete;
  long read(char* out, std::size_t size) override {
    for (;;) {
      ssize_t n = ::read(fd_, out, size);
      if (n >= 0) {
        consumed_ += static_cast<uint64_t>(n);
        return static_cast<long>(n);
      }
      if (errno == EINTR) continue;
      error_ = std::strerror(errno);
      return -1;
    }
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return consumed_; }

 private:
  int fd_;
  bool owned_;
  uint64_t consumed_ = 0;
  std::string error_;
};

class MemoryInput final : public RawInput {
 public:
  explicit MemoryInput(std::string bytes) : bytes_(std::move(bytes)) {}
  long read(char* out, std::size_t size) override {
    std::size_t n = std::min(size, bytes_.size() - pos_);
    std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return static_cast<long>(n);
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return pos_; }

 private:
  std::string bytes_;
  std::size_t pos_ = 0;
  std::string error_;
};

class PrefixedInput final : public RawInput {
 public:
  PrefixedInput(std::unique_ptr<RawInput> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  long read(char* out, std::size_t size) override {
    if (pos_ < prefix_.size()) {
      std::size_t n = std::min(size, prefix_.size() - pos_);
      std::memcpy(out, prefix_.data() + pos_, n);
      pos_ += n;
      return static_cast<long>(n);
    }
    return inner_->read(out, size);
  }
  const std::string& error() const override { return inner_->error(); }
  uint64_t consumed() const override { return inner_->consumed(); }
  bool cut_short() const override { return inner_->cut_short(); }

 private:
  std::unique_ptr<RawInput> inner_;
  std::string prefix_;
  std::size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<RawInput> fd_input(int fd, bool owned) { return std::make_unique<FdInput>(fd, owned); }

std::unique_ptr<RawInput> memory_input(std::string bytes) { return std::make_unique<MemoryInput>(std::move(bytes)); }

std::unique_ptr<RawInput> prefixed_input(std::unique_ptr<RawInput> inner, std::string prefix) {
  return std::make_unique<PrefixedInput>(std::move(inner), std::move(prefix));
}

}  // namespace jqtrace
