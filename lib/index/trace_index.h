#pragma once
// The sidecar index (TRACE.jqx): what a range query needs from a trace without reading it.
//
// It holds the trace's model without its span tables and chain table (the "skeleton":
// lanes, names, instants, counters, the categories, the profile, the time range, the
// counts the warnings come from) and the events array cut into blocks of about
// kBlockBytes at event boundaries, each with the time its events cover. A scoped command
// resolves its scope on the skeleton, reads only the blocks whose time overlaps the
// range and those of their chains' publishes (as parts, like a parallel read) and grafts
// their spans and chains onto the skeleton: the model it analyses has every span that
// overlaps the range, in the order a full read gives, each with the category a full read
// gives it, and everything else exactly as a full read builds it.
//
// Format (version 5): "JQTRACEX" magic, a little-endian u32 version, the identity of the
// trace it describes (size, mtime, ctime, device, inode, CRC-32 of its first and last
// 64 KiB), the payload's
// length, the stored payload's length and CRC-32, then the stored payload: unsigned LEB128
// varints (signed values zigzagged) and length-prefixed strings, as they are (as long as
// the payload) or as a zlib stream (shorter: a compressed trace's). Version 1 always
// stored them as they are. man/jqtrace-index.1 documents it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flat_map.h"
#include "gzip_points.h"
#include "input.h"
#include "reader.h"
#include "scope.h"
#include "trace.h"

namespace jqtrace {

/// A run of whole events of the events array: [start, stop) in the (decoded) text, stop
/// being where the next block's first event starts (UINT64_MAX for the last block: its
/// read runs to the end of the file).
struct IndexBlock {
  uint64_t start = 0, stop = UINT64_MAX;
  int64_t lo_ns = 0, hi_ns = 0;  ///< every timed event's [ts, ts + dur] lies inside
  bool has_time = false;
  bool has_metadata = false;     ///< holds an M event (window keeps them all)
  /// Other blocks holding the publish of a chain some event here belongs to (window keeps
  /// a chain's publish with its events).
  std::vector<uint32_t> publish_blocks;
};

/// The trace an index describes: a different file, or the same one changed, differs here.
/// A rewrite in place that keeps the size and puts the mtime back (cp -p, rsync -t)
/// changes the ctime, which no tool can set; a copy made anywhere else has another inode.
struct FileIdentity {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;    ///< the inode's change time: every write, and every utimes(), moves it
  uint64_t device = 0, inode = 0;
  uint32_t head_crc = 0, tail_crc = 0;  ///< CRC-32 of the first and of the last 64 KiB
  bool operator==(const FileIdentity&) const = default;
};

/// The identity of the input (a regular file) as opened; nullopt for anything else.
std::optional<FileIdentity> identify_file(const Input& input);

struct TraceIndex {
  static constexpr uint32_t kVersion = 6;  // 6: a marker's absent arg told from arg 0 (issue 65); 5: instants measure their lanes' quiet and busy time (issue 51); 4: the trace's ctime, device and inode (issue 52); 3: attribution, guessed categories, reserved groups (issue 41)
  /// 256 KiB: a token's events on each lane of a 4 GB 8-lane trace fit in one or two
  /// blocks; 1 MiB blocks made a query parse ~3x more text (0.18-0.20 s against 0.13-0.14 s
  /// for window --marker token N) for an index 5% smaller.
  static constexpr uint64_t kBlockBytes = 256u << 10;
  FileIdentity identity;
  Compression compression = Compression::none;
  std::string prefix;  ///< puts a parser at an event of the array ({"traceEvents":[ or [)
  /// False when blocks cannot answer a range (B/E spans pair across blocks): only the
  /// skeleton is used.
  bool ranges = true;
  std::vector<IndexBlock> blocks;
  /// gzip: where decoding can start in the middle (about one a block); empty otherwise,
  /// and a block is then decoded from the start of the stream.
  std::vector<GzipPoint> points;
  Trace skeleton;

  /// The blocks whose events may overlap range, in file order.
  std::vector<uint32_t> blocks_overlapping(Range range) const;
  /// Those and the blocks with their chains' publishes (which give a chain its category),
  /// and with `metadata` every block with a metadata event: every event window chooses
  /// for range is in them.
  std::vector<uint32_t> blocks_for(Range range, bool metadata) const;
};

/// Records the blocks as the events go by (a tee of the model load; split per part).
class BlockRecorder final : public SplittableSink {
 public:
  /// Blocks of about block_bytes (tests cut small ones to exercise the joins).
  explicit BlockRecorder(uint64_t block_bytes = TraceIndex::kBlockBytes) : block_bytes_(std::max<uint64_t>(block_bytes, 1)) {}
  void on_event(const RawEvent& e, const Interner& names) override;
  std::unique_ptr<SplittableSink> fork() const override { return std::make_unique<BlockRecorder>(block_bytes_); }
  void absorb(SplittableSink& later, const std::vector<uint32_t>& names) override;
  /// The blocks, their stops and their publish links resolved (after the whole file), on
  /// up to `threads` threads.
  std::vector<IndexBlock> finish(unsigned threads = 1);
  bool saw_begin_end() const { return begin_end_; }
  /// After write_index: how many blocks it has and its size.
  std::size_t blocks() const { return written_blocks_; }
  std::size_t index_bytes() const { return written_bytes_; }
  void note_written(std::size_t blocks, std::size_t bytes) {
    written_blocks_ = blocks;
    written_bytes_ = bytes;
  }

