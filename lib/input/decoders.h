#pragma once
// Compressed input: gzip (through ISA-L's igzip when the build found it, else zlib) and
// zstd, recognised by their magic bytes, never by the file name.
//
// A decoder is a RawInput over the compressed bytes. Every one behaves alike at the edges:
// concatenated members or frames read as one text; input that ends inside a stream gives
// the text before the cut, then fails with cut_short() (the reader treats that text as a
// truncated trace); damage fails with an error naming the compressed byte where it was
// found.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "raw_input.h"

struct inflate_state;  // ISA-L's (isa-l/igzip_lib.h)

namespace jqtrace {

enum class Compression { none, gzip, zstd };
struct GzipPointHunt;  // gzip_points.h

/// "gzip", "zstd" or "" for none: for messages.
const char* compression_name(Compression c);

/// The compression whose magic `head` starts with (its first 4 bytes suffice).
Compression sniff_compression(std::string_view head);

/// Which library inflates gzip. `best` is ISA-L when built with it (several times faster
/// than zlib), else zlib; the others exist so that tests can hold both to the same output.
enum class GzipEngine { best, zlib, isal };

bool have_isal();
bool have_zstd();
/// One isal_inflate (in a build with ISA-L) over [in, in + avail) into out (room bytes).
/// read: how far ISA-L's input pointer moved, negative when it handed back bytes it had
/// read in an earlier call (at a member's end). Its byte count is not used: ISA-L 2.30
/// leaves it wrapped (4294967295) after an error in a short stream. Every ISA-L call in
/// jqtrace goes through here.
struct IsalRun {
  int status = 0;           ///< what isal_inflate returned (for the message)
  bool failed = false;      ///< damage, or a preset dictionary wanted
  bool finished = false;    ///< the stream (a gzip member) ended, its check verified
  std::ptrdiff_t read = 0;  ///< how far the input pointer moved
  std::size_t made = 0;     ///< bytes written to out
};
IsalRun isal_run(inflate_state* state, const unsigned char* in, std::size_t avail, unsigned char* out, std::size_t room);

/// What decodes compressed input in this build, for --version: "gzip via ISA-L, zstd 1.5.4".
std::string decoders_text();

/// hunt (may be null): access points to take while decoding (the ISA-L decoder takes
/// them; zlib's leaves hunt->points as it found them). The caller reads them once the
/// decoder is gone.
std::unique_ptr<RawInput> gzip_decoder(std::unique_ptr<RawInput> compressed, GzipEngine engine = GzipEngine::best,
                                       GzipPointHunt* hunt = nullptr);
/// Without zstd in the build, an input whose every read fails saying so. hunt (may be
/// null): the starts of the frames after the first, as access points with no window (a
/// multi-frame file, as pzstd or a writer that ends a frame now and then makes, can be
/// decoded from any of them).
std::unique_ptr<RawInput> zstd_decoder(std::unique_ptr<RawInput> compressed, GzipPointHunt* hunt = nullptr);

/// Reads the magic and returns the input decoded (or as it is, when not compressed), with
/// the compression found in *found. The magic bytes read are handed on, not lost.
/// A gzip or zstd input takes access points into hunt (may be null) as gzip_decoder and
/// zstd_decoder do.
std::unique_ptr<RawInput> decode_by_magic(std::unique_ptr<RawInput> raw, Compression* found,
                                          GzipPointHunt* hunt = nullptr);

/// raw decoded as compression c says (found by its magic already; raw still starts with it).
std::unique_ptr<RawInput> decode_as(Compression c, std::unique_ptr<RawInput> raw, GzipPointHunt* hunt = nullptr);

}  // namespace jqtrace
