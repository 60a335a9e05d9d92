#include "gzip_points.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

namespace jqtrace {
namespace {

constexpr std::size_t kWindow = 32 * 1024;  ///< the farthest a deflate back-reference reaches
constexpr std::size_t kInChunk = 128 * 1024;
constexpr int kGzipHeader = 15 + 32;  ///< zlib: a gzip (or zlib) header, then deflate
constexpr int kRawDeflate = -15;

}  // namespace

/// A file read in chunks from any offset.
class FileBytes {
 public:
  explicit FileBytes(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~FileBytes() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  bool ok() const { return fd_ >= 0; }
  /// Up to n bytes at offset into out: the count, 0 at the end, -1 on an error.
  long read(uint64_t offset, unsigned char* out, std::size_t n) const {
    for (;;) {
      ssize_t r = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      return static_cast<long>(r);
    }
  }

 private:
  int fd_;
};

namespace {

/// The last `keep` bytes written to a ring of kWindow bytes whose next write is at `at`.
std::string ring_tail(const unsigned char* ring, std::size_t at, std::size_t keep) {
  std::string out;
  out.reserve(keep);
  std::size_t start = (at + kWindow - keep) % kWindow;
  for (std::size_t i = 0; i < keep; ++i) out.push_back(static_cast<char>(ring[(start + i) % kWindow]));
  return out;
}

}  // namespace

bool build_gzip_points(const std::string& path, uint64_t spacing, std::vector<GzipPoint>* points, std::string* why) {
  FileBytes file(path);
  if (!file.ok()) {
    *why = "cannot open";
    return false;
  }
  z_stream z{};
  if (inflateInit2(&z, kGzipHeader) != Z_OK) {
    *why = "zlib cannot start";
    return false;
  }
  std::vector<unsigned char> in(kInChunk), ring(kWindow);
  uint64_t file_at = 0, text_out = 0, member_out = 0, last_point = 0;
  std::size_t ring_at = 0;
  points->push_back(GzipPoint{});  // the file's start: a member's header, no window
  bool ok = true;
  for (;;) {
    if (z.avail_in == 0) {
      long n = file.read(file_at, in.data(), in.size());
      if (n <= 0) break;  // the end (a stream cut short keeps its points)
      file_at += static_cast<uint64_t>(n);
      z.next_in = in.data();
      z.avail_in = static_cast<uInt>(n);
    }
    z.next_out = ring.data() + ring_at;
    z.avail_out = static_cast<uInt>(kWindow - ring_at);
    int ret = inflate(&z, Z_BLOCK);
    std::size_t made = kWindow - ring_at - z.avail_out;
    ring_at = (ring_at + made) % kWindow;
    text_out += made;
    member_out += made;
    if (ret == Z_STREAM_END) {  // a member ended; another may follow
      member_out = 0;
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      ok = false;
      *why = z.msg ? z.msg : "damaged";
      break;
    }
    // Between two blocks (not after the last one) and far enough from the last point.
    bool block_boundary = (z.data_type & 128) && !(z.data_type & 64);
    if (block_boundary && member_out > 0 && text_out - last_point >= spacing) {
      GzipPoint p;
      p.out = text_out;
      p.in = file_at - z.avail_in;
      p.bits = static_cast<uint8_t>(z.data_type & 7);
      p.window = ring_tail(ring.data(), ring_at, static_cast<std::size_t>(std::min<uint64_t>(member_out, kWindow)));
      points->push_back(std::move(p));
      last_point = text_out;
    }
  }
  inflateEnd(&z);
  return ok;
}

bool unpack_point(const GzipPoint& point, GzipPoint* out) {
  *out = point;
  if (point.packed_size == 0) return true;
  out->packed_size = 0;
  out->window.assign(point.packed_size, '\0');
  uLongf got = point.packed_size;
  return uncompress(reinterpret_cast<Bytef*>(out->window.data()), &got, reinterpret_cast<const Bytef*>(point.window.data()),
                    static_cast<uLong>(point.window.size())) == Z_OK &&
         got == point.packed_size;
}

const GzipPoint* point_before(const std::vector<GzipPoint>& points, uint64_t offset) {
  auto after = std::upper_bound(points.begin(), points.end(), offset,
                                [](uint64_t at, const GzipPoint& p) { return at < p.out; });
  return after == points.begin() ? nullptr : &*(after - 1);
}

GzipCursor::GzipCursor(const std::string& path)
    : file_(std::make_unique<FileBytes>(path)), in_(kInChunk), text_(kInChunk) {}

GzipCursor::~GzipCursor() {
  if (started_) inflateEnd(stream());
}

bool GzipCursor::start(const GzipPoint& packed) {
  if (started_) inflateEnd(stream());
  started_ = false;
  GzipPoint point;
  if (!file_->ok() || !unpack_point(packed, &point)) return false;
  z_stream& z = *stream();
  z = z_stream{};
  raw_ = point.out != 0;
  if (inflateInit2(&z, raw_ ? kRawDeflate : kGzipHeader) != Z_OK) return false;
  started_ = true;
  file_at_ = point.in;
  text_at_ = point.out;
  if (raw_ && point.bits) {
    unsigned char byte = 0;
    if (point.in == 0 || file_->read(point.in - 1, &byte, 1) != 1 ||
        inflatePrime(&z, point.bits, byte >> (8 - point.bits)) != Z_OK)
      return false;
  }
  if (raw_ && !point.window.empty() &&
      inflateSetDictionary(&z, reinterpret_cast<const Bytef*>(point.window.data()),
                           static_cast<uInt>(point.window.size())) != Z_OK)
    return false;
  ok_ = true;
  return true;
}

bool GzipCursor::read(uint64_t from, uint64_t to, std::string* out) {
  if (!started_ || from < text_at_) return false;
  z_stream& z = *stream();
  while (ok_ && text_at_ < to) {
    if (z.avail_in == 0) {
      long n = file_->read(file_at_, in_.data(), in_.size());
      if (n < 0) ok_ = false;
      if (n <= 0) break;  // the end of the file
      file_at_ += static_cast<uint64_t>(n);
      z.next_in = in_.data();
      z.avail_in = static_cast<uInt>(n);
    }
    // Never past `to`: the text after it stays in the stream for the next read.
    std::size_t room = static_cast<std::size_t>(std::min<uint64_t>(text_.size(), to - text_at_));
    z.next_out = text_.data();
    z.avail_out = static_cast<uInt>(room);
    int ret = inflate(&z, Z_NO_FLUSH);
    std::size_t made = room - z.avail_out;
    uint64_t lo = std::max(text_at_, from), hi = text_at_ + made;
    if (hi > lo) out->append(reinterpret_cast<const char*>(text_.data()) + (lo - text_at_), static_cast<std::size_t>(hi - lo));
    text_at_ += made;
    if (ret == Z_STREAM_END) {
      // The member ended. Raw deflate leaves its 8-byte trailer unread; the next member
      // starts with a header of its own.
      file_at_ = file_at_ - z.avail_in + (raw_ ? 8 : 0);
      z.avail_in = 0;
      raw_ = false;
      ok_ = inflateReset2(&z, kGzipHeader) == Z_OK;
    } else if ((ret == Z_BUF_ERROR && made == 0 && z.avail_in != 0) || (ret != Z_OK && ret != Z_BUF_ERROR)) {
      ok_ = false;
    }
  }
  return ok_;
}

bool decode_from_point(const std::string& path, const GzipPoint& point, uint64_t from, uint64_t to, std::string* out) {
  GzipCursor cursor(path);
  return cursor.start(point) && cursor.read(from, to, out);
}

}  // namespace jqtrace
