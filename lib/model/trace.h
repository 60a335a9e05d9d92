#pragma once
// The trace model every analysis queries: lanes with their spans sorted by time, instants,
// counters, the jobqueProfile, and for jobque traces each span's category resolved from
// its chain's publish (SPEC §1.4) after the whole file was read.
//
// Storage is columnar (IntColumn): a jobque span costs ~15 bytes, so the whole model of a
// big jobque trace stays under a quarter of the file size.
#include <array>
#include <deque>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "diagnostic.h"
#include "flat_map.h"
#include "int_column.h"
#include "interner.h"
#include "jobque.h"
#include "numbers.h"
#include "profile.h"
#include "reader.h"
#include "source.h"

namespace jqtrace {

/// Spans of one lane: X events and paired B/E, sorted by ts; on equal ts the longer span
/// first (a parent before its children), then file order.
struct SpanTable {
  IntColumn ts;        ///< ns
  IntColumn dur;       ///< ns, >= 0
  IntColumn name;      ///< Interner id
  IntColumn cat;       ///< Interner id + 1 (0: no cat)
  IntColumn stage;     ///< jobque args (0 when absent)
  IntColumn arg;
  IntColumn chain;
  IntColumn category;  ///< index into Trace::categories (jobque traces)

  std::size_t size() const { return ts.size(); }
  int64_t end(std::size_t i) const { return ts[i] + dur[i]; }
  std::size_t bytes() const;
};

/// 192 bytes: a trace of a million one-span lanes is mostly its lanes (issue 17).
struct Lane {
  ProcessId pid, tid;
  SpanTable spans;
  uint64_t events = 0;      ///< every event on this lane, of any phase
  int64_t first_ts = 0;     ///< earliest ts of any event on the lane
  int64_t last_end = 0;     ///< latest end (ts + dur) of any event on the lane
  uint32_t thread_name = Interner::kNone;  ///< in Trace::thread_names (kNone: no thread_name metadata)
  bool has_time = false;
};

/// A deque, not a vector: a lane is ~200 bytes (its columns), and a trace of a million
/// one-span lanes would hold its lanes twice over each time a vector grew.
using Lanes = std::deque<Lane>;

/// A marker's args.arg where Markers and Unit hold none: its units are named by index.
inline constexpr int64_t kNoArg = INT64_MIN;
/// args.arg as the instants table keeps it: 0 when absent, one up when >= 0 (INT64_MAX
/// is kept as INT64_MAX - 1), a negative arg as it is. Absent costs no bytes.
inline int64_t stored_marker_arg(bool has_arg, int64_t arg) {
  if (!has_arg) return 0;
  if (arg < 0) return arg == kNoArg ? kNoArg + 1 : arg;
  return arg == INT64_MAX ? INT64_MAX : arg + 1;
}
/// The arg stored_marker_arg stored: kNoArg when the marker had none.
inline int64_t marker_arg(int64_t stored) { return stored > 0 ? stored - 1 : stored == 0 ? kNoArg : stored; }

/// Instant events (ph i/I), sorted by ts (ties keep file order).
///
/// Each instant also carries what its own lane was doing around it (measured after the read,
/// from the lane's spans, so that a model without span tables, an index's or window's, has
/// it too): the evidence of where markers stand in their units (SPEC §2 "Units").
struct InstantTable {
  IntColumn ts, lane, name, scope;
  /// args.arg as stored_marker_arg keeps it (marker_arg reads it): a marker without one is
  /// told from one whose arg is 0.
  IntColumn arg;
  /// ns from the end of the lane's last busy stretch before ts to ts (0 when ts is inside
  /// one or at its end); -1: the lane has no span before ts.
  IntColumn quiet_before;
  /// ns from ts to the start of the lane's next busy stretch (0 inside one); -1: none after.
  IntColumn quiet_after;
  /// ns the lane was busy (the union of its spans) before ts and after it.
  IntColumn busy_before, busy_after;
  std::size_t size() const { return ts.size(); }
};

/// Counter events (ph C), in file order.
struct CounterTable {
  IntColumn ts, lane;
  IntColumn name;  ///< Interner id, or -1 for a counter without a name
  std::size_t size() const { return ts.size(); }
};

/// What the chain's publish said (nstages 0: no publish was recorded).
struct ChainInfo {
  int32_t tag = 0;
  uint16_t category = 0;
  uint8_t nstages = 0;
  uint8_t publishes = 0;  ///< saturates at 255
};

struct Category {
  std::string name;
  std::string color;
  bool guessed = false;  ///< named by a chain's stage count, not by the trace (SPEC §1.4)
};

struct ProcessName {
  ProcessId pid;
  std::string name;
};

struct Trace {
  Interner names;
  Interner thread_names;        ///< the lanes' thread_name metadata (a lane keeps an id: 4 bytes, not a string's 32)
  JobqueProfile profile;
  WindowRecord window;          ///< set when jqtrace window wrote this trace
  bool jobque = false;          ///< SPEC §1.3: a profile, or publish/chunk spans with args.chain
  Lanes lanes;                  ///< in order of first appearance
  InstantTable instants;
  CounterTable counters;
  /// jobque: the reserved groups first (ReservedCategory in jobque.h), then the profile's
  /// categories, then the other names chains were given.
  std::vector<Category> categories;
  Attribution attribution = Attribution::none;  ///< how the chains were named (jobque traces)
  DenseFirstMap<ChainInfo> chains;
  std::vector<ProcessName> process_names;
  int64_t start_ns = 0;         ///< smallest ts
  int64_t end_ns = 0;           ///< largest ts + dur
  bool has_time = false;        ///< false for a trace with no timed event
  std::array<uint64_t, 128> phase_counts{};  ///< events by ph character
  uint64_t events = 0;          ///< every complete event object
  uint64_t malformed = 0;       ///< events skipped for missing or bad fields (see validate)
  uint64_t unclosed_begins = 0; ///< B events run to end_ns
  uint64_t unmatched_ends = 0;  ///< E events dropped
  /// The durations of every span added up (saturating past kMaxDurationSumNs). Every busy,
  /// wait, self and total time of an analysis is at most this, so when it is in range
  /// none of them can overflow.
  int64_t duration_sum_ns = 0;
  bool durations_too_large() const { return duration_sum_ns > kMaxDurationSumNs; }
  ReadResult read;

