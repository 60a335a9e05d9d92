#include "gzip_points.h"

#include <algorithm>
#include <cerrno>
#include <new>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#ifdef JQTRACE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "decoders.h"
#include "input.h"

namespace jqtrace {
namespace {

constexpr std::size_t kWindow = 32 * 1024;  ///< the farthest a deflate back-reference reaches
constexpr std::size_t kInChunk = 128 * 1024;
constexpr int kGzipHeader = 15 + 32;  ///< zlib: a gzip (or zlib) header, then deflate
constexpr int kRawDeflate = -15;

}  // namespace

/// A regular file read in chunks from any offset.
class FileBytes {
 public:
  explicit FileBytes(std::shared_ptr<const Input> input) : input_(std::move(input)) {}
  bool ok() const { return input_ && input_->regular(); }
  /// Up to n bytes at offset into out: the count, 0 at the end, -1 on an error.
  long read(uint64_t offset, unsigned char* out, std::size_t n) const {
    return input_->read_or_error(offset, reinterpret_cast<char*>(out), n);
  }
  /// True when every byte from offset to the end is zero (or there are none): the padding
  /// some writers leave after the last gzip member, which gzip(1) reads past.
  bool only_zeros_from(uint64_t offset) const {
    unsigned char chunk[4096];
    for (;;) {
      long n = read(offset, chunk, sizeof chunk);
      if (n == 0) return true;
      if (n < 0) return false;
      for (long i = 0; i < n; ++i)
        if (chunk[i] != 0) return false;
      offset += static_cast<uint64_t>(n);
    }
  }

 private:
  std::shared_ptr<const Input> input_;
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

bool build_gzip_points(std::shared_ptr<const Input> input, uint64_t spacing, std::vector<GzipPoint>* points,
                       std::string* why) {
  FileBytes file(std::move(input));
  if (!file.ok()) {
    *why = "not a regular file";
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
    if (ret == Z_STREAM_END) {  // a member ended; another, or zero padding, may follow
      member_out = 0;
      if (file.only_zeros_from(file_at - z.avail_in)) break;
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
      pack_point(&p);
      points->push_back(std::move(p));
      last_point = text_out;
    }
  }
  inflateEnd(&z);
  return ok;
}

void pack_point(GzipPoint* point) {
  if (point->packed_size || point->window.empty()) return;
  uLongf size = compressBound(static_cast<uLong>(point->window.size()));
  std::string packed(size, '\0');
  // Level 6: 3.8 KB a 32 KiB window of a jobque trace, 4.8 KB at level 1 (0.44 / 0.32 ms).
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(point->window.data()),
                static_cast<uLong>(point->window.size()), 6) != Z_OK)
    throw std::bad_alloc();  // zlib's only failure with room for its bound: memory
  packed.resize(size);
  point->packed_size = static_cast<uint32_t>(point->window.size());
  point->window = std::move(packed);
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

/// The inflater behind a GzipCursor: it starts at an access point (raw deflate at a block
/// boundary, the window as its history) or at a member's gzip header, and runs over the
/// bytes it is given.
class PointInflater {
 public:
  virtual ~PointInflater() = default;
  /// At a block boundary: `bits` high bits of primed_byte belong to the block, then the
  /// bytes given next; window: the text before (may be empty).
  virtual bool start_raw(uint8_t bits, unsigned char primed_byte, const std::string& window) = 0;
  /// At a gzip member's header.
  virtual bool start_member() = 0;
  enum class Result { ok, member_end, failed };
  /// Decodes from *in (advancing it and *avail_in) into out (room bytes); *made: the bytes
  /// written. member_end: the member's (or the raw stream's) last block is done; the bytes
  /// after it are left unread: a raw stream's gzip trailer, or the next member.
  virtual Result inflate(const unsigned char** in, std::size_t* avail_in, unsigned char* out, std::size_t room,
                         std::size_t* made) = 0;
  /// After member_end: bytes it read past the end and holds (the next byte to read is
  /// that many before *in).
  virtual std::size_t held_back() const { return 0; }
};

namespace {

class ZlibPointInflater final : public PointInflater {
 public:
  ~ZlibPointInflater() override { end(); }
  bool start_raw(uint8_t bits, unsigned char primed_byte, const std::string& window) override {
    if (!init(kRawDeflate)) return false;
    if (bits && inflatePrime(&z_, bits, primed_byte >> (8 - bits)) != Z_OK) return false;
    return window.empty() || inflateSetDictionary(&z_, reinterpret_cast<const Bytef*>(window.data()),
                                                  static_cast<uInt>(window.size())) == Z_OK;
  }
  bool start_member() override { return init(kGzipHeader); }
  Result inflate(const unsigned char** in, std::size_t* avail_in, unsigned char* out, std::size_t room,
                 std::size_t* made) override {
    z_.next_in = const_cast<Bytef*>(*in);
    z_.avail_in = static_cast<uInt>(*avail_in);
    z_.next_out = out;
    z_.avail_out = static_cast<uInt>(room);
    int ret = ::inflate(&z_, Z_NO_FLUSH);
    *in = z_.next_in;
    *avail_in = z_.avail_in;
    *made = room - z_.avail_out;
    if (ret == Z_STREAM_END) return Result::member_end;
    bool stuck = ret == Z_BUF_ERROR && *made == 0 && *avail_in != 0;
    return stuck || (ret != Z_OK && ret != Z_BUF_ERROR) ? Result::failed : Result::ok;
  }