 private:
  void close_block();
  uint64_t block_bytes_;
  uint32_t publish_name_ = Interner::kNone;
  std::vector<IndexBlock> blocks_;
  std::vector<std::vector<int64_t>> chains_;  ///< per block, the distinct chains of its events
  std::vector<int64_t> open_chains_;          ///< of the block being filled
  std::array<int64_t, 1024> recent_chains_{};   ///< chains already in open_chains_, by id mod 1024
  DenseFirstMap<uint32_t> publish_block_;     ///< chain → block of its (last) publish
  uint64_t open_end_ = 0;                     ///< end of the last event of the open block
  bool open_ = false, begin_end_ = false;
  std::size_t written_blocks_ = 0, written_bytes_ = 0;
};

/// Two sinks fed the same events: a load that feeds a command's own tee and the index's
/// BlockRecorder (--index).
class SinkPair final : public SplittableSink {
 public:
  SinkPair(SplittableSink* first, SplittableSink* second) : first_(first), second_(second) {}
  void on_event(const RawEvent& e, const Interner& names) override {
    first_->on_event(e, names);
    second_->on_event(e, names);
  }
  void on_profile(const JobqueProfile& p) override {
    first_->on_profile(p);
    second_->on_profile(p);
  }
  void on_window_record(const WindowRecord& w) override {
    first_->on_window_record(w);
    second_->on_window_record(w);
  }
  void on_root_member(RootMember m, uint64_t offset) override {
    first_->on_root_member(m, offset);
    second_->on_root_member(m, offset);
  }
  void bind(Interner& names) override {
    first_->bind(names);
    second_->bind(names);
  }
  /// The first sink's (the second, the recorder, checks nothing).
  DiagnosticSink* container_diagnostics() override { return first_->container_diagnostics(); }
  std::unique_ptr<SplittableSink> fork() const override;
  void absorb(SplittableSink& later, const std::vector<uint32_t>& names) override;

 private:
  SplittableSink* first_;
  SplittableSink* second_;
  std::unique_ptr<SplittableSink> owned_first_, owned_second_;  ///< a fork's
};

/// Opens the chosen blocks (ranges of index's blocks, in file order) of the trace input:
/// a plain file's by offset; a compressed file's decoded once from its start, each
/// block's text copied out as the decoder passes it.
BlockOpener block_opener(std::shared_ptr<Input> input, const TraceIndex& index, const std::vector<ByteRange>& blocks);

/// The index file's bytes for trace (its spans are not written) and blocks.
std::string serialize_index(const TraceIndex& index, const Trace& trace);
/// An index file around payload: the header (the identity of the trace, the lengths, the
/// CRC) and the payload as stored for a trace of that compression (deflated when that is
/// shorter, for a compressed trace). serialize_index writes its files through it.
std::string index_file_bytes(const FileIdentity& identity, const std::string& payload, Compression trace);
/// Reads an index file's bytes; false with *why when they are not an index of this
/// version (truncated, corrupt, another version).
bool parse_index(std::string_view bytes, TraceIndex* index, std::string* why);

/// Where the index of trace_path is written: beside it when that directory is writable,
/// else under $XDG_CACHE_HOME/jqtrace (default ~/.cache/jqtrace), named by the trace's
/// absolute path.
std::string index_path_for_writing(const std::string& trace_path);
/// Where an index of trace_path may be found, in order (beside it, then the cache).
std::vector<std::string> index_paths_for_reading(const std::string& trace_path);

/// Writes the index of the file input (already read into trace, blocks recorded by
/// recorder, gzip access points built by build_gzip_points), its last step on up to
/// `threads` threads. Returns the index's path, or "" with *why.
std::string write_index(const Input& input, const Trace& trace, const ReadResult& read, BlockRecorder& recorder,
                        std::vector<GzipPoint> points, unsigned threads, std::string* why);

/// The index of the trace input when one exists and describes the file as it was opened. nullopt when
/// there is none (silently) or with *warning when one exists but is stale, truncated,
/// corrupt or of another version.
std::optional<TraceIndex> read_fresh_index(const Input& trace, std::string* warning);

}  // namespace jqtrace
