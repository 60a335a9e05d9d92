#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include <zlib.h>
#ifdef JQTRACE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "decoders.h"
#include "gzip_points.h"
#include "read_ahead.h"
#include "test_util.h"

using namespace jqtrace;
using jqtrace::test::gzip_bytes;

namespace {

/// Hands out its bytes a few at a time (1, 2, ... 7, 1, ...): every boundary of a member,
/// header or block falls somewhere inside a read.
class TrickleInput final : public RawInput {
 public:
  explicit TrickleInput(std::string bytes) : bytes_(std::move(bytes)) {}
  long read(char* out, std::size_t size) override {
    std::size_t n = std::min({size, bytes_.size() - pos_, next_});
    next_ = next_ % 7 + 1;
    std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return static_cast<long>(n);
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return pos_; }

 private:
  std::string bytes_;
  std::size_t pos_ = 0;
  std::size_t next_ = 1;
  std::string error_;
};

struct Drained {
  std::string text;
  long last = 0;  ///< the final read's answer: 0 (end) or -1
  std::string error;
  bool cut_short = false;
};

Drained drain(RawInput& in, std::size_t chunk = 4096) {
  Drained d;
  std::vector<char> buf(chunk);
  for (;;) {
    long n = in.read(buf.data(), buf.size());
    if (n <= 0) {
      d.last = n;
      break;
    }
    d.text.append(buf.data(), static_cast<std::size_t>(n));
  }
  d.error = in.error();
  d.cut_short = in.cut_short();
  return d;
}

std::string sample_text(std::size_t events) {
  std::string t = "{\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events; ++i)
    t += "{\"name\":\"op" + std::to_string(i % 13) + "\",\"ph\":\"X\",\"ts\":" + std::to_string(i * 7) +
         ",\"dur\":5,\"pid\":1,\"tid\":" + std::to_string(i % 3) + "},\n";
  return t + "{}]}\n";
}

std::vector<GzipEngine> gzip_engines() {
  std::vector<GzipEngine> engines{GzipEngine::zlib};
  if (have_isal()) engines.push_back(GzipEngine::isal);
  return engines;
}

std::string engine_name(GzipEngine e) { return e == GzipEngine::zlib ? "zlib" : "isal"; }

}  // namespace

TEST_CASE("magic bytes choose the decoder, never the name") {
  CHECK(sniff_compression(std::string("\x1f\x8b\x08\x00", 4)) == Compression::gzip);
  CHECK(sniff_compression(std::string("\x28\xb5\x2f\xfd", 4)) == Compression::zstd);
  CHECK(sniff_compression(std::string("\x28\xb5\x2f", 3)) == Compression::none);
  CHECK(sniff_compression("{\"tr") == Compression::none);
  CHECK(sniff_compression("") == Compression::none);
}

TEST_CASE("every gzip engine inflates concatenated members, read a few bytes at a time, to the same text") {
  std::string a = sample_text(3000), b = "tail member\n", c = sample_text(10);
  std::string gz = gzip_bytes(a, 1) + gzip_bytes(b, 9) + gzip_bytes(c, 6);
  for (GzipEngine e : gzip_engines()) {
    CAPTURE(engine_name(e));
    auto in = gzip_decoder(std::make_unique<TrickleInput>(gz), e);
    Drained d = drain(*in, 977);
    CHECK(d.last == 0);
    CHECK(d.error.empty());
    CHECK_FALSE(d.cut_short);
    CHECK(d.text == a + b + c);
    CHECK(in->consumed() == gz.size());
  }
}

TEST_CASE("a gzip stream cut anywhere gives a prefix of the text, then says it was cut short") {
  std::string text = sample_text(400);
  std::string gz = gzip_bytes(text) + gzip_bytes("second");
  for (GzipEngine e : gzip_engines()) {
    CAPTURE(engine_name(e));
    for (std::size_t cut = 2; cut < gz.size(); cut += 37) {
      CAPTURE(cut);
      auto in = gzip_decoder(memory_input(gz.substr(0, cut)), e);
      Drained d = drain(*in);
      CHECK(d.last == -1);
      CHECK(d.cut_short);
      CHECK((text + "second").compare(0, d.text.size(), d.text) == 0);
    }
  }
}

TEST_CASE("damaged gzip data fails naming the compressed byte") {
  std::string text = sample_text(2000);
  std::string gz = gzip_bytes(text);
  std::size_t at = gz.size() / 2;
  gz[at] = static_cast<char>(gz[at] ^ 0x55);
  gz[at + 1] = static_cast<char>(gz[at + 1] ^ 0x55);
  for (GzipEngine e : gzip_engines()) {
    CAPTURE(engine_name(e));
    auto in = gzip_decoder(memory_input(gz), e);
    Drained d = drain(*in);
    CHECK(d.last == -1);
    CHECK_FALSE(d.cut_short);
    CHECK(d.error.rfind("corrupt gzip data at or after byte ", 0) == 0);
    // No check of the text that came out: deflate may decode damaged bits into wrong bytes
    // before it finds them invalid (the CRC comes at the end), so a reader must refuse the
    // whole input on this error, as jqtrace does (exit 3), not analyse what came out.
  }
  auto garbage_after = gzip_decoder(memory_input(gzip_bytes("ok") + "junk after the member"));
  Drained d = drain(*garbage_after);
  CHECK(d.text == "ok");
  CHECK(d.error.find("corrupt gzip data") == 0);
}