 private:
  bool init(int window_bits) {
    end();
    z_ = z_stream{};
    started_ = inflateInit2(&z_, window_bits) == Z_OK;
    return started_;
  }
  void end() {
    if (started_) inflateEnd(&z_);
    started_ = false;
  }
  z_stream z_{};
  bool started_ = false;
};

#ifdef JQTRACE_HAVE_ISAL
/// ISA-L from a point: its bit buffer primed by hand (the public read_in fields) and the
/// window set as its dictionary, which is what zlib's inflatePrime and inflateSetDictionary do.
class IsalPointInflater final : public PointInflater {
 public:
  IsalPointInflater() : state_(std::make_unique<inflate_state>()) {}
  bool start_raw(uint8_t bits, unsigned char primed_byte, const std::string& window) override {
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_DEFLATE;
    if (!window.empty() &&
        isal_inflate_set_dict(state_.get(), reinterpret_cast<uint8_t*>(const_cast<char*>(window.data())),
                              static_cast<uint32_t>(window.size())) != COMP_OK)
      return false;
    state_->read_in = bits ? primed_byte >> (8 - bits) : 0;
    state_->read_in_length = bits;
    return true;
  }
  bool start_member() override {
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;
    return true;
  }
  Result inflate(const unsigned char** in, std::size_t* avail_in, unsigned char* out, std::size_t room,
                 std::size_t* made) override {
    IsalRun run = isal_run(state_.get(), *in, *avail_in, out, room);
    *made = run.made;
    if (run.failed || run.read > static_cast<std::ptrdiff_t>(*avail_in)) return Result::failed;
    if (run.read < 0) {
      // Bytes handed back at a member's end from an earlier read: the cursor reads on from
      // the file at the count, not from the pointer.
      if (!run.finished) return Result::failed;
      *avail_in += static_cast<std::size_t>(-run.read);
      return Result::member_end;
    }
    *in += run.read;
    *avail_in -= static_cast<std::size_t>(run.read);
    if (run.finished) return Result::member_end;
    return run.read == 0 && *made == 0 && *avail_in != 0 ? Result::failed : Result::ok;
  }

  /// ISA-L before 2.32 keeps in its bit buffer the bytes it loaded past a raw stream's
  /// last block (later versions hand them back: then there are none).
  std::size_t held_back() const override {
    return state_->read_in_length > 0 ? static_cast<std::size_t>(state_->read_in_length) / 8 : 0;
  }

