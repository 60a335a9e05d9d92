#include "stream_parts.h"

#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "decoders.h"
#include "timings.h"

namespace jqtrace {
namespace {

/// Bytes without the zero-filling of std::string::resize: the decoder writes them all.
class TextBuffer {
 public:
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  char* data() { return bytes_.get(); }
  const char* data() const { return bytes_.get(); }
  std::string_view view() const { return {bytes_.get(), size_}; }
  void clear() { size_ = 0; }
  void set_size(std::size_t n) { size_ = n; }
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    std::unique_ptr<char[]> bigger(new char[n]);
    if (size_) std::memcpy(bigger.get(), bytes_.get(), size_);
    bytes_ = std::move(bigger);
    capacity_ = n;
  }

 private:
  std::unique_ptr<char[]> bytes_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

/// A stretch of the decoded text. A part is one chunk, or (once no cut is found) every
/// chunk from its first to the end of the input.
struct Chunk {
  TextBuffer text;
  uint64_t offset = 0;  ///< of text[0] in the whole text
  std::size_t part = 0;
  bool ends_part = false;   ///< a cut follows: the part's parse reads the '{' after it
  bool ends_input = false;  ///< the input ended after this chunk
};

struct PartInfo {
  std::size_t first_chunk = 0;
  uint64_t start = 0;
  uint64_t stop_at = UINT64_MAX;  ///< where the next part starts (UINT64_MAX: the last part)
  /// No cut after it: the part runs to the end of the input and is read into the state
  /// joined so far, once every part before it is joined (see read_rest).
  bool rest = false;
  enum class State { waiting, parsing, done } state = State::waiting;
  ReadResult result;
  bool dropped = false;
};

/// Line positions for stdin: recorded by the decoding thread, asked for by any.
class SharedLines {
 public:
  void add(const char* data, std::size_t size, uint64_t offset) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.add(data, size, offset);
  }
  TextPosition locate(uint64_t offset) {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_.locate(offset);
  }

 private:
  std::mutex mutex_;
  RecordingLineIndex lines_;
};

class SharedLinesView final : public LineIndex {
 public:
  explicit SharedLinesView(std::shared_ptr<SharedLines> lines) : lines_(std::move(lines)) {}
  void add(const char*, std::size_t, uint64_t) override {}  // the decoding thread records them
  TextPosition locate(uint64_t offset) override { return lines_->locate(offset); }

 private:
  std::shared_ptr<SharedLines> lines_;
};

class StreamSplitter {
 public:
  StreamSplitter(StreamInput& input, unsigned threads, uint64_t part_bytes, const ProgressFn& progress,
                 const PartWork& work)
      : text_(std::move(input.text)), name_(input.input.name()), total_size_(input.input.size()),
        compression_(input.input.compression()), reopen_(input.input.text_again()),
        threads_(std::max(threads, 1u)), part_bytes_(std::clamp<uint64_t>(part_bytes, 64, kStreamPartBytes)),
        progress_(progress),
        work_(work) {
    if (!reopen_) recorded_ = std::make_shared<SharedLines>();
  }

