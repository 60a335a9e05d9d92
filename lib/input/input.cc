#include "input.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace jqtrace {
namespace {

/// A regular file's bytes from an offset on, read with pread: readers of one descriptor
/// never move each other's position. It holds the input, so the descriptor stays open.
class FileRangeInput final : public RawInput {
 public:
  FileRangeInput(std::shared_ptr<const Input> input, uint64_t offset) : input_(std::move(input)), at_(offset) {}
  long read(char* out, std::size_t size) override {
    long got = input_->read_or_error(at_, out, size);
    if (got < 0) {
      error_ = std::strerror(errno);
      return -1;
    }
    at_ += static_cast<uint64_t>(got);
    consumed_ += static_cast<uint64_t>(got);
    return got;
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return consumed_; }

 private:
  std::shared_ptr<const Input> input_;
  uint64_t at_;
  uint64_t consumed_ = 0;
  std::string error_;
};

/// The bytes read, also written to a descriptor (Input::copy_stream_to). It holds the
/// input, whose copy_failed_ it sets.
class CopyingInput final : public RawInput {
 public:
  CopyingInput(std::unique_ptr<RawInput> inner, int fd, bool* failed, std::shared_ptr<const Input> owner)
      : inner_(std::move(inner)), fd_(fd), failed_(failed), owner_(std::move(owner)) {}
  long read(char* out, std::size_t size) override {
    long n = inner_->read(out, size);
    for (long done = 0; n > 0 && done < n && !*failed_;) {
      ssize_t w = ::write(fd_, out + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) *failed_ = true;
      else done += w;
    }
    return n;
  }
  const std::string& error() const override { return inner_->error(); }
  uint64_t consumed() const override { return inner_->consumed(); }
  bool cut_short() const override { return inner_->cut_short(); }

 private:
  std::unique_ptr<RawInput> inner_;
  int fd_;
  bool* failed_;                        ///< the owner's
  std::shared_ptr<const Input> owner_;  ///< kept alive while its flag may be set
};

}  // namespace

std::shared_ptr<Input> Input::open(const std::string& path, std::string* err) {
  std::shared_ptr<Input> in(new Input());
  in->path_ = path;
  in->name_ = path == "-" ? "<stdin>" : path;
  if (path == "-") {
    in->fd_ = STDIN_FILENO;
  } else {
    in->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in->fd_ < 0) {
      *err = std::strerror(errno);
      return nullptr;
    }
    in->owned_ = true;
  }
  if (::fstat(in->fd_, &in->status_) != 0) {
    *err = std::strerror(errno);
    return nullptr;
  }
  if (S_ISDIR(in->status_.st_mode)) {
    *err = "is a directory";
    return nullptr;
  }
  // Standard input is read as the stream it is, from where it stands, even when it is a
  // file (its offset may not be 0, and a command reads it once either way).
  in->regular_ = S_ISREG(in->status_.st_mode) && path != "-";
  if (in->regular_) {
    in->size_ = static_cast<uint64_t>(in->status_.st_size);
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(in->fd_, 0, 0, POSIX_FADV_SEQUENTIAL);  // every reader goes forward
#endif
  }
  in->sniff();
  return in;
}

Input::~Input() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

void Input::sniff() {
  char magic[4] = {};
  std::size_t got = 0;
  if (regular_) {
    got = read_at(0, magic, sizeof magic);
  } else {
    while (got < sizeof magic) {
      ssize_t n = ::read(fd_, magic + got, sizeof magic - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // an error shows again when the stream is read
      got += static_cast<std::size_t>(n);
    }
    head_.assign(magic, got);
  }
  compression_ = sniff_compression(std::string_view(magic, got));
}

std::size_t Input::read_at(uint64_t offset, char* out, std::size_t n) const {
  return jqtrace::read_at(fd_, offset, out, n);
}

long Input::read_or_error(uint64_t offset, char* out, std::size_t n) const {
  errno = 0;  // read_at stops at an error and at the end alike: errno tells them apart
  std::size_t got = read_at(offset, out, n);
  return got == 0 && n > 0 && errno != 0 ? -1 : static_cast<long>(got);
}

std::unique_ptr<RawInput> Input::bytes_from(uint64_t offset) const {
  if (!regular_) return nullptr;
  return std::make_unique<FileRangeInput>(shared_from_this(), offset);
}

std::unique_ptr<RawInput> Input::take_stream() {
  if (regular_ || stream_taken_) return nullptr;
  stream_taken_ = true;
  std::unique_ptr<RawInput> raw = prefixed_input(fd_input(fd_, owned_), std::move(head_));  // the stream closes it
  owned_ = false;
  if (copy_to_ >= 0) raw = std::make_unique<CopyingInput>(std::move(raw), copy_to_, &copy_failed_, shared_from_this());
  return raw;
}

std::unique_ptr<RawInput> Input::text(GzipPointHunt* hunt) {
  auto raw = regular_ ? bytes_from(0) : take_stream();
  return raw ? decode_as(compression_, std::move(raw), hunt) : nullptr;
}

std::function<std::unique_ptr<RawInput>()> Input::text_again() const {
  if (!regular_) return {};
  return [self = std::const_pointer_cast<Input>(shared_from_this())]() { return self->text(); };
}

}  // namespace jqtrace
