#include "decoders.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <fcntl.h>
#include <string>

#include <zlib.h>
#ifdef JQTRACE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
#ifdef JQTRACE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace jqtrace {
namespace {

/// What every decoder shares: the compressed bytes read in chunks, members (or frames)
/// one after another, and the same answers at the edges. A decoder supplies step(): run
/// its library once over the bytes at next_in_ into out.
class Decoder : public RawInput {
 public:
  Decoder(std::unique_ptr<RawInput> compressed, Compression kind) : inner_(std::move(compressed)), kind_(kind) {}

  /// Every call of the library is given exactly kOutBlock bytes to fill, into the caller's
  /// buffer when it has room, else into our own and handed out from there. On damage the
  /// libraries give out different amounts of text depending on the room they had (ISA-L
  /// keeps a small tail in a buffer of its own), so fixed room makes the text before an
  /// error the same for every reader: one pass and the stream parts count the same events.
  long read(char* out, std::size_t size) override {
    if (held_from_ < held_to_) return hand_out(out, size);
    if (failed_) return -1;
    if (size >= kOutBlock) return decode(out);
    if (!held_) held_ = std::make_unique<char[]>(kOutBlock);
    long n = decode(held_.get());
    if (n <= 0) return n;
    held_from_ = 0;
    held_to_ = static_cast<std::size_t>(n);
    return hand_out(out, size);
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return inner_->consumed(); }
  bool cut_short() const override { return cut_short_; }

 protected:
  struct Step {
    std::size_t produced = 0;
    bool member_end = false;  ///< a member (frame) ended, its check verified
    std::string error;        ///< why step() failed
  };
  /// Decodes from next_in_/avail_in_ (advancing them) into out; false on damage.
  virtual bool step(char* out, std::size_t size, Step* s) = 0;
  /// Makes the decoder ready for another member after one ended.
  virtual bool start_member() = 0;

  const unsigned char* next_in_ = nullptr;
  std::size_t avail_in_ = 0;

 private:
  static constexpr std::size_t kOutBlock = 128 * 1024;

  /// Decodes into out (kOutBlock bytes of room): > 0 bytes, 0 at the end, -1 on failure.
  long decode(char* out) {
    for (;;) {
      if (avail_in_ == 0 && !in_eof_ && !refill()) return -1;
      if (between_members_) {
        if (avail_in_ == 0) {
          if (in_eof_) return 0;  // the end, after a complete member
          continue;
        }
        if (!start_member()) return damaged("cannot start the next stream");
        between_members_ = false;
      }
      Step s;
      std::size_t avail_before = avail_in_;
      // What the call that saw damage decoded is dropped: deflate decodes damaged bits into
      // wrong bytes before it finds them invalid, and they would reach the parser as a
      // misleading syntax error instead of this one.
      if (!step(out, kOutBlock, &s)) return damaged(s.error);
      if (s.member_end) between_members_ = true;
      if (s.produced) return static_cast<long>(s.produced);
      if (s.member_end) continue;
      if (avail_in_ == 0 && in_eof_) return truncated();
      if (avail_in_ == avail_before && avail_in_ != 0) return damaged("the decoder makes no progress");
    }
  }
  long hand_out(char* out, std::size_t size) {
    std::size_t n = std::min(size, held_to_ - held_from_);
    std::memcpy(out, held_.get() + held_from_, n);
    held_from_ += n;
    return static_cast<long>(n);
  }

  bool refill() {
    long n = inner_->read(in_, sizeof in_);
    if (n < 0) {
      error_ = inner_->error();
      failed_ = true;
      return false;
    }
    if (n == 0) in_eof_ = true;
    next_in_ = reinterpret_cast<const unsigned char*>(in_);
    avail_in_ = static_cast<std::size_t>(n);
    return true;
  }
  long truncated() {
    cut_short_ = true;
    failed_ = true;
    error_ = std::string("truncated ") + compression_name(kind_) + " stream (unexpected end of file)";
    return -1;
  }
  /// The offset is the compressed byte the decoder had reached when it saw the damage: zlib
  /// and ISA-L stop at or just after it, zstd at the start of the damaged block.
  long damaged(const std::string& why) {
    failed_ = true;
    error_ = std::string("corrupt ") + compression_name(kind_) + " data at or after byte " +
             std::to_string(inner_->consumed() - avail_in_) + " of the file: " + why;
    return -1;
  }

