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

/// The cut plan of a regular, uncompressed file of at least 2 × min_part bytes for
/// `threads` threads (one part when it does not split: one thread, smaller, gzip, not a file).
PartPlan plan_file(const std::string& path, unsigned threads, uint64_t min_part);


/// One part's read: what the reader said, whether its source opened.
struct PartRead {
  ReadResult result;
  bool opened = false;
};

/// Opens the part of a text that starts at `begin` with `prefix` before it, offsets the
/// text's own (see Source::open_part); begin 0 with no prefix is the whole text. nullptr
/// when it cannot be read.
using PartOpener = std::function<std::unique_ptr<Source>(uint64_t begin, const std::string& prefix)>;
/// The parts of a regular file.
PartOpener file_parts(const std::string& path);
/// The parts of a text in memory (tests and fuzzing: the joins without files or threads).
PartOpener text_parts(std::shared_ptr<const std::string> text);

/// Reads the parts of plan on `threads` threads (the calling one too), each part with
/// read(k, source, read_options); the sources are opened here, each with its share of the
/// progress bar. Returns the reads in part order.
std::vector<PartRead> read_parts(const PartOpener& open, const PartPlan& plan, unsigned threads,
                                 const ProgressFn& progress,
                                 const std::function<ReadResult(std::size_t, Source&, const ReadOptions&)>& read);

/// How many leading parts count: every part up to the first input error, when each part
/// before stopped exactly where the next starts. 0 when a cut proved wrong (or a part did
/// not open): read the file in one pass instead.
std::size_t parts_that_count(const std::vector<PartRead>& reads);

/// The whole file's ReadResult from the first `count` parts' results.
ReadResult joined_result(const std::vector<PartRead>& reads, std::size_t count);

}  // namespace jqtrace