 private:
  std::unique_ptr<inflate_state> state_;  ///< ~90 KB: on the heap
};
#endif

std::unique_ptr<PointInflater> point_inflater(GzipEngine engine) {
#ifdef JQTRACE_HAVE_ISAL
  if (engine != GzipEngine::zlib) return std::make_unique<IsalPointInflater>();
#else
  (void)engine;
#endif
  return std::make_unique<ZlibPointInflater>();
}

}  // namespace

GzipCursor::GzipCursor(std::shared_ptr<const Input> input) : GzipCursor(std::move(input), GzipEngine::best) {}

GzipCursor::GzipCursor(std::shared_ptr<const Input> input, GzipEngine engine)
    : file_(std::make_unique<FileBytes>(std::move(input))), inflater_(point_inflater(engine)), in_(kInChunk), text_(kInChunk) {}

GzipCursor::~GzipCursor() = default;

bool GzipCursor::start(const GzipPoint& packed) {
  started_ = ok_ = false;
  GzipPoint point;
  if (!file_->ok() || !unpack_point(packed, &point)) return false;
  file_at_ = point.in;
  text_at_ = point.out;
  avail_in_ = 0;
  if (point.out == 0) {
    started_ = inflater_->start_member();
  } else {
    unsigned char byte = 0;
    if (point.bits && (point.in == 0 || file_->read(point.in - 1, &byte, 1) != 1)) return false;
    started_ = inflater_->start_raw(point.bits, byte, point.window);
  }
  raw_ = point.out != 0;
  ok_ = started_;
  return started_;
}

bool GzipCursor::read(uint64_t from, uint64_t to, std::string* out) {
  if (!started_ || from < text_at_) return false;
  while (ok_ && text_at_ < to) {
    bool file_ended = false;
    if (avail_in_ == 0) {
      long n = file_->read(file_at_, in_.data(), in_.size());
      if (n < 0) return ok_ = false;
      file_ended = n == 0;  // the inflater may still hold text it decoded: called once more
      file_at_ += static_cast<uint64_t>(n);
      next_in_ = in_.data();
      avail_in_ = static_cast<std::size_t>(n);
    }
    // Never past `to`: the text after it stays in the stream for the next read.
    std::size_t room = static_cast<std::size_t>(std::min<uint64_t>(text_.size(), to - text_at_));
    std::size_t made = 0;
    PointInflater::Result result = inflater_->inflate(&next_in_, &avail_in_, text_.data(), room, &made);
    uint64_t lo = std::max(text_at_, from), hi = text_at_ + made;
    if (hi > lo) out->append(reinterpret_cast<const char*>(text_.data()) + (lo - text_at_), static_cast<std::size_t>(hi - lo));
    text_at_ += made;
    if (file_ended && made == 0 && result != PointInflater::Result::member_end) break;
    if (result == PointInflater::Result::member_end) {
      // Raw deflate leaves its 8-byte trailer unread; the next member starts with a header
      // of its own.
      file_at_ = file_at_ - avail_in_ - inflater_->held_back() + (raw_ ? 8 : 0);
      avail_in_ = 0;
      raw_ = false;
      if (file_->only_zeros_from(file_at_)) break;  // the end, or zero padding to it
      ok_ = inflater_->start_member();
    } else if (result == PointInflater::Result::failed) {
      ok_ = false;
    }
  }
  return ok_;
}

bool decode_from_point(std::shared_ptr<const Input> input, const GzipPoint& point, uint64_t from, uint64_t to,
                       std::string* out,
                       GzipEngine engine) {
  GzipCursor cursor(std::move(input), engine);
  return cursor.start(point) && cursor.read(from, to, out);
}

bool decode_from_point(std::shared_ptr<const Input> input, const GzipPoint& point, uint64_t from, uint64_t to,
                       std::string* out) {
  return decode_from_point(std::move(input), point, from, to, out, GzipEngine::best);
}

}  // namespace jqtrace