  static constexpr std::size_t kChunk = 128 * 1024;
  std::unique_ptr<RawInput> inner_;
  Compression kind_;
  char in_[kChunk];
  bool in_eof_ = false;
  bool between_members_ = false;
  bool failed_ = false;
  bool cut_short_ = false;
  std::string error_;
  std::unique_ptr<char[]> held_;  ///< text decoded for a small read (allocated at the first)
  std::size_t held_from_ = 0, held_to_ = 0;
};

class ZlibGzip final : public Decoder {
 public:
  explicit ZlibGzip(std::unique_ptr<RawInput> compressed) : Decoder(std::move(compressed), Compression::gzip) {
    std::memset(&z_, 0, sizeof z_);
    ready_ = inflateInit2(&z_, 15 + 16) == Z_OK;  // 16: a gzip wrapper
  }
  ~ZlibGzip() override { inflateEnd(&z_); }
  ZlibGzip(const ZlibGzip&) = delete;
  ZlibGzip& operator=(const ZlibGzip&) = delete;

 private:
  bool step(char* out, std::size_t size, Step* s) override {
    if (!ready_) {
      s->error = "cannot initialise zlib";
      return false;
    }
    z_.next_in = const_cast<Bytef*>(next_in_);
    z_.avail_in = static_cast<uInt>(avail_in_);
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(size);
    int r = inflate(&z_, Z_NO_FLUSH);
    next_in_ = z_.next_in;
    avail_in_ = z_.avail_in;
    s->produced = size - z_.avail_out;
    if (r == Z_STREAM_END) s->member_end = true;
    else if (r != Z_OK && r != Z_BUF_ERROR) {
      s->error = z_.msg ? z_.msg : "inflate failed";
      return false;
    }
    return true;
  }
  bool start_member() override { return inflateReset(&z_) == Z_OK; }

  z_stream z_;
  bool ready_ = false;
};

#ifdef JQTRACE_HAVE_ISAL
class IsalGzip final : public Decoder {
 public:
  explicit IsalGzip(std::unique_ptr<RawInput> compressed) : Decoder(std::move(compressed), Compression::gzip) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
  }

 private:
  bool step(char* out, std::size_t size, Step* s) override {
    state_.next_in = const_cast<uint8_t*>(next_in_);
    state_.avail_in = static_cast<uint32_t>(avail_in_);
    state_.next_out = reinterpret_cast<uint8_t*>(out);
    state_.avail_out = static_cast<uint32_t>(size);
    int r = isal_inflate(&state_);
    next_in_ = state_.next_in;
    avail_in_ = state_.avail_in;
    s->produced = size - state_.avail_out;
    if (r < 0 || r == ISAL_NEED_DICT) {
      s->error = why(r);
      return false;
    }
    s->member_end = state_.block_state == ISAL_BLOCK_FINISH;
    return true;
  }
  bool start_member() override {
    isal_inflate_reset(&state_);
    state_.crc_flag = ISAL_GZIP;
    return true;
  }
  static const char* why(int r) {
    switch (r) {
      case ISAL_INVALID_BLOCK: return "invalid deflate block";
      case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
      case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
      case ISAL_INVALID_WRAPPER: return "incorrect header check";
      case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
      case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
      case ISAL_NEED_DICT: return "needs a preset dictionary";
      default: return "inflate failed";
    }
  }

  inflate_state state_;
};
#endif

