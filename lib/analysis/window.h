#pragma once
// `window`: cut the events of a range out of a trace, keeping each event's text as the
// file has it. One streaming pass records, per event, where its text is and when it
// happens (EventIndex: about 13 bytes an event); the scope is resolved after the pass (the
// markers that define it come last in jobque files); then only the chosen events' text is
// read again (TextRanges), by offset.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <map>
#include <tuple>
#include <unordered_map>

#include "flat_map.h"
#include "gzip_points.h"
#include "int_column.h"
#include "lane_index.h"
#include "reader.h"
#include "scope.h"

namespace jqtrace {

/// Where every event of the file is and when it happens, in file order.
class EventIndex final : public SplittableSink {
 public:
  enum Kind : uint8_t {
    kMetadata = 0,  ///< ph M: kept in every window (lane and process names)
    kSpan = 1,      ///< ph X, and B/E (as the pair's span): in a window when it overlaps it
    kPoint = 2,     ///< every other phase with a ts: in a window when ts is inside it
    kUntimed = 3,   ///< no usable ts: never in a window
  };
  struct Entry {
    std::size_t index;  ///< the event's number in the file
    uint64_t offset, end_offset;
    int64_t ts_ns, dur_ns;  ///< the event's own ts (and dur for X)
    Kind kind;
    std::pair<int64_t, int64_t> pair{0, -1};  ///< B/E: the pair's [begin, end]; else empty
    int64_t chain = 0;                         ///< jobque args.chain (0: none)
    uint32_t lane = 0;                         ///< the event's (pid, tid): an index into lanes()

    /// A B or E event: selected, and measured, by its pair's span.
    bool paired() const { return pair.second >= pair.first; }
    /// An X span (ph X with a dur): its own ts and dur are its span.
    bool x_span() const { return kind == kSpan && !paired(); }
  };

  void on_event(const RawEvent& e, const Interner& names) override;
  std::unique_ptr<SplittableSink> fork() const override { return std::make_unique<EventIndex>(); }
  /// Appends a later part's index: its event numbers follow these.
  void absorb(SplittableSink& later, const std::vector<uint32_t>& names) override;
  /// Pairs B and E per lane (SPEC §2; a B never closed runs to end_ns): each then belongs to
  /// the windows its pair's span overlaps, so a window never cuts a pair in half. An E that
  /// closes nothing belongs to no window.
  void finish(int64_t end_ns);
  std::size_t size() const { return kind_.size(); }
  /// The events' lanes, (pid, tid) in order of first appearance, their ids in the interner
  /// the events came with (the loaded model's). A window's writer counts the lanes it wrote
  /// from these: reading each written event's text again for it took 2 of the 4 s a window
  /// of a whole 200 MB trace took.
  const std::vector<std::pair<ProcessId, ProcessId>>& lanes() const { return lanes_; }

  /// The file-order number of the publish of chain, or SIZE_MAX.
  std::size_t publish_of(int64_t chain) const {
    const uint32_t* i = publish_of_.find(chain);
    return i ? static_cast<std::size_t>(*i) : SIZE_MAX;
  }

  /// Calls f(entry) for every event, in file order.
  template <typename F>
  void for_each(F&& f) const {
    for_each_while([&](const Entry& e) {
      f(e);
      return true;
    });
  }
  /// Calls f(entry) for the events in file order until it returns false.
  template <typename F>
  void for_each_while(F&& f) const {
    uint64_t offset = first_offset_;
    for (std::size_t i = 0; i < size(); ++i) {
      Entry e;
      e.index = i;
      e.chain = chain_[i];
      e.offset = offset + static_cast<uint64_t>(gap_[i]);
      e.end_offset = e.offset + static_cast<uint64_t>(length_[i]);
      e.ts_ns = ts_[i];
      e.dur_ns = dur_[i];
      e.kind = static_cast<Kind>(kind_[i]);
      e.lane = static_cast<uint32_t>(lane_[i]);
      auto pair = pair_span_.find(i);
      if (pair != pair_span_.end()) e.pair = pair->second;
      offset = e.end_offset;
      if (!f(e)) return;
    }
  }

 private:
  uint64_t first_offset_ = 0;  ///< where the first event starts; gaps count from there
  uint64_t last_end_ = 0;
  uint32_t publish_name_ = Interner::kNone;
  /// The lane numbered for (pid, tid), numbering it when it is new (events come in runs of
  /// one lane: the last one is checked first).
  uint32_t lane_of(const ProcessId& pid, const ProcessId& tid);

