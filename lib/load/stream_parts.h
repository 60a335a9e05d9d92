#pragma once
// Parallel parsing of input that can only be read once, in order: a compressed file (the
// text exists only as it is inflated) or stdin.
//
// A thread of its own decodes the input and cuts the text into parts of about part_bytes
// where an event of the events array starts (the guess plan_parts makes for files: a line
// starting with '{' after a line ending in ','); the other threads parse the parts as they
// come. Each part's text is followed by the '{' at its cut, so that its parse proves the
// cut (ReadOptions::stop_at) exactly as for a file. Parts are joined in order as soon as
// they and all before them are parsed, and their text is then freed: memory holds a few
// parts of text, not the whole.
//
// A cut that proves wrong (pretty-printed JSON with arrays of objects in its args), or a
// join that cannot be exact, cannot fall back to reading the input again: the text from
// the last good cut on is read by one thread, continuing the state joined so far, which is
// what a sequential read would have had at that point.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parts.h"
#include "decoders.h"
#include "raw_input.h"

namespace jqtrace {

/// The size of a stream's parts: small, since their text is held until joined (bounded
/// memory), big enough that joining them costs little.
constexpr uint64_t kStreamPartBytes = 1u << 20;

struct StreamRead {
  bool opened = false;
  /// The results of the parts that count, in order (the last may be read_rest's).
  std::vector<PartRead> reads;
  /// Positions (line:column) of offsets in the whole text, for diagnostics reported after
  /// the read: the file read again when there is one, else lines recorded as they passed.
  std::unique_ptr<LineIndex> lines;
};

/// A text read_stream_parts reads: the input's, decoded, taken from its start.
struct StreamInput {
  const Input& input;  ///< its name, size, compression, and text again (none for stdin)
  std::unique_ptr<RawInput> text;
};
/// Reads input.text (decoded) in parts of part_bytes (at most kStreamPartBytes) on
/// `threads` parsing threads plus the decoding thread. The input's text_again() gives the
/// same decoded text again from its start (for positions on the error path); stdin has
/// none, and its lines are recorded as the text passes.
StreamRead read_stream_parts(StreamInput& input, unsigned threads, uint64_t part_bytes, const ProgressFn& progress,
                             const PartWork& work);

/// The input as a stream of parts when it must be read so: standard input, or a regular
/// gzip or zstd file (nullptr for a plain regular file, read in file parts, and for other
/// kinds of file, read in one pass). A gzip file takes access points into hunt (may be
/// null) as it is decoded.
std::unique_ptr<StreamInput> open_stream_input(Input& input, GzipPointHunt* hunt = nullptr);


}  // namespace jqtrace