TEST_CASE("what comes out before damage does not depend on the size of the reads") {
  // A damaged check (the CRC, at the member's end) is seen in the call that decodes the last
  // bytes: a reader with a big buffer would get them in that call, one with small buffers
  // before it. Both must get the same text, then the error (the fuzzed stream join compares
  // them): the decoder's calls are the same whatever the reads.
  std::string text = sample_text(300);
  std::string gz = gzip_bytes(text);
  gz[gz.size() - 6] = static_cast<char>(gz[gz.size() - 6] ^ 0x01);  // the CRC-32, not the data
  for (GzipEngine e : gzip_engines()) {
    CAPTURE(engine_name(e));
    auto big = gzip_decoder(memory_input(gz), e);
    auto small = gzip_decoder(memory_input(gz), e);
    Drained whole = drain(*big, 1 << 20), bits = drain(*small, 61);
    CHECK(whole.last == -1);
    CHECK(bits.last == -1);
    CHECK(text.compare(0, whole.text.size(), whole.text) == 0);
    CHECK(bits.text == whole.text);
    CHECK(whole.error == bits.error);
    CHECK(whole.error.find("incorrect data check") != std::string::npos);
  }
}

TEST_CASE("damage anywhere: the text before the error does not depend on the size of the reads") {
  std::string text = sample_text(300);
  std::string gz = gzip_bytes(text);
  for (GzipEngine e : gzip_engines()) {
    CAPTURE(engine_name(e));
    for (std::size_t at = 10; at + 8 < gz.size(); at += 13) {
      CAPTURE(at);
      std::string damaged = gz;
      damaged.replace(at, 6, "444444");
      auto big = gzip_decoder(memory_input(damaged), e);
      auto small = gzip_decoder(memory_input(damaged), e);
      Drained whole = drain(*big, 1 << 20), bits = drain(*small, 61);
      CHECK(bits.text == whole.text);
      CHECK(bits.error == whole.error);
    }
  }
}

#ifdef JQTRACE_HAVE_ZSTD
namespace {
std::string zstd_frame(const std::string& text, int level = 3) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), level);
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}
}  // namespace

TEST_CASE("zstd: frames one after another, read a few bytes at a time") {
  std::string a = sample_text(5000), b = sample_text(3);
  std::string z = zstd_frame(a, 1) + zstd_frame(b, 19);
  Compression found = Compression::none;
  auto in = decode_by_magic(std::make_unique<TrickleInput>(z), &found);
  CHECK(found == Compression::zstd);
  Drained d = drain(*in, 1234);
  CHECK(d.last == 0);
  CHECK(d.error.empty());
  CHECK(d.text == a + b);
}

TEST_CASE("zstd: the starts of its frames are taken as access points, spacing apart, each decoding on its own") {
  std::vector<std::string> texts = {sample_text(120), sample_text(1), sample_text(90), sample_text(60)};
  std::string z, whole;
  std::vector<uint64_t> frame_in, frame_out;
  for (const std::string& t : texts) {
    frame_in.push_back(z.size());
    frame_out.push_back(whole.size());
    z += zstd_frame(t);
    whole += t;
  }
  GzipPointHunt every(1, false);
  Compression found = Compression::none;
  auto in = decode_by_magic(std::make_unique<TrickleInput>(z), &found, &every);  // frame ends inside reads
  CHECK(drain(*in, 777).text == whole);
  REQUIRE(every.points.size() == texts.size());
  for (std::size_t f = 0; f < texts.size(); ++f) {
    CAPTURE(f);
    CHECK(every.points[f].in == frame_in[f]);
    CHECK(every.points[f].out == frame_out[f]);
    CHECK(every.points[f].window.empty());
    auto from_here = zstd_decoder(memory_input(z.substr(every.points[f].in)));
    CHECK(drain(*from_here).text == whole.substr(every.points[f].out));
  }
  // Spaced: the first frame start at least `spacing` of text after the last point taken.
  uint64_t spacing = frame_out[2] + 1;  // frames 1 and 2 start before it, frame 3 after
  GzipPointHunt sparse(spacing, false);
  auto again = zstd_decoder(memory_input(z), &sparse);
  CHECK(drain(*again).text == whole);
  REQUIRE(sparse.points.size() == 2);
  CHECK(sparse.points[1].out == frame_out[3]);
  CHECK(sparse.points[1].in == frame_in[3]);
}