  /// Bytes held by the model's tables (the analyses' working set).
  std::size_t memory_bytes() const;
  std::string lane_label(std::size_t lane) const;
  /// The lane's thread name ("" when it has none).
  std::string_view thread_name(std::size_t lane) const {
    uint32_t id = lanes[lane].thread_name;
    return id == Interner::kNone ? std::string_view{} : thread_names.view(id);
  }
};

/// A lane of a jobque trace that stopped recording before the trace ended (its ring
/// filled: SPEC §1.3), and when (its last event's end).
struct StoppedLane {
  std::size_t lane = 0;
  int64_t stop_ns = 0;
};
/// Every such lane, in lane order (none for a generic, truncated or window trace).
std::vector<StoppedLane> lanes_stopped_early(const Trace& trace);
/// Whether lane l is one of them, and when it stopped.
bool lane_stopped_early(const Trace& trace, std::size_t l, int64_t* stop_ns);

/// SPEC §2: a jobque trace's caller, the lane with the highest numeric tid that has spans
/// (SIZE_MAX when none has).
std::size_t caller_lane(const Trace& trace);

struct LoadOptions {
  /// False: lanes, instants, counters, the profile, chains and the time range only, no
  /// span tables (window keeps its own index of where events are).
  bool spans = true;
  /// False: no chain table, no categories and no category column (gaps joins chains
  /// itself and needs neither; skipping them saves a pass and ~5 bytes a span).
  bool categories = true;
  /// Also sees every event, after the model does (may be null). Split per part when the
  /// file is parsed in parallel.
  SplittableSink* tee = nullptr;
  /// A compressed file's access points, taken as it is decoded (may be null; gzip_points.h):
  /// a gzip file's by the ISA-L decoder, a zstd file's at its frames.
  GzipPointHunt* gzip_points = nullptr;
  /// False: instants carry no measures of their lanes' activity (quiet_before and the rest
  /// stay empty). A read without span tables keeps each span's ts and dur until the read
  /// is done to measure them; validate needs none of it.
  bool instant_activity = true;
  /// After the read, the memory the load freed goes back to the system (cli/load.cc), so
  /// that an analysis on another thread does not peak on top of it. report keeps it: its
  /// peak is its own sections', and faulting the pages in again cost it ~0.02 s.
  bool release_freed = true;
};

/// Reads source into *trace and resolves the joins. Container-level problems go to diags
/// (may be null). The result's status says whether the input was usable.
ReadResult load_trace(Source& source, Trace* trace, DiagnosticSink* diags, const LoadOptions& options = {});

/// Loads an input in parts parsed on up to `threads` threads, joined into exactly the model
/// load_trace builds (same events and order, same diagnostics in file order, the same first
/// error): a regular, uncompressed file in parts cut at byte offsets, a compressed file or
/// standard input in parts cut from the decoded stream as it comes. False, with nothing
/// read, when the input does not split (too small, one huge line, not a regular file or
/// standard input); the caller then loads it with load_trace.
/// Parts are at least min_part_bytes long (smaller files are read in one pass).
constexpr uint64_t kDefaultMinPartBytes = 4u << 20;
bool load_trace_parallel(const std::shared_ptr<Input>& input, unsigned threads, Trace* trace, DiagnosticSink* diags,
                         const LoadOptions& options, const ProgressFn& progress, ReadResult* result,
                         uint64_t min_part_bytes = kDefaultMinPartBytes);

/// The same for a text in memory, cut into up to `parts` parts (of at least min_part_bytes)
/// read on `threads` threads: the joins of a file's parts without the file (tests and
/// fuzzing; one thread reads the parts one after another).
bool load_text_parallel(std::shared_ptr<const std::string> text, unsigned parts, unsigned threads, Trace* trace,
                        DiagnosticSink* diags, const LoadOptions& options, ReadResult* result,
                        uint64_t min_part_bytes);

/// [start, stop) of a file's text; stop UINT64_MAX: to the end of the file.
struct ByteRange {
  uint64_t start = 0, stop = UINT64_MAX;
};

/// Opens the text of block k (a run of whole events of a file, with the text that puts a
/// parser inside the events array before it; offsets the file's own). Called from several
/// threads, for increasing k.
using BlockOpener = std::function<std::unique_ptr<Source>(std::size_t k)>;

/// Loads the events of some runs of whole events of a file (blocks of its index, in file
/// order), each read as a part, on up to `threads` threads, joined in order into *partial
/// (options.tee sees their events once all of them are read). False when a block does not
/// open or does not end exactly where the next event starts (not the file the blocks were
/// cut from); then nothing was joined.
bool load_blocks(const std::vector<ByteRange>& blocks, const BlockOpener& open, unsigned threads,
                 const LoadOptions& options, Trace* partial, ReadResult* result);

/// Completes skeleton (a model of the whole file without span tables and chain table)
/// with what partial (blocks of the same file: those a range needs and those of their
/// chains' publishes) holds: its chains, named by the skeleton's categories, and its
/// spans, on the skeleton's lanes, each with its chain's category as a full read gives it.
/// (A chain's `publishes` counts only the publishes in the blocks.)
void graft_blocks(Trace* skeleton, Trace& partial, unsigned threads);

}  // namespace jqtrace
