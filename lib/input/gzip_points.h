#pragma once
// Access points into a gzip file, so that text in the middle of it can be decoded without
// decoding everything before it: at a deflate block boundary, the compressed position (a
// byte and a bit) and the 32 KiB of text before it (the window a back-reference may reach).
// The sidecar index keeps them for its blocks (trace_index.h). They are found while the
// trace is decoded for the index pass: by the ISA-L decoder when the build has it
// (GzipPointHunt, decoders.h), else by a zlib pass of their own, whose Z_BLOCK flush stops
// at block boundaries. Either is used by either inflater (GzipCursor).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoders.h"

namespace jqtrace {

class Input;

struct GzipPoint {
  uint64_t out = 0;    ///< offset in the decoded text
  uint64_t in = 0;     ///< offset in the file of the first byte holding bits of the next block
  uint8_t bits = 0;    ///< bits of the byte before `in` that belong to the next block (0..7)
  std::string window;  ///< the decoded text just before `out` (up to 32 KiB; empty at a member's start)
  /// Nonzero when `window` holds that text deflated (as an index keeps it until a point
  /// is used): its size once inflated.
  uint32_t packed_size = 0;
};

/// Access points wanted from a gzip decoder (decoders.h) while it decodes a file: about
/// every `spacing` bytes of text (fewer where the stream offers no block header to stop
/// at). Only the ISA-L decoder takes them; `points` starts with the file's start. A zstd
/// decoder takes the starts of its frames here the same way (points with no window: a
/// frame decodes on its own).
struct GzipPointHunt {
  explicit GzipPointHunt(uint64_t spacing_, bool pack_ = true) : spacing(spacing_), pack(pack_), points(1) {}
  uint64_t spacing;
  /// Windows deflated where they are found, as an index keeps them (~0.4 ms a point);
  /// points used in this process only (window's second read) keep them whole.
  bool pack;
  std::vector<GzipPoint> points;
};

/// Deflates point's window in place (packed_size: its size), as an index keeps it: done
/// where the point is found, on the decoding thread, so that writing an index does not
/// spend ~0.4 ms a point (~0.4 s for a 4 GB trace) on one core after the pass.
void pack_point(GzipPoint* point);

/// point with its window inflated (as it is when it was not packed); false when the
/// packed window does not inflate to its size.
bool unpack_point(const GzipPoint& point, GzipPoint* out);

/// Access points about every `spacing` bytes of decoded text, from one pass of zlib over
/// the file (the first at its start). False with *why when the file is not gzip or zlib
/// fails before the end; a stream cut short keeps the points before the cut.
bool build_gzip_points(std::shared_ptr<const Input> input, uint64_t spacing, std::vector<GzipPoint>* points,
                       std::string* why);

/// The decoded text [from, to) of the gzip file input, decoding from point (point.out <=
/// from); to = UINT64_MAX: up to the end. Concatenated members are followed. False when
/// the file cannot be read or is damaged there; text cut short by the end of the file is
/// returned as far as it goes.
bool decode_from_point(std::shared_ptr<const Input> input, const GzipPoint& point, uint64_t from, uint64_t to,
                       std::string* out);
bool decode_from_point(std::shared_ptr<const Input> input, const GzipPoint& point, uint64_t from, uint64_t to,
                       std::string* out, GzipEngine engine);

class FileBytes;
class PointInflater;

/// Decoding a gzip file from an access point onwards, in reads of increasing offsets;
/// through ISA-L when the build has it (3-4x fewer instructions than zlib), else zlib.
class GzipCursor {
 public:
  explicit GzipCursor(std::shared_ptr<const Input> input);
  /// engine: GzipEngine::zlib or ::isal to choose (tests hold both to the same text).
  GzipCursor(std::shared_ptr<const Input> input, GzipEngine engine);
  ~GzipCursor();
  GzipCursor(const GzipCursor&) = delete;
  GzipCursor& operator=(const GzipCursor&) = delete;
  /// Starts (again) at point; false when the file cannot be read or the point is bad.
  bool start(const GzipPoint& point);
  /// The offset of the next byte of text it decodes.
  uint64_t position() const { return text_at_; }
  /// Appends the text [from, to) (from >= position()), decoding and dropping what lies
  /// before it; to = UINT64_MAX: up to the end. False when the file is damaged there
  /// (text the end of the file cuts short is appended as far as it goes).
  bool read(uint64_t from, uint64_t to, std::string* out);

 private:
  std::unique_ptr<FileBytes> file_;
  std::unique_ptr<PointInflater> inflater_;
  std::vector<unsigned char> in_, text_;
  const unsigned char* next_in_ = nullptr;
  std::size_t avail_in_ = 0;
  uint64_t file_at_ = 0, text_at_ = 0;
  bool raw_ = false;  ///< inside the member the point is in (no gzip header read)
  bool started_ = false, ok_ = false;
};

/// The point to start from for text at offset: the last one at or before it.
const GzipPoint* point_before(const std::vector<GzipPoint>& points, uint64_t offset);

}  // namespace jqtrace