  IntColumn gap_, length_, ts_, dur_, kind_, chain_, lane_;
  std::vector<std::pair<ProcessId, ProcessId>> lanes_;
  LaneIndex lane_index_;
  uint32_t last_lane_ = UINT32_MAX;
  DenseFirstMap<uint32_t> publish_of_;  ///< chain → its publish's event number (4 bytes: < 4G events)
  /// B and E events, rare in jobque traces: kept aside in file order and paired by finish().
  struct BeginEnd {
    std::size_t index;
    ProcessId pid, tid;
    int64_t ts;
    bool begin;
  };
  std::vector<BeginEnd> begin_ends_;
  std::unordered_map<std::size_t, std::pair<int64_t, int64_t>> pair_span_;  ///< by entry number
};

/// The events of the index that belong in a window over range, in file order: metadata
/// always; spans overlapping it (B/E by their pair, unmatched E never); other timed events
/// inside it; and the publish of every chain with an event there (wherever it is: it carries
/// the chain's stage count and tag, so the window's categories stay those of the trace).
///
/// The choice is a bit an event of the index: a window of a whole trace kept each chosen
/// event's entry (72 bytes, more than the event's text: 1.36 times the file's size in memory
/// for a window of all of a 68 MB trace), so the writers walk the index again instead.
class WindowSelection {
 public:
  explicit WindowSelection(std::size_t events) : bits_((events + 63) / 64, 0) {}
  void choose(std::size_t i) {
    uint64_t bit = uint64_t{1} << (i % 64);
    count_ += (bits_[i / 64] & bit) == 0;
    bits_[i / 64] |= bit;
  }
  bool chosen(std::size_t i) const { return (bits_[i / 64] >> (i % 64)) & 1; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// Calls f(entry) for the chosen events of index (the one chosen from), in file order.
  template <typename F>
  void for_each(const EventIndex& index, F&& f) const {
    index.for_each_while([&](const EventIndex::Entry& e) {
      if (chosen(e.index)) f(e);
      return true;
    });
  }
  /// The chosen events' entries, in file order (for tests: a large window is walked).
  std::vector<EventIndex::Entry> entries(const EventIndex& index) const;
  /// Where the first chosen event's text starts; UINT64_MAX when none is chosen.
  uint64_t first_offset(const EventIndex& index) const;

 private:
  std::vector<uint64_t> bits_;
  std::size_t count_ = 0;
};
WindowSelection select_window(const EventIndex& index, Range range);

/// Reads byte ranges of a file's (decompressed) text again, in increasing order.
class TextRanges {
 public:
  /// A plain file is read with pread at the offsets; a gzip file is inflated again from
  /// the access point before each range (points: an index's, or the load's), a zstd file
  /// from the frame before it (points: the load's, at its frames), else from the start.
  /// Null with *err when the input is not a regular file. points must outlive the reader.
  static std::unique_ptr<TextRanges> open(const std::shared_ptr<Input>& input, std::string* err,
                                          const std::vector<GzipPoint>* points = nullptr);
  virtual ~TextRanges() = default;
  /// Appends [offset, end) to *out; offsets must not decrease between calls.
  virtual bool read(uint64_t offset, uint64_t end, std::string* out) = 0;
};

/// The text of events, read back for their fields (a window's CSV and compact rows) a batch
/// at a time: one parse of "[text,text,...]" with names of its own. One parse an event, each
/// with its own source and names, cost twice the parse of the whole trace (a CSV window of a
/// whole 200 MB trace took 3-4 s).
class EventTexts {
 public:
  /// Events a caller gathers before reading them back: a parse's own cost is ~10 events'
  /// worth, and a batch's text, events and source are held at once (4,096 took a CSV window
  /// of a whole 20 MB trace to 4.6 MB over a token's window, past the 4 MB memory_bounds allows).
  static constexpr std::size_t kBatch = 1024;
  void add(std::string_view event_text);
  std::size_t size() const { return starts_.size(); }
  /// f(i, event, names) for the i-th text added, in order, with the names its ids are in.
  /// A text that does not read back as one event where it was put (its file changed since
  /// it was indexed) makes each be read alone, and one that does not read is left out.
  void read_back(const std::function<void(std::size_t, const RawEvent&, const Interner&)>& f) const;
  void clear() {
    json_.clear();
    starts_.clear();
  }

 private:
  std::string json_;                 ///< "[" and the texts, comma-separated (no "]" yet)
  std::vector<std::size_t> starts_;  ///< where each text starts in json_
};

/// Where an object's top-level member `key` is in the object's text: its key's opening quote
/// and its value [value_at, value_end) (an object or array whole); the last one when the key
/// repeats, as the reader keeps the last. Escapes in keys are decoded as the reader decodes them.
struct MemberPlace {
  std::size_t key_at = std::string::npos, value_at = 0, value_end = 0;
  bool found() const { return key_at != std::string::npos; }
};
MemberPlace find_top_level_member(std::string_view object_text, std::string_view key);

/// Replaces the number of the top-level member `key` of a JSON object's text (the
/// event's own "ts", not one inside args). False when the object has no such member.
bool replace_top_level_number(std::string& object_text, std::string_view key, std::string_view number);

}  // namespace jqtrace