#ifdef JQTRACE_HAVE_ZSTD
class Zstd final : public Decoder {
 public:
  explicit Zstd(std::unique_ptr<RawInput> compressed)
      : Decoder(std::move(compressed), Compression::zstd), stream_(ZSTD_createDStream()) {
    if (stream_) ZSTD_initDStream(stream_);
  }
  ~Zstd() override { ZSTD_freeDStream(stream_); }
  Zstd(const Zstd&) = delete;
  Zstd& operator=(const Zstd&) = delete;

 private:
  bool step(char* out, std::size_t size, Step* s) override {
    if (!stream_) {
      s->error = "cannot initialise zstd";
      return false;
    }
    ZSTD_inBuffer in{next_in_, avail_in_, 0};
    ZSTD_outBuffer o{out, size, 0};
    std::size_t r = ZSTD_decompressStream(stream_, &o, &in);
    next_in_ += in.pos;
    avail_in_ -= in.pos;
    s->produced = o.pos;
    if (ZSTD_isError(r)) {
      s->error = ZSTD_getErrorName(r);
      return false;
    }
    s->member_end = r == 0;  // a frame decoded and flushed; the next call starts the next frame
    return true;
  }
  bool start_member() override { return true; }

  ZSTD_DStream* stream_;
};
#endif

/// What a zstd input reads as in a build without zstd.
class Unsupported final : public RawInput {
 public:
  explicit Unsupported(std::string why) : error_(std::move(why)) {}
  long read(char*, std::size_t) override { return -1; }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return 0; }

 private:
  std::string error_;
};

}  // namespace

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip: return "gzip";
    case Compression::zstd: return "zstd";
    case Compression::none: break;
  }
  return "";
}

Compression sniff_compression(std::string_view head) {
  auto byte = [&](std::size_t i) { return i < head.size() ? static_cast<unsigned char>(head[i]) : -1; };
  if (byte(0) == 0x1f && byte(1) == 0x8b) return Compression::gzip;
  if (byte(0) == 0x28 && byte(1) == 0xb5 && byte(2) == 0x2f && byte(3) == 0xfd) return Compression::zstd;
  return Compression::none;
}

bool have_isal() {
#ifdef JQTRACE_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

bool have_zstd() {
#ifdef JQTRACE_HAVE_ZSTD
  return true;
#else
  return false;
#endif
}

std::string decoders_text() {
  std::string text = have_isal() ? "gzip via ISA-L" : "gzip via zlib";
#ifdef JQTRACE_HAVE_ZSTD
  text += std::string(", zstd ") + ZSTD_versionString();
#else
  text += ", no zstd";
#endif
  return text;
}

std::unique_ptr<RawInput> gzip_decoder(std::unique_ptr<RawInput> compressed, GzipEngine engine) {
#ifdef JQTRACE_HAVE_ISAL
  if (engine != GzipEngine::zlib) return std::make_unique<IsalGzip>(std::move(compressed));
#else
  (void)engine;
#endif
  return std::make_unique<ZlibGzip>(std::move(compressed));
}

std::unique_ptr<RawInput> zstd_decoder(std::unique_ptr<RawInput> compressed) {
#ifdef JQTRACE_HAVE_ZSTD
  return std::make_unique<Zstd>(std::move(compressed));
#else
  (void)compressed;
  return std::make_unique<Unsupported>("zstd input, but this jqtrace was built without zstd (libzstd-dev)");
#endif
}

std::function<std::unique_ptr<RawInput>()> decoded_again(const std::string& path) {
  return [path]() -> std::unique_ptr<RawInput> {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    Compression same = Compression::none;
    return decode_by_magic(fd_input(fd, true), &same);
  };
}

std::unique_ptr<RawInput> decode_by_magic(std::unique_ptr<RawInput> raw, Compression* found) {
  std::string head(4, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    long n = raw->read(head.data() + got, head.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  *found = sniff_compression(head);
  auto whole = prefixed_input(std::move(raw), std::move(head));
  switch (*found) {
    case Compression::gzip: return gzip_decoder(std::move(whole));
    case Compression::zstd: return zstd_decoder(std::move(whole));
    case Compression::none: break;
  }
  return whole;
}

}  // namespace jqtrace
