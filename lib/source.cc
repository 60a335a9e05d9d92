#include "source.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace jqtrace {
namespace {

constexpr std::size_t kRawChunk = 64 * 1024;

class FdInput final : public RawInput {
 public:
  FdInput(int fd, bool owned) : fd_(fd), owned_(owned) {}
  ~FdInput() override {
    if (owned_) ::close(fd_);
  }
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

/// Hands out a few bytes before the inner input's: bytes already read (to sniff the
/// magic), or text that puts the parser where a part of a file starts (Source::open_part).
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

 private:
  std::unique_ptr<RawInput> inner_;
  std::string prefix_;
  std::size_t pos_ = 0;
};

/// Inflates gzip (one or more concatenated members, as `cat a.gz b.gz` makes).
class GzipInput final : public RawInput {
 public:
  explicit GzipInput(std::unique_ptr<RawInput> inner) : inner_(std::move(inner)) {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, 15 + 16) == Z_OK;
    if (!ok_) error_ = "cannot initialise zlib";
  }
  ~GzipInput() override { inflateEnd(&z_); }

  long read(char* out, std::size_t size) override {
    if (!ok_) return -1;
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(size);
    for (;;) {
      if (z_.avail_out != size) return static_cast<long>(size - z_.avail_out);
      if (z_.avail_in == 0 && !in_eof_ && !fill()) return -1;
      if (member_done_) {
        if (z_.avail_in == 0) {
          if (in_eof_) return 0;
          continue;
        }
        inflateReset(&z_);
        member_done_ = false;
      }
      if (z_.avail_in == 0 && in_eof_) {
        cut_short_ = true;
        return fail("truncated gzip stream (unexpected end of file)");
      }
      int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) member_done_ = true;
      else if (r != Z_OK && r != Z_BUF_ERROR)
        return fail(std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "inflate failed"));
    }
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return inner_->consumed(); }
  bool cut_short() const override { return cut_short_; }

 private:
  bool fill() {
    long n = inner_->read(in_, sizeof in_);
    if (n < 0) {
      fail(inner_->error());
      return false;
    }
    if (n == 0) in_eof_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(in_);
    z_.avail_in = static_cast<uInt>(n);
    return true;
  }
  long fail(std::string message) {
    error_ = std::move(message);
    ok_ = false;
    return -1;
  }

  std::unique_ptr<RawInput> inner_;
  bool cut_short_ = false;
  z_stream z_;
  char in_[kRawChunk];
  bool ok_ = false;
  bool in_eof_ = false;
  bool member_done_ = false;
  std::string error_;
};

/// Reads the first bytes and wraps the input in a gzip decoder when they are 1f 8b.
std::unique_ptr<RawInput> sniff_gzip(std::unique_ptr<RawInput> raw, bool* is_gzip) {
  std::string head(2, '\0');
  std::size_t got = 0;
  while (got < 2) {
    long n = raw->read(head.data() + got, 2 - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  *is_gzip = got == 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
             static_cast<unsigned char>(head[1]) == 0x8b;
  auto prefixed = std::make_unique<PrefixedInput>(std::move(raw), std::move(head));
  if (*is_gzip) return std::make_unique<GzipInput>(std::move(prefixed));
  return prefixed;
}

}  // namespace

std::unique_ptr<Source> Source::open(const std::string& path, std::string* err) {
  if (path == "-") {
    bool gz = false;
    auto in = sniff_gzip(std::make_unique<FdInput>(0, false), &gz);
    auto src = std::make_unique<Source>(std::move(in), "<stdin>", 0, std::make_unique<RecordingLineIndex>());
    src->is_gzip_ = gz;
    return src;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    *err = "is a directory";
    return nullptr;
  }
  bool regular = S_ISREG(st.st_mode);
  uint64_t size = regular ? static_cast<uint64_t>(st.st_size) : 0;
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  bool gz = false;
  std::unique_ptr<RawInput> in = sniff_gzip(std::make_unique<FdInput>(fd, true), &gz);
  std::unique_ptr<LineIndex> lines;
  if (regular) {
    lines = std::make_unique<ReopeningLineIndex>([path]() -> std::unique_ptr<RawInput> {
      int again = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (again < 0) return nullptr;
      bool gzip_again = false;
      return sniff_gzip(std::make_unique<FdInput>(again, true), &gzip_again);
    });
  } else {
    lines = std::make_unique<RecordingLineIndex>();  // a pipe or device: no second reading
  }
  auto src = std::make_unique<Source>(std::move(in), path, size, std::move(lines));
  src->is_gzip_ = gz;
  return src;
}

std::unique_ptr<Source> Source::open_part(const std::string& path, uint64_t begin, const std::string& prefix,
                                          std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) < begin ||
      prefix.size() > begin) {
    *err = fd < 0 ? std::strerror(errno) : "not a part of a regular file";
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (::lseek(fd, static_cast<off_t>(begin), SEEK_SET) < 0) {
    *err = std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, static_cast<off_t>(begin), 0, POSIX_FADV_SEQUENTIAL);
#endif
  auto lines = std::make_unique<ReopeningLineIndex>([path]() -> std::unique_ptr<RawInput> {
    int again = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (again < 0) return nullptr;
    return std::make_unique<FdInput>(again, true);
  });
  auto in = std::make_unique<PrefixedInput>(std::make_unique<FdInput>(fd, true), prefix);
  return std::make_unique<Source>(std::move(in), path, size, std::move(lines), begin - prefix.size());
}

