#include "decoders.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <fcntl.h>
#include <unistd.h>
#include <string>

#include <zlib.h>

#include "gzip_points.h"
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
    if (!held_) held_ = std::make_unique_for_overwrite<char[]>(kOutBlock);
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
  /// The file offset of next_in_: bytes taken from the input, less those not yet decoded.
  uint64_t input_offset() const { return inner_->consumed() - avail_in_; }
  /// ISA-L, at a member's end, hands back the bytes its bit buffer read past it (up to 8),
  /// which may belong to the chunk before: the last kKeep bytes of that chunk stay in front
  /// of the current one, from here.
  const unsigned char* earliest_in_ = nullptr;

 private:
  static constexpr std::size_t kOutBlock = 128 * 1024;

  /// Decodes into out (kOutBlock bytes of room): > 0 bytes, 0 at the end, -1 on failure.
  long decode(char* out) {
    for (;;) {
      if (avail_in_ == 0 && !in_eof_ && !refill()) return -1;
      if (between_members_) {
        if (kind_ == Compression::gzip) skip_zero_padding();
        if (avail_in_ == 0) {
          if (in_eof_) return 0;  // the end, after a complete member
          continue;
        }
        if (zero_padding_) return damaged("bytes other than zeros after the zero padding that ends the gzip data");
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
  /// Zero bytes after a gzip member are padding (tape and block writers leave it; gzip(1)
  /// reads past it): skipped to the end of the file. Anything else after them is refused.
  void skip_zero_padding() {
    while (avail_in_ != 0 && *next_in_ == 0) {
      ++next_in_;
      --avail_in_;
      zero_padding_ = true;
    }
  }
  long hand_out(char* out, std::size_t size) {
    std::size_t n = std::min(size, held_to_ - held_from_);
    std::memcpy(out, held_.get() + held_from_, n);
    held_from_ += n;
    return static_cast<long>(n);
  }

  bool refill() {
    // The last bytes of the chunk before stay in front of the new one (see earliest_in_).
    std::size_t keep = std::min(kKeep, in_length_);
    std::memmove(in_ + kKeep - keep, in_ + kKeep + in_length_ - keep, keep);
    long n = inner_->read(in_ + kKeep, kChunk);
    if (n < 0) {
      error_ = inner_->error();
      failed_ = true;
      return false;
    }
    if (n == 0) in_eof_ = true;
    in_length_ = static_cast<std::size_t>(n);
    next_in_ = reinterpret_cast<const unsigned char*>(in_ + kKeep);
    earliest_in_ = next_in_ - keep;
    avail_in_ = in_length_;
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
  static constexpr std::size_t kKeep = 16;
  std::unique_ptr<RawInput> inner_;
  Compression kind_;
  char in_[kKeep + kChunk];
  std::size_t in_length_ = 0;
  bool in_eof_ = false;
  bool between_members_ = false;
  bool zero_padding_ = false;  ///< zero bytes followed the last member
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
  IsalGzip(std::unique_ptr<RawInput> compressed, GzipPointHunt* hunt)
      : Decoder(std::move(compressed), Compression::gzip), hunt_(hunt) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
    if (hunt_) next_point_at_ = hunt_->spacing;
  }

 private:
  bool step(char* out, std::size_t size, Step* s) override {
    auto* o = reinterpret_cast<uint8_t*>(out);
    std::size_t produced = 0;
    int r = ISAL_DECOMP_OK;
    // A step hands out up to `size` bytes: the hunt for a point starts inside it, where
    // the text reaches the point's spacing.
    if (hunt_ && text_ < next_point_at_ && next_point_at_ - text_ < size)
      r = call(o, static_cast<std::size_t>(next_point_at_ - text_), avail_in_, &produced);
    if (ok(r) && hunting(produced)) r = hunt(o, size, &produced);
    // The rest of the room in one call, as when not hunting: the text before damage is then
    // the same whether or not points are taken.
    if (ok(r) && state_.block_state != ISAL_BLOCK_FINISH && (produced == 0 || (produced < size && avail_in_)))
      r = call(o + produced, size - produced, avail_in_, &produced);
    text_ += produced;
    member_text_ += produced;
    s->produced = produced;
    if (!ok(r)) {
      s->error = why(r);
      return false;
    }
    s->member_end = state_.block_state == ISAL_BLOCK_FINISH;
    return true;
  }
  bool start_member() override {
    isal_inflate_reset(&state_);
    state_.crc_flag = ISAL_GZIP;
    member_text_ = 0;
    return true;
  }
  static bool ok(int r) { return r >= 0 && r != ISAL_NEED_DICT; }

  /// One isal_inflate over at most in_limit of the bytes at next_in_ into out (room bytes);
  /// adds what it made to *produced.
  int call(uint8_t* out, std::size_t room, std::size_t in_limit, std::size_t* produced) {
    std::size_t slice = std::min(avail_in_, in_limit);
    IsalRun run = isal_run(&state_, next_in_, slice, out, room);
    // It may step back over bytes it held (a member's end): never before the bytes still
    // held, never past the slice.
    std::ptrdiff_t moved = std::clamp<std::ptrdiff_t>(run.read, earliest_in_ - next_in_, static_cast<std::ptrdiff_t>(slice));
    next_in_ += moved;
    avail_in_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(avail_in_) - moved);
    *produced += run.made;
    return run.status;
  }

  // Access points. ISA-L decodes block after block inside one call and has no stop at a
  // block boundary (zlib's Z_BLOCK). But when its input runs out inside a block header it
  // returns in ISAL_BLOCK_HDR with its bit buffer wound back to the header's first bit:
  // the stream then stands exactly at a block boundary, with the text before it in ISA-L's
  // history buffer. That is a zlib-style point (byte, bits, 32 KiB window), usable by any
  // inflater. To stop there, the hunt (from each point's spacing on) feeds the input in
  // coarse slices, keeping a copy of the state before each; a slice in which the Huffman
  // tables changed held a block header, so it is decoded again from the copy in fine
  // slices, shorter than a dynamic block's header (tens of bytes), one of which ends inside
  // it. A point costs ~0.2 ms (a fine slice alone ~1 µs, and a block is ~20-60 KB of input).
  static constexpr std::size_t kCoarseSlice = 2048;
  static constexpr std::size_t kFineSlice = 8;
  static constexpr std::size_t kHistory = 32 * 1024;
  /// Fixed-code and stored blocks have no tables of their own or headers too short to
  /// catch: the hunt gives up after this much input and tries again one spacing later.
  static constexpr std::size_t kHuntGiveUp = 1u << 20;

  bool hunting(std::size_t produced) const { return hunt_ && text_ + produced >= next_point_at_; }

  int hunt(uint8_t* out, std::size_t room, std::size_t* produced) {
    if (!before_slice_) before_slice_ = std::make_unique<inflate_state>();
    int r = ISAL_DECOMP_OK;
    while (*produced < room && avail_in_) {
      std::memcpy(before_slice_.get(), &state_, sizeof state_);
      const unsigned char* slice_at = next_in_;
      std::size_t in_before = avail_in_, made_before = *produced;
      r = call(out + *produced, room - *produced, kCoarseSlice, produced);
      std::size_t used = avail_in_ < in_before ? in_before - avail_in_ : 0;  // (a member end may step back)
      hunted_in_ += used;
      if (!ok(r) || state_.block_state == ISAL_BLOCK_FINISH) break;
      if (at_point(out, *produced)) break;
      if (tables_changed()) {  // a header went by: the same slice again, finely
        std::memcpy(&state_, before_slice_.get(), sizeof state_);
        next_in_ = slice_at;
        avail_in_ = in_before;
        *produced = made_before;
        if (redo_finely(out, room, used, produced, &r) || !ok(r)) break;
      }
      if (hunted_in_ > kHuntGiveUp) {
        give_up(*produced);
        break;
      }
      if (used == 0 && made_before == *produced) break;  // no progress: the caller decides
    }
    return r;
  }

  /// Decodes the `length` bytes at next_in_ again in fine slices; true when one stopped at
  /// a block header and a point was taken there.
  bool redo_finely(uint8_t* out, std::size_t room, std::size_t length, std::size_t* produced, int* r) {
    const unsigned char* end = next_in_ + length;
    while (next_in_ < end && *produced < room) {
      *r = call(out + *produced, room - *produced, std::min<std::size_t>(kFineSlice, end - next_in_), produced);
      if (!ok(*r)) return false;
      if (at_point(out, *produced)) return true;
    }
    return false;
  }
  bool tables_changed() const {
    return std::memcmp(&before_slice_->lit_huff_code, &state_.lit_huff_code, sizeof state_.lit_huff_code) != 0;
  }
  /// True when the stream stands at a block header and a point was taken there.
  bool at_point(const uint8_t* out, std::size_t produced) {
    return state_.block_state == ISAL_BLOCK_HDR && state_.wrapper_flag && take_point(out, produced);
  }

  void give_up(std::size_t produced) {
    next_point_at_ = text_ + produced + hunt_->spacing;
    hunted_in_ = 0;
  }

  /// The point where the stream stands (at a block header); false when it cannot be one.
  bool take_point(const uint8_t* out, std::size_t produced) {
    // Text decoded but not handed out yet waits in ISA-L's buffer after the history.
    auto valid = static_cast<std::size_t>(state_.tmp_out_valid);
    auto handed = static_cast<std::size_t>(state_.tmp_out_processed);
    if (handed > valid || valid > sizeof state_.tmp_out_buffer) return false;
    uint64_t member_at = member_text_ + produced + (valid - handed);
    if (member_at == 0) return false;  // a member's start: its gzip header comes first
    std::size_t window = static_cast<std::size_t>(std::min<uint64_t>(member_at, kHistory));
    if (valid < window) return false;
    // The history's tail is the text this step handed out: a check that the buffer holds
    // what this code assumes it holds (ISA-L keeps it for its back-references).
    std::size_t overlap = std::min(produced, handed);
    if (std::memcmp(state_.tmp_out_buffer + handed - overlap, out + produced - overlap, overlap) != 0) return false;
    uint64_t next_byte = consumed() - avail_in_;
    uint64_t held_bits = static_cast<uint64_t>(state_.tmp_in_size) * 8 + static_cast<uint64_t>(state_.read_in_length);
    if (next_byte * 8 < held_bits) return false;
    uint64_t header_bit = next_byte * 8 - held_bits;
    GzipPoint p;
    p.out = text_ + produced + (valid - handed);
    p.in = (header_bit + 7) / 8;
    p.bits = static_cast<uint8_t>(p.in * 8 - header_bit);
    p.window.assign(reinterpret_cast<const char*>(state_.tmp_out_buffer + valid - window), window);
    if (hunt_->pack) pack_point(&p);
    hunt_->points.push_back(std::move(p));
    next_point_at_ = hunt_->points.back().out + hunt_->spacing;
    hunted_in_ = 0;
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
  GzipPointHunt* hunt_;
  uint64_t text_ = 0;         ///< text decoded so far (handed out of step)
  uint64_t member_text_ = 0;  ///< of that, in the current member
  uint64_t next_point_at_ = UINT64_MAX;
  std::size_t hunted_in_ = 0;  ///< input the current hunt went through
  std::unique_ptr<inflate_state> before_slice_;  ///< the state before the hunt's last slice
};
#endif

#ifdef JQTRACE_HAVE_ZSTD
/// hunt (may be null): the start of every frame after the first, spacing apart at least,
/// goes into hunt->points as a point with no window (decoding can start there afresh).
class Zstd final : public Decoder {
 public:
  Zstd(std::unique_ptr<RawInput> compressed, GzipPointHunt* hunt)
      : Decoder(std::move(compressed), Compression::zstd), stream_(ZSTD_createDStream()), hunt_(hunt) {
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
    text_out_ += o.pos;
    if (ZSTD_isError(r)) {
      s->error = ZSTD_getErrorName(r);
      return false;
    }
    s->member_end = r == 0;  // a frame decoded and flushed; the next call starts the next frame
    return true;
  }
  /// Called when a frame ended and more input follows: next_in_ is the next frame's start.
  bool start_member() override {
    if (hunt_ && text_out_ >= hunt_->points.back().out + hunt_->spacing) {
      GzipPoint frame;
      frame.out = text_out_;
      frame.in = input_offset();
      hunt_->points.push_back(std::move(frame));
    }
    return true;
  }

  ZSTD_DStream* stream_;
  GzipPointHunt* hunt_;
  uint64_t text_out_ = 0;  ///< text decoded so far
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
  // A skippable frame (0x184D2A50..5F, little-endian), as pzstd writes first: the zstd
  // library passes over it like any frame.
  if ((byte(0) & 0xf0) == 0x50 && byte(1) == 0x2a && byte(2) == 0x4d && byte(3) == 0x18) return Compression::zstd;
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

IsalRun isal_run(inflate_state* state, const unsigned char* in, std::size_t avail, unsigned char* out, std::size_t room) {
  IsalRun run;
#ifdef JQTRACE_HAVE_ISAL
  state->next_in = const_cast<uint8_t*>(in);
  state->avail_in = static_cast<uint32_t>(avail);
  state->next_out = out;
  state->avail_out = static_cast<uint32_t>(room);
  run.status = isal_inflate(state);
  run.failed = run.status < 0 || run.status == ISAL_NEED_DICT;
  run.finished = state->block_state == ISAL_BLOCK_FINISH;
  run.read = static_cast<std::ptrdiff_t>(reinterpret_cast<uintptr_t>(state->next_in) - reinterpret_cast<uintptr_t>(in));
  run.made = room - state->avail_out;
#else
  (void)state, (void)in, (void)avail, (void)out, (void)room;
  run.failed = true;
#endif
  return run;
}

std::unique_ptr<RawInput> gzip_decoder(std::unique_ptr<RawInput> compressed, GzipEngine engine,
                                       GzipPointHunt* hunt) {
#ifdef JQTRACE_HAVE_ISAL
  if (engine != GzipEngine::zlib) return std::make_unique<IsalGzip>(std::move(compressed), hunt);
#else
  (void)engine;
  (void)hunt;
#endif
  return std::make_unique<ZlibGzip>(std::move(compressed));
}

std::unique_ptr<RawInput> zstd_decoder(std::unique_ptr<RawInput> compressed, GzipPointHunt* hunt) {
#ifdef JQTRACE_HAVE_ZSTD
  return std::make_unique<Zstd>(std::move(compressed), hunt);
#else
  (void)compressed;
  (void)hunt;
  return std::make_unique<Unsupported>("zstd input, but this jqtrace was built without zstd (libzstd-dev)");
#endif
}

std::unique_ptr<RawInput> decode_as(Compression c, std::unique_ptr<RawInput> raw, GzipPointHunt* hunt) {
  switch (c) {
    case Compression::gzip: return gzip_decoder(std::move(raw), GzipEngine::best, hunt);
    case Compression::zstd: return zstd_decoder(std::move(raw), hunt);
    case Compression::none: break;
  }
  return raw;
}

std::unique_ptr<RawInput> decode_by_magic(std::unique_ptr<RawInput> raw, Compression* found, GzipPointHunt* hunt) {
  std::string head(4, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    long n = raw->read(head.data() + got, head.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  *found = sniff_compression(head);
  return decode_as(*found, prefixed_input(std::move(raw), std::move(head)), hunt);
}

}  // namespace jqtrace