TEST_CASE("zstd: cut short is a prefix and cut_short, damage is an error with its offset") {
  std::string text = sample_text(3000);
  std::string z = zstd_frame(text);
  for (std::size_t cut = 1; cut < z.size(); cut += z.size() / 17) {
    auto in = zstd_decoder(memory_input(z.substr(0, cut)));
    Drained d = drain(*in);
    CHECK(d.last == -1);
    CHECK(d.cut_short);
    CHECK(text.compare(0, d.text.size(), d.text) == 0);
  }
  std::string damaged = z;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0xff);
  auto in = zstd_decoder(memory_input(damaged));
  Drained d = drain(*in);
  CHECK(d.last == -1);
  CHECK_FALSE(d.cut_short);
  CHECK(d.error.rfind("corrupt zstd data at or after byte ", 0) == 0);
}
#endif

/// Hands out `good` bytes, then throws as a decoder out of memory would.
class ThrowingInput final : public RawInput {
 public:
  explicit ThrowingInput(std::string good) : good_(std::move(good)) {}
  long read(char* out, std::size_t size) override {
    if (pos_ == good_.size()) throw std::bad_alloc();
    std::size_t n = std::min(size, good_.size() - pos_);
    std::memcpy(out, good_.data() + pos_, n);
    pos_ += n;
    return static_cast<long>(n);
  }
  const std::string& error() const override { return error_; }
  uint64_t consumed() const override { return pos_; }

 private:
  std::string good_, error_;
  std::size_t pos_ = 0;
};

TEST_CASE("reading ahead: an exception on the reading thread reaches the reader after the bytes before it") {
  // Escaping the thread, it ended the process (std::terminate).
  std::string text = sample_text(2000);
  auto ahead = read_ahead(std::make_unique<ThrowingInput>(text), 1000, 3);
  std::string got;
  char buffer[333];
  auto drain_all = [&] {
    for (long n; (n = ahead->read(buffer, sizeof buffer)) > 0;) got.append(buffer, static_cast<std::size_t>(n));
  };
  CHECK_THROWS_AS(drain_all(), std::bad_alloc);
  CHECK(text.compare(0, got.size(), got) == 0);
}

TEST_CASE("reading ahead on a thread hands out the same bytes, end and error") {
  std::string text = sample_text(20000);
  auto ahead = read_ahead(std::make_unique<TrickleInput>(text), 1000, 3);
  Drained d = drain(*ahead, 333);
  CHECK(d.text == text);
  CHECK(d.last == 0);
  CHECK(ahead->consumed() == text.size());

  std::string gz = gzip_bytes(text);
  auto cut = read_ahead(gzip_decoder(memory_input(gz.substr(0, gz.size() / 3))), 4096, 2);
  Drained c = drain(*cut);
  CHECK(c.last == -1);
  CHECK(c.cut_short);
  CHECK(text.compare(0, c.text.size(), c.text) == 0);

  // Slots are allocated as the text comes and grow while it fills them (64 KiB up to the
  // slot size): the bytes, in order, across every size change.
  std::string big = sample_text(20000);
  REQUIRE(big.size() > 4 * 256 * 1024);
  for (std::size_t read_size : {std::size_t{7919}, std::size_t{1} << 20}) {
    auto growing = read_ahead(memory_input(big), 256 * 1024, 3);
    Drained g = drain(*growing, read_size);
    CHECK(g.text == big);
    CHECK(g.last == 0);
  }

  // Dropped before the end: the thread stops instead of waiting for a reader forever.
  auto abandoned = read_ahead(memory_input(text), 100, 2);
  char byte = 0;
  CHECK(abandoned->read(&byte, 1) == 1);
  abandoned.reset();
}

TEST_CASE("damage names a byte inside the file, whatever count the library is left with") {
  // Found by fuzz_trace: on this cut stream ISA-L 2.30 fails with its input count wrapped
  // to 4294967295, and the decoder named byte 18446744069414584347 (it took the count as
  // it was); now the position comes from where ISA-L's pointer stopped.
  const std::string gz("\x1f\x8b\x08\x00\x7b\x00\x00\x00\x00\x02\x03\x2a\x28\x4a\x4c\x4e\x75\x2d\x4b\xcd\x4d\x05\x80\x04\x00\x00",
                       26);
  for (GzipEngine e : gzip_engines()) {
    CAPTURE(engine_name(e));
    auto in = gzip_decoder(memory_input(gz), e);
    Drained d = drain(*in);
    CHECK(d.last == -1);
    const std::string lead = "corrupt gzip data at or after byte ";
    REQUIRE(d.error.rfind(lead, 0) == 0);
    CHECK(std::stoull(d.error.substr(lead.size())) <= gz.size());
  }
}
