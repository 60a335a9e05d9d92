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

/// What a caller does with the parts (trace.cc builds a model, validate.cc checks rules).
struct StreamPartWork {
  /// Parses part k (state made fresh: a part can be parsed again) from its text.
  std::function<ReadResult(std::size_t k, Source& text, const ReadOptions& options)> read;
  /// Part k counts: joins it to the state of parts 0..k-1 (for k = 0: takes it as that
  /// state). Called in order of k, one call at a time. False when the join cannot be exact
  /// (the state must be left as it was): the text from part k on is then read by read_rest.
  std::function<bool(std::size_t k)> join;
  /// Reads the text from part k's start (k > 0) to the end of the input into the state
  /// joined so far (parts 0..k-1), as one sequential read would. (For k = 0 the input is
  /// read as part 0 and joined.)
  std::function<ReadResult(std::size_t k, Source& text)> read_rest;
  /// Part k's parse does not count (a cut before it proved wrong, or an input error before
  /// it ended the read): its state can go.
  std::function<void(std::size_t k)> drop;
};

/// The work of a loader whose members are read, join, read_rest and drop (as above).
template <typename Loader>
StreamPartWork stream_part_work(Loader& loader) {
  StreamPartWork work;
  work.read = [&loader](std::size_t k, Source& text, const ReadOptions& options) { return loader.read(k, text, options); };
  work.join = [&loader](std::size_t k) { return loader.join(k); };
  work.read_rest = [&loader](std::size_t k, Source& text) { return loader.read_rest(k, text); };
  work.drop = [&loader](std::size_t k) { loader.drop(k); };
  return work;
}

struct StreamRead {
  bool opened = false;
  /// The results of the parts that count, in order (the last may be read_rest's).
  std::vector<PartRead> reads;
  /// Positions (line:column) of offsets in the whole text, for diagnostics reported after
  /// the read: the file read again when there is one, else lines recorded as they passed.
  std::unique_ptr<LineIndex> lines;
};

/// Opens path ("-": stdin) for read_stream_parts when it must be read as a stream: stdin,
/// or a gzip or zstd file. nullptr for a plain regular file (read it in file parts) or
/// one that cannot be opened (the sequential reader says why).
struct StreamInput {
  std::unique_ptr<RawInput> text;
  Compression compression = Compression::none;
  std::string name;
  uint64_t total_size = 0;
  std::function<std::unique_ptr<RawInput>()> reopen;
};
/// Reads input.text (decoded) in parts of part_bytes (at most kStreamPartBytes) on
/// `threads` parsing threads plus the decoding thread. input.reopen gives the same decoded text again from its start (for positions on
/// the error path); empty for stdin, whose lines are then recorded as the text passes.
StreamRead read_stream_parts(StreamInput& input, unsigned threads, uint64_t part_bytes, const ProgressFn& progress,
                             const StreamPartWork& work);

/// A gzip file takes access points into hunt (may be null) as it is decoded.
std::unique_ptr<StreamInput> open_stream_input(const std::string& path, GzipPointHunt* hunt = nullptr);


}  // namespace jqtrace