  StreamRead run() {
    std::thread producer([this] { guarded([this] { produce(); }); });
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < threads_; ++t) helpers.emplace_back([this] { guarded([this] { parse_parts(); }); });
    guarded([this] { parse_parts(); });
    for (std::thread& h : helpers) h.join();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;  // a producer waiting for room stops
    }
    changed_.notify_all();
    producer.join();
    if (failure_) std::rethrow_exception(failure_);
    StreamRead out;
    out.opened = true;
    out.reads = std::move(counted_);
    out.lines = line_index();
    return out;
  }

 private:
  /// Runs a thread's body; an exception (std::bad_alloc, mostly) stops every thread and is
  /// thrown again by run() once they are joined: escaping a thread, it would end the
  /// process with a signal.
  template <typename F>
  void guarded(F&& body) {
    try {
      body();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
      finished_ = true;      // the decoding thread stops
      if (end_ == kNoEnd) end_ = 0;  // the parsing threads stop; every parse is dropped
      changed_.notify_all();
    }
  }

  // ---- the decoding thread ----

  void produce() {
    TextBuffer text = spare_buffer();
    uint64_t offset = 0;
    bool prefix_known = false;
    std::size_t target = part_bytes_;
    for (;;) {
      if (!wait_for_room()) return;
      long n = fill(&text, offset, target);
      if (n <= 0) {
        end_input(std::move(text), offset, n);
        return;
      }
      if (!prefix_known) prefix_known = choose_prefix(text.view());
      // Looking further, the text doubles: grown by a part at a time, a long run with no
      // cut (a 300 MB string) was copied over and over (6.2 s, then 0.4 s).
      if (!prefix_known && text.size() < kMaxSearch) {  // only blanks so far
        target = text.size() + std::max<std::size_t>(part_bytes_, text.size());
        continue;
      }
      if (!prefix_known) cutting_ = false;
      std::size_t cut = std::string_view::npos;
      if (cutting_) {
        std::size_t min_start = offset >= prefix_.size() ? 1 : prefix_.size() - offset;
        cut = last_part_start(text.view(), min_start);
        if (cut == std::string_view::npos && text.size() < kMaxSearch) {  // a very long event: look further
          target = text.size() + std::max<std::size_t>(part_bytes_, text.size());
          continue;
        }
        if (cut == std::string_view::npos) cutting_ = false;  // no cut in sight
      }
      TextBuffer next = spare_buffer();
      std::size_t size = text.size();
      if (cut != std::string_view::npos) {  // the text after the cut starts the next part
        next.reserve(std::max<std::size_t>(part_bytes_, size - cut));
        std::memcpy(next.data(), text.data() + cut, size - cut);
        next.set_size(size - cut);
        text.set_size(size = cut);
      }
      publish(std::move(text), offset, cut != std::string_view::npos);  // else: the rest of the input is one part
      offset += size;
      text = std::move(next);
      target = part_bytes_;
    }
  }

  /// Reads until text holds target bytes; the last read's answer (> 0 unless it ended).
  long fill(TextBuffer* text, uint64_t offset, std::size_t target) {
    long n = 1;
    std::size_t had = text->size();
    text->reserve(target);
    while (text->size() < target) {
      n = text_->read(text->data() + text->size(), target - text->size());
      if (n <= 0) break;
      text->set_size(text->size() + static_cast<std::size_t>(n));
    }
    if (recorded_ && text->size() > had) recorded_->add(text->data() + had, text->size() - had, offset + had);
    if (progress_) progress_(text_->consumed(), total_size_);
    return n;
  }

  /// A buffer freed by a joined part, if there is one: the same pages serve again, instead
  /// of fresh ones the kernel must fault in and zero (which cost more than the decoding).
  TextBuffer spare_buffer() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.empty()) return TextBuffer{};
    TextBuffer b = std::move(spare_.back());
    spare_.pop_back();
    b.clear();
    return b;
  }

  /// Chooses the parts' prefix (part_prefix) once the text holds a non-blank byte; no cuts
  /// when it is not a trace. False while only blanks have been read.
  bool choose_prefix(std::string_view text) {
    std::optional<std::string> prefix = part_prefix(text);
    if (!prefix) return false;
    prefix_ = *prefix;
    if (prefix_.empty()) cutting_ = false;
    return true;
  }

  bool wait_for_room() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return held_bytes_ < max_held_bytes() || finished_; });
    return !finished_;
  }
  /// Text decoded and not yet joined: a part for each parsing thread and two ahead (the
  /// decoding thread waits when it has more).
  uint64_t max_held_bytes() const { return part_bytes_ * (threads_ + 2); }


  void publish(TextBuffer text, uint64_t offset, bool ends_part) {
    std::lock_guard<std::mutex> lock(mutex_);
    add_chunk(std::move(text), offset, ends_part, false);
  }

  void end_input(TextBuffer text, uint64_t offset, long status) {
    std::lock_guard<std::mutex> lock(mutex_);
    end_status_ = status < 0 ? -1 : 0;
    end_error_ = text_->error();
    end_cut_short_ = text_->cut_short();
    input_ended_ = true;
    add_chunk(std::move(text), offset, true, true);
  }

  /// Appends a chunk (mutex held): a new part when the last chunk ended its part.
  void add_chunk(TextBuffer text, uint64_t offset, bool ends_part, bool ends_input) {
    auto chunk = std::make_shared<Chunk>();
    bool new_part = chunks_.empty() || last_chunk_ended_part_;
    last_chunk_ended_part_ = ends_part || ends_input;
    if (new_part) {
      PartInfo p;
      p.first_chunk = chunks_.size();
      p.start = offset;
      if (ends_part && !ends_input) p.stop_at = offset + text.size();
      p.rest = !ends_part && !ends_input;
      parts_.push_back(p);
    }
    chunk->part = parts_.size() - 1;
    chunk->offset = offset;
    chunk->ends_part = ends_part || ends_input;
    chunk->ends_input = ends_input;
    held_bytes_ += text.size();
    chunk->text = std::move(text);
    chunks_.push_back(std::move(chunk));
    changed_.notify_all();
  }

  // ---- the parsing threads ----

  void parse_parts() {
    for (;;) {
      std::size_t k;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return over() || next_to_parse_ < parts_.size(); });
        if (over()) return;
        k = next_to_parse_++;
        parts_[k].state = PartInfo::State::parsing;
        if (parts_[k].rest) {
          read_rest_part(k, lock);
          continue;
        }
      }
      ReadResult r = parse_part(k);
      std::unique_lock<std::mutex> lock(mutex_);
      parts_[k].result = std::move(r);
      parts_[k].state = PartInfo::State::done;
      if (beyond_end(k)) drop_locked(k, lock);
      join_ready(lock);
      changed_.notify_all();
    }
  }

  /// Nothing is left to parse in parts: the input ended and every part was taken, or the
  /// read ended early (an input error, or the rest is read in one pass).
  bool over() const {
    if (end_ != kNoEnd) return true;
    return input_ended_ && next_to_parse_ >= parts_.size();
  }
  /// Part k comes after the part where the read ended: its parse does not count.
  bool beyond_end(std::size_t k) const { return end_ != kNoEnd && k >= end_; }

  ReadResult parse_part(std::size_t k) {
    PartInfo part = parts_at(k);
    std::unique_ptr<RawInput> in = std::make_unique<ChunkInput>(*this, part.first_chunk, false);
    uint64_t first_offset = part.start;
    if (k > 0) {
      in = prefixed_input(std::move(in), prefix_);
      first_offset -= prefix_.size();
    }
    Source src(std::move(in), name_, total_size_, line_index(), first_offset);
    src.set_compression(compression_);
    ReadOptions options;
    options.stop_at = part.stop_at;
    return work_.read(k, src, options);
  }

  PartInfo parts_at(std::size_t k) {
    std::lock_guard<std::mutex> lock(mutex_);
    return parts_[k];
  }

  /// Joins every parsed part in order, from whichever thread finished one (mutex held; it
  /// is let go around the caller's join). One thread at a time joins.
  void join_ready(std::unique_lock<std::mutex>& lock) {
    if (joining_) return;
    joining_ = true;
    while (end_ == kNoEnd && next_to_join_ < parts_.size() && parts_[next_to_join_].state == PartInfo::State::done) {
      std::size_t k = next_to_join_;
      const ReadResult& r = parts_[k].result;
      bool last = parts_[k].stop_at == UINT64_MAX;
      bool error = r.status == ReadStatus::input_error;
      if (!last && !error && r.stop != ReadResult::Stop::at_boundary) {
        read_rest_from(k, lock);  // the cut after part k was not an event's start
        break;
      }
      lock.unlock();
      bool joined = work_.join(k);
      lock.lock();
      if (!joined) {
        read_rest_from(k, lock);
        break;
      }
      counted_.push_back(PartRead{parts_[k].result, true});
      release_part(k);
      ++next_to_join_;
      if (last || error) {
        end_at(k + 1, lock);
        break;
      }
    }
    joining_ = false;
  }

  /// Ends the parts at part `end`: the parses of later parts are dropped (those still
  /// running drop theirs when done).
  void end_at(std::size_t end, std::unique_lock<std::mutex>& lock) {
    end_ = end;
    for (std::size_t k = end; k < parts_.size(); ++k)
      if (parts_[k].state == PartInfo::State::done) drop_locked(k, lock);
    changed_.notify_all();
  }

  void drop_locked(std::size_t k, std::unique_lock<std::mutex>& lock) {
    if (parts_[k].dropped) return;
    parts_[k].dropped = true;
    lock.unlock();
    work_.drop(k);
    lock.lock();
  }

  /// Reads a part that runs to the end of the input, once every part before it is joined.
  void read_rest_part(std::size_t k, std::unique_lock<std::mutex>& lock) {
    changed_.wait(lock, [&] { return next_to_join_ == k || end_ != kNoEnd; });
    if (end_ != kNoEnd) return;  // a part before it ended the read, or is read to the end
    end_ = k + 1;
    read_rest(k, lock);
  }

  /// Reads the text from part k's start to the end of the input, after a cut or a join
  /// proved wrong there: the parse of k and of every part after it is dropped.
  void read_rest_from(std::size_t k, std::unique_lock<std::mutex>& lock) {
    end_at(k, lock);
    read_rest(k, lock);
  }

  /// Reads the text from part k's start to the end of the input on this thread, into the
  /// state joined so far (mutex held, let go while reading).
  void read_rest(std::size_t k, std::unique_lock<std::mutex>& lock) {
    changed_.notify_all();  // the other parsing threads stop
    std::size_t first_chunk = parts_[k].first_chunk;
    uint64_t first_offset = parts_[k].start;
    lock.unlock();
    std::unique_ptr<RawInput> in = std::make_unique<ChunkInput>(*this, first_chunk, true);
    if (k > 0) {
      in = prefixed_input(std::move(in), prefix_);
      first_offset -= prefix_.size();
    }
    ReadResult r;
    {
      Source src(std::move(in), name_, total_size_, line_index(), first_offset);
      src.set_compression(compression_);
      if (k > 0) {
        r = work_.read_rest(k, src);
      } else {  // nothing joined yet: the whole input is one part
        r = work_.read(0, src, ReadOptions{});
        work_.join(0);
      }
    }
    lock.lock();
    counted_.push_back(PartRead{std::move(r), true});
  }

  /// Frees the text of part k's chunks (mutex held).
  void release_part(std::size_t k) {
    for (std::size_t c = parts_[k].first_chunk; c < chunks_.size() && chunks_[c] && chunks_[c]->part == k; ++c)
      release_chunk(c);
  }
  void release_chunk(std::size_t c) {
    if (!chunks_[c]) return;
    held_bytes_ -= chunks_[c]->text.size();
    // Reused only when nobody reads it (a dropped part's parse may still): else freed
    // when the last reader lets go.
    // (No more buffers are ever spare than were held at once: a few parts' worth.)
    TextBuffer& text = chunks_[c]->text;
    if (chunks_[c].use_count() == 1 && text.capacity() <= 2 * part_bytes_) spare_.push_back(std::move(text));
    chunks_[c].reset();
    changed_.notify_all();
  }

  std::unique_ptr<LineIndex> line_index() const {
    if (recorded_) return std::make_unique<SharedLinesView>(recorded_);
    return std::make_unique<ReopeningLineIndex>(reopen_);
  }

  /// A part's text (its chunks, then the '{' at the cut after it) or, for the rest of the
  /// input, every chunk from the first to the end (without the '{'s: they are the next
  /// chunk's first byte).
  class ChunkInput final : public RawInput {
   public:
    ChunkInput(StreamSplitter& s, std::size_t first_chunk, bool to_the_end)
        : s_(s), next_(first_chunk), to_the_end_(to_the_end) {}
    long read(char* out, std::size_t size) override {
      for (;;) {
        if (chunk_ && taken_ < chunk_->text.size()) {
          std::size_t n = std::min(size, chunk_->text.size() - taken_);
          std::memcpy(out, chunk_->text.data() + taken_, n);
          taken_ += n;
          return static_cast<long>(n);
        }
        if (chunk_ && chunk_->ends_input) return end_of_input();
        if (chunk_ && chunk_->ends_part && !to_the_end_) {
          if (brace_given_) return 0;
          brace_given_ = true;  // the next part's first byte, where this part's parse stops
          *out = '{';
          return 1;
        }
        if (!next_chunk()) return abandon();
      }
    }
    const std::string& error() const override { return error_; }
    uint64_t consumed() const override { return 0; }
    bool cut_short() const override { return cut_short_; }

   private:
    /// Takes the next chunk, waiting for the decoding thread; when reading to the end,
    /// frees the one passed. False when there is nothing more to read.
    bool next_chunk() {
      std::unique_lock<std::mutex> lock(s_.mutex_);
      if (chunk_) {
        if (!to_the_end_) return false;  // a part's text is one chunk
        chunk_.reset();
        s_.release_chunk(next_ - 1);  // read to the end: nothing reads it again
      }
      s_.changed_.wait(lock, [&] { return next_ < s_.chunks_.size() || s_.failure_; });
      if (next_ >= s_.chunks_.size() || s_.failure_) return false;
      chunk_ = s_.chunks_[next_++];
      taken_ = 0;
      return chunk_ != nullptr;
    }
    long end_of_input() {
      std::lock_guard<std::mutex> lock(s_.mutex_);
      error_ = s_.end_error_;
      cut_short_ = s_.end_cut_short_;
      return s_.end_status_;
    }
    long abandon() {
      error_ = "(this part's read no longer counts)";
      return -1;
    }

    StreamSplitter& s_;
    std::size_t next_;
    bool to_the_end_;
    std::shared_ptr<Chunk> chunk_;
    std::size_t taken_ = 0;
    bool brace_given_ = false;
    std::string error_;
    bool cut_short_ = false;
  };

  static constexpr std::size_t kNoEnd = SIZE_MAX;
  /// How far the decoding thread looks for a cut before it gives up cutting.
  static constexpr std::size_t kMaxSearch = 64u << 20;

  std::unique_ptr<RawInput> text_;  // the decoding thread's
  std::string name_;
  uint64_t total_size_;
  Compression compression_;
  std::function<std::unique_ptr<RawInput>()> reopen_;
  std::shared_ptr<SharedLines> recorded_;
  unsigned threads_;
  uint64_t part_bytes_;
  const ProgressFn& progress_;
  const PartWork& work_;
  std::string prefix_;  // set by the decoding thread before the first cut; read after it
  bool cutting_ = true;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::shared_ptr<Chunk>> chunks_;
  std::vector<TextBuffer> spare_;
  std::vector<PartInfo> parts_;
  uint64_t held_bytes_ = 0;
  long end_status_ = 0;
  std::string end_error_;
  bool end_cut_short_ = false;
  bool input_ended_ = false;
  bool last_chunk_ended_part_ = false;  // (the chunk itself may be freed already)
  std::size_t next_to_parse_ = 0;
  std::size_t next_to_join_ = 0;
  bool joining_ = false;
  std::size_t end_ = kNoEnd;
  bool finished_ = false;
  std::exception_ptr failure_;  ///< the first exception of any thread: everything stops
  std::vector<PartRead> counted_;
};

}  // namespace

StreamRead read_stream_parts(StreamInput& input, unsigned threads, uint64_t part_bytes, const ProgressFn& progress,
                             const PartWork& work) {
  PhaseClock clock("parse", PhaseKind::scales);  // and the joins, as the parts come
  StreamSplitter splitter(input, threads, part_bytes, progress, work);
  return splitter.run();
}

std::unique_ptr<StreamInput> open_stream_input(Input& input, GzipPointHunt* hunt) {
  if (input.splits() || (!input.is_stdin() && !input.regular())) return nullptr;
  auto text = input.text(hunt);
  if (!text) return nullptr;
  return std::make_unique<StreamInput>(StreamInput{input, std::move(text)});
}

}  // namespace jqtrace
