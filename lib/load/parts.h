#pragma once
// Where to cut a trace file for parallel parsing. A cut is a guess until the part before
// it, parsed, stops exactly there (see ReadOptions::stop_at); the guesses are chosen so
// that in the layout the jobque tracer and Chrome write — one event a line — they are
// always right: a line whose first non-blank character is '{' after a line ending in ','.
// A raw newline never occurs inside a JSON string, so a cut is never inside one.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reader.h"
#include "source.h"

namespace jqtrace {

/// The state of each part of a parallel read, made as parts come (from any thread). A
/// deque: a part's state stays where it is while later ones are added.
template <typename Part>
class PartSlots {
 public:
  Part& at(std::size_t k) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (parts_.size() <= k) parts_.emplace_back();
    return parts_[k];
  }

 private:
  std::mutex mutex_;
  std::deque<Part> parts_;
};

struct PartPlan {
  std::vector<uint64_t> starts;  ///< starts[0] = 0; each later start is where an event begins
  /// What puts a parser at an event of the events array, as the file's own start does:
  /// {"traceEvents":[ for the object form, [ for the array form.
  std::string prefix;
};

/// The text that puts a parser where a part after the first starts, chosen by the first
/// non-blank byte: {"traceEvents":[ for the object form, [ for the array form, "" (no
/// parts) for anything else; nullopt while the text is all blanks.
std::optional<std::string> part_prefix(std::string_view text);

/// The last place in text where a part may start (a line starting with '{' after a line
/// ending in ','), not before min_start; npos when there is none.
std::size_t last_part_start(std::string_view text, std::size_t min_start);

/// Up to `parts` parts of about equal size, none smaller than min_part bytes. Fewer (one:
/// parse sequentially) when the text has no suitable line starts, e.g. a single huge line.
PartPlan plan_parts(std::string_view text, unsigned parts, uint64_t min_part);

/// Parts per thread, handed out as threads free up: a thread on a slower core (a shared
/// host's neighbour, here one core ran at half speed for minutes at a time) takes fewer,
/// instead of the read waiting for its one half. Parts are joined as they are read, so
/// more of them hold little more memory (validate -j 2 of the 100 MB bench trace: 10 MB
/// with one a thread, 12-13 MB with 4 or 8; stats 28 MB with any).
constexpr unsigned kPartsPerThread = 4;

/// The cut plan of a regular, uncompressed file of at least 2 × min_part bytes for
/// `threads` threads, kPartsPerThread parts each (one part when it does not split: one
/// thread, smaller, compressed, not a file).
PartPlan plan_file(const Input& input, unsigned threads, uint64_t min_part);


/// What a caller does with the parts of a parallel read, of a file or of a stream (trace.cc
/// builds a model, validate.cc checks rules).
struct PartWork {
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
PartWork part_work(Loader& loader) {
  PartWork work;
  work.read = [&loader](std::size_t k, Source& text, const ReadOptions& options) { return loader.read(k, text, options); };
  work.join = [&loader](std::size_t k) { return loader.join(k); };
  work.read_rest = [&loader](std::size_t k, Source& text) { return loader.read_rest(k, text); };
  work.drop = [&loader](std::size_t k) { loader.drop(k); };
  return work;
}

/// One part's read: what the reader said, whether its source opened.
struct PartRead {
  ReadResult result;
  bool opened = false;
};

/// Opens the part of a text that starts at `begin` with `prefix` before it, offsets the
/// text's own (see Source::open_part); begin 0 with no prefix is the whole text. nullptr
/// when it cannot be read.
using PartOpener = std::function<std::unique_ptr<Source>(uint64_t begin, const std::string& prefix)>;
/// The parts of a regular file (input.splits()).
PartOpener file_parts(std::shared_ptr<Input> input);
/// The parts of a text in memory (tests and fuzzing: the joins without files or threads).
PartOpener text_parts(std::shared_ptr<const std::string> text);

/// Reads the parts of plan on `threads` threads (the calling one too) with work.read, each
/// from a source opened here with its share of the progress bar; parts are handed out in
/// order as threads free up, so a thread on a slower core takes fewer. Each part is joined
/// (work.join, in order, one at a time) by whichever thread finishes the last part it was
/// waiting for, while the other threads read on: the join is not a serial step after the
/// parse, and a joined part's own state is freed as the next ones are read. A cut or a join
/// that proves wrong at part k (the part before it did not stop exactly there, or the join
/// cannot be exact) ends the parts there: the rest of the file from part k's start is read
/// by work.read_rest into the state joined so far, as one pass would have. An input error
/// ends the read at its part; later parts are dropped (work.drop), unread when not started.
/// Returns the reads of the parts that count, in order (the last may be read_rest's);
/// empty when the first part did not open.
std::vector<PartRead> read_parts(const PartOpener& open, const PartPlan& plan, unsigned threads,
                                 const ProgressFn& progress, const PartWork& work);

/// The whole file's ReadResult from the first `count` parts' results.
ReadResult joined_result(const std::vector<PartRead>& reads, std::size_t count);

}  // namespace jqtrace
