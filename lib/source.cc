#include "source.h"

#include <cassert>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
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
  bool next_window(const char** data, std::size_t* size) override {
    if (pos_ < prefix_.size()) return false;  // read() hands out the prefix first
    return inner_->next_window(data, size);
  }
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
      if (z_.avail_in == 0 && in_eof_) return fail("truncated gzip stream (unexpected end of file)");
      int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) member_done_ = true;
      else if (r != Z_OK && r != Z_BUF_ERROR)
        return fail(std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "inflate failed"));
    }
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return inner_->consumed(); }

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
  z_stream z_;
  char in_[kRawChunk];
  bool ok_ = false;
  bool in_eof_ = false;
  bool member_done_ = false;
  std::string error_;
};

/// A regular file mapped into memory and handed out in windows: the parser reads the page
/// cache directly, without the copy read(2) makes. Windows already parsed are dropped from
/// the mapping (MADV_DONTNEED), so resident memory stays at about one window.
class MappedInput final : public RawInput {
 public:
  static constexpr std::size_t kWindow = 4u << 20;

  /// Maps the whole file; windows are handed out from `begin` on.
  static std::unique_ptr<MappedInput> map(int fd, uint64_t size, uint64_t begin = 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, size, MADV_SEQUENTIAL);
    auto input = std::unique_ptr<MappedInput>(new MappedInput(fd, static_cast<const char*>(p), size));
    input->offset_ = input->previous_ = std::min(begin, size);
    return input;
  }
  ~MappedInput() override {
    ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool starts_with_gzip_magic() const {
    return size_ >= 2 && static_cast<unsigned char>(data_[0]) == 0x1f && static_cast<unsigned char>(data_[1]) == 0x8b;
  }
  bool zero_copy() const override { return true; }
  bool next_window(const char** data, std::size_t* size) override {
    if (offset_ > previous_) {  // done with the previous window: let its pages go
      // madvise wants a page-aligned start (a part of a file starts anywhere); the bytes
      // before it in that page were read already, or belong to the part before.
      uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
      uint64_t from = previous_ / page * page;
      ::madvise(const_cast<char*>(data_) + from, offset_ - from, MADV_DONTNEED);
    }
    previous_ = offset_;
    std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(kWindow, size_ - offset_));
    *data = data_ + offset_;
    *size = n;
    offset_ += n;
    return true;
  }
  long read(char*, std::size_t) override { return 0; }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return offset_; }
  /// Gives the descriptor back (for a gzip file, which is read instead).
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  MappedInput(int fd, const char* data, uint64_t size) : fd_(fd), data_(data), size_(size) {}
  int fd_;
  const char* data_;
  uint64_t size_;
  uint64_t offset_ = 0;
  uint64_t previous_ = 0;
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
  std::unique_ptr<RawInput> in;
  if (regular && size > 0) {
    if (auto mapped = MappedInput::map(fd, size)) {
      if (mapped->starts_with_gzip_magic()) fd = mapped->release();  // gzip: inflate from the descriptor
      else in = std::move(mapped);
    }
  }
  if (!in) in = sniff_gzip(std::make_unique<FdInput>(fd, true), &gz);
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
  auto mapped = MappedInput::map(fd, size, begin);
  if (!mapped) {
    *err = std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  auto lines = std::make_unique<ReopeningLineIndex>([path]() -> std::unique_ptr<RawInput> {
    int again = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (again < 0) return nullptr;
    return std::make_unique<FdInput>(again, true);
  });
  auto in = std::make_unique<PrefixedInput>(std::move(mapped), prefix);
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
    : input_(std::move(input)), name_(std::move(name)), total_size_(total_size), buffer_offset_(first_offset),
      lines_(std::move(lines)) {
  buffer_[0] = '\0';
  filled_ = 0;
  refill();
}

Source::~Source() = default;

char* Source::PutBegin() {
  assert(false);
  return nullptr;
}
void Source::Put(char) { assert(false); }
void Source::Flush() { assert(false); }
std::size_t Source::PutEnd(char*) {
  assert(false);
  return 0;
}

void Source::refill() {
  if (eof_) return;
  buffer_offset_ += filled_;
  const char* window = nullptr;
  std::size_t size = 0;
  long n = 0;
  if (input_->next_window(&window, &size)) {
    n = static_cast<long>(size);
  } else {
    window = buffer_;
    n = input_->zero_copy() ? 0 : input_->read(buffer_, kBufferSize);
  }
  if (n < 0) {
    read_error_ = input_->error();
    n = 0;
  }
  if (n == 0) {
    eof_ = true;
    filled_ = 0;
    buffer_[0] = '\0';
    base_ = current_ = last_ = buffer_;
  } else {
    filled_ = static_cast<std::size_t>(n);
    base_ = current_ = window;
    last_ = window + n - 1;
    if (window == buffer_) buffer_[n] = '\0';
    lines_->add(base_, filled_, buffer_offset_);
  }
  if (progress_) progress_(input_->consumed(), total_size_);
}

TextPosition Source::locate(uint64_t offset) { return lines_->locate(offset); }

}  // namespace jqtrace