std::unique_ptr<Source> Source::from_string(std::string bytes, std::string name) {
  bool gz = false;
  auto in = sniff_gzip(std::make_unique<MemoryInput>(std::move(bytes)), &gz);
  auto src = std::make_unique<Source>(std::move(in), std::move(name), 0, std::make_unique<RecordingLineIndex>());
  src->is_gzip_ = gz;
  return src;
}

Source::Source(std::unique_ptr<RawInput> input, std::string name, uint64_t total_size,
               std::unique_ptr<LineIndex> lines, uint64_t first_offset)
    : input_(std::move(input)), name_(std::move(name)), total_size_(total_size),
      buffer_(new char[kWindow + 1]), capacity_(kWindow), window_offset_(first_offset), lines_(std::move(lines)) {
  buffer_[0] = '\0';
  current_ = last_ = put_ = buffer_.get();
  next_window();
}

Source::~Source() = default;

void Source::next_window() {
  if (eof_) return;
  char* buffer = buffer_.get();
  if (cut_ == filled_ && input_done_) {
    // All text handed out. The position stays just past the last byte (a number that ends
    // the input is read as the bytes before it), on the '\0' that tells RapidJSON it ended.
    eof_ = true;
    buffer[filled_] = '\0';
    current_ = last_ = buffer + filled_;
    return;
  }
  std::size_t carry = filled_ - cut_;  // the text after the cut moves to the front
  std::memmove(buffer, buffer + cut_, carry);
  window_offset_ += cut_;
  filled_ = carry;
  cut_ = 0;
  std::size_t searched = carry;  // the carried text holds no newline
  while (cut_ == 0) {
    if (input_done_) {
      cut_ = filled_;  // the end of the input ends the last window
      break;
    }
    if (filled_ == capacity_) {  // one line longer than the window
      cut_ = find_structural_cut();
      if (cut_ == 0 && capacity_ * 2 > max_token_bytes_) {  // a string longer than any the reader takes
        token_too_long_at_ = window_offset_;
        read_error_ = "a string (or token) of over " + std::to_string(capacity_) + " bytes is longer than jqtrace reads";
        input_done_ = true;
        cut_ = filled_;
        break;
      }
      if (cut_ == 0) grow();
      continue;
    }
    if (read_more()) cut_ = find_newline_cut(searched);
    searched = filled_;
  }
  if (filled_ == 0) {  // no text at all
    next_window();
    return;
  }
  current_ = buffer_.get();  // grow() may have moved the buffer
  last_ = current_ + cut_ - 1;
}

bool Source::read_more() {
  char* at = buffer_.get() + filled_;
  long n = input_->read(at, capacity_ - filled_);
  if (n < 0) {
    if (input_->cut_short()) cut_short_ = true;  // a prefix of the text: the reader sees a truncated trace
    else read_error_ = input_->error();
    n = 0;
  }
  if (n == 0) {
    input_done_ = true;
    return false;
  }
  std::size_t got = static_cast<std::size_t>(n);
  lines_->add(at, got, window_offset_ + filled_);  // before the parser writes into it
  // RapidJSON takes a NUL for the end of the text: note the first so that the reader can
  // name it instead of reporting a short or empty document.
  if (first_nul_ == UINT64_MAX)
    if (const void* nul = std::memchr(at, '\0', got))
      first_nul_ = window_offset_ + filled_ + static_cast<uint64_t>(static_cast<const char*>(nul) - at);
  filled_ += got;
  if (progress_) progress_(input_->consumed(), total_size_);
  return true;
}

std::size_t Source::find_newline_cut(std::size_t from) const {
  const char* text = buffer_.get();
  const void* newline = ::memrchr(text + from, '\n', filled_ - from);
  return newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - text) + 1 : 0;
}

std::size_t Source::find_structural_cut() const {
  // The window starts outside any string (it starts where the last one was cut), and in
  // text the parser accepts, quotes and backslashes tell exactly where strings are. Text
  // it does not accept stops the parse before the cut, so a wrong guess there is harmless.
  const char* text = buffer_.get();
  std::size_t cut = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < filled_; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == ' ' || c == '\n' ||
               c == '\t' || c == '\r') {
      cut = i + 1;  // whitespace too: no token spans it, and a run of it needs no buffering
    }
  }
  return cut;
}

void Source::grow() {
  std::size_t bigger = capacity_ * 2;
  std::unique_ptr<char[]> grown(new char[bigger + 1]);
  std::memcpy(grown.get(), buffer_.get(), filled_);
  buffer_ = std::move(grown);
  capacity_ = bigger;
}

TextPosition Source::locate(uint64_t offset) { return lines_->locate(offset); }

}  // namespace jqtrace
