#pragma once
// Byte sources: a path, "-" for stdin, or memory; gzip and zstd are recognised by their
// magic bytes and decoded on the fly (decoders.h).
//
// Source is a RapidJSON input stream (Peek/Take/Tell) and can turn a byte offset into a
// line:column (LineIndex: free for files, which are read again on the error path; about a
// byte per line for stdin, which cannot be).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "decoders.h"
#include "input.h"
#include "line_index.h"
#include "raw_input.h"

namespace jqtrace {

/// 1-based line and column (column counts bytes). line == 0 means "unknown".
struct TextPosition {
  uint64_t line = 0;
  uint64_t column = 0;
};

/// Called after every buffer refill: bytes consumed from the file (compressed bytes for
/// gzip) and the file size (0 when unknown, e.g. stdin).
using ProgressFn = std::function<void(uint64_t consumed, uint64_t total)>;

/// The text in windows that the parser may write into: RapidJSON's in-situ mode decodes
/// strings where they lie and hands numbers over as pointers into the text, instead of
/// copying every character onto its own stack (a third of a parse's instructions).
///
/// A window is read(2) into a private buffer and ends at a safe cut: just after a newline,
/// or, for a line longer than the window, just after a bracket, comma or colon outside any
/// string. No string or number spans a cut in text the parser accepts, so nothing the
/// parser still points into moves when the bytes after the cut are carried to the front of
/// the buffer for the next window. Memory stays bounded whatever the input size: about a
/// window (plus zlib's state for gzip, and the longest string of the text).
class Source {
 public:
  using Ch = char;
  /// Bytes a window aims for: big enough that read(2) calls cost nothing, small enough to
  /// stay in a core's cache while the parser works through them.
  static constexpr std::size_t kWindow = 256 * 1024;

  /// The input's text from its start. A gzip or zstd file takes access points into hunt
  /// (may be null) as it is decoded. nullptr when the input is a stream read already.
  static std::unique_ptr<Source> open(Input& input, GzipPointHunt* hunt = nullptr);
  /// Input::open, then the above (tests, and tools that read one file once). On failure
  /// returns nullptr with a message in *err.
  static std::unique_ptr<Source> open(const std::string& path, std::string* err, GzipPointHunt* hunt = nullptr);
  /// A source over bytes held in memory (tests); gzip magic is honoured here too.
  static std::unique_ptr<Source> from_string(std::string bytes, std::string name = "<memory>");
  /// One part of a regular, uncompressed file, for parallel parsing: `prefix` (text that
  /// puts the parser where the part starts, e.g. {"traceEvents":[ ) and then the file from
  /// `begin` to its end. Offsets (Tell, positions) are the file's own: the prefix takes the
  /// offsets just before `begin`. nullptr when the input is not such a file, or is shorter.
  static std::unique_ptr<Source> open_part(const Input& input, uint64_t begin, const std::string& prefix);
  /// The same for a text in memory (uncompressed); nullptr when begin is past its end or
  /// the prefix longer than begin.
  static std::unique_ptr<Source> text_part(std::shared_ptr<const std::string> text, uint64_t begin,
                                           const std::string& prefix);

  /// first_offset: the file offset of the input's first byte.
  /// window: the first window's size (it grows for a longer token); less than kWindow for
  /// text known to be short, such as one event read back by window.
  Source(std::unique_ptr<RawInput> input, std::string name, uint64_t total_size, std::unique_ptr<LineIndex> lines,
         uint64_t first_offset = 0, std::size_t window = kWindow);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  // RapidJSON input stream concept, with the output half that in-situ parsing writes
  // decoded strings through (always behind the read position, inside the window).
  Ch Peek() const { return *current_; }
  Ch Take() {
    Ch c = *current_;
    if (current_ < last_) ++current_;
    else next_window();
    return c;
  }
  /// The byte Take() returned last ('\0' before the first): the reader learns from it
  /// whether the parser took a closing bracket yet.
  Ch Previous() const { return current_ > buffer_.get() ? current_[-1] : previous_; }
  /// The file offset of a pointer into the current window.
  uint64_t offset_of(const char* p) const { return window_offset_ + static_cast<uint64_t>(p - buffer_.get()); }
  std::size_t Tell() const { return static_cast<std::size_t>(window_offset_ + static_cast<uint64_t>(current_ - buffer_.get())); }
  Ch* PutBegin() { return put_ = current_; }
  void Put(Ch c) { *put_++ = c; }
  void Flush() {}
  std::size_t PutEnd(Ch* begin) { return static_cast<std::size_t>(put_ - begin); }

  /// Line and column of a byte offset (the error path: see LineIndex for the cost).
  TextPosition locate(uint64_t offset);

  /// True when every byte has been read.
  bool at_end() const { return eof_; }
  /// Total bytes of (decompressed) text read so far.
  uint64_t text_bytes() const { return window_offset_ + filled_; }
  /// A read or decompression error, empty when none.
  const std::string& read_error() const { return read_error_; }
  /// True when a compressed input ended early: the text read is a prefix of the whole,
  /// which the reader then treats as a truncated trace (not as an unreadable file).
  bool cut_short() const { return cut_short_; }
  /// Bytes of the window buffer: it grows only for a string (or a run of text with no safe
  /// cut) longer than it.
  std::size_t buffer_bytes() const { return capacity_; }
  /// The longest run of text without a safe cut the window may grow to hold, i.e. the
  /// longest string: RapidJSON 1.1.0 passes string lengths in 32 bits, so past 4 GiB they
  /// would wrap. Beyond it the read stops with read_error() and token_too_long_at().
  void set_max_token_bytes(uint64_t bytes) { max_token_bytes_ = bytes; }
  /// Where the window held the text too long to take (UINT64_MAX: nothing was).
  uint64_t token_too_long_at() const { return token_too_long_at_; }
  /// The offset of the first NUL byte read so far (UINT64_MAX: none).
  uint64_t first_nul() const { return first_nul_; }
  const std::string& name() const { return name_; }
  /// The offset of the input's first byte: 0 for a whole file or text, else a part's,
  /// whose first bytes are a prefix standing in for the text before it.
  uint64_t first_offset() const { return first_offset_; }
  /// True when the text is decoded from gzip or zstd (it cannot be read from an offset).
  bool compressed() const { return compression_ != Compression::none; }
  Compression compression() const { return compression_; }
  /// For a source over text decoded elsewhere (a part of a compressed stream).
  void set_compression(Compression c) { compression_ = c; }
  uint64_t total_size() const { return total_size_; }
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }

 private:
  void next_window();
  /// Reads more text after the filled bytes; false at the end of the input (or an error).
  bool read_more();
  /// Where a window may end among the filled bytes, 0 when nowhere: just after the last
  /// newline at or after `from` (the bytes before hold none)...
  std::size_t find_newline_cut(std::size_t from) const;
  /// ...or, for a line that fills the buffer, just after its last bracket, comma or colon
  /// outside a string; *in_string: whether the buffer ends inside a string.
  std::size_t find_structural_cut(bool* in_string) const;
  /// Doubles the buffer: a string (or a run of text with no safe cut) as long as it is.
  void grow();

  std::unique_ptr<RawInput> input_;
  std::string name_;
  uint64_t total_size_ = 0;
  uint64_t first_offset_ = 0;
  Compression compression_ = Compression::none;
  ProgressFn progress_;
  std::string read_error_;
  bool cut_short_ = false;
  uint64_t first_nul_ = UINT64_MAX;
  uint64_t max_token_bytes_ = uint64_t{1} << 32;
  uint64_t token_too_long_at_ = UINT64_MAX;

  std::unique_ptr<char[]> buffer_;  // capacity_ + 1 bytes: room for a '\0' after the text
  std::size_t capacity_ = 0;
  char* current_ = nullptr;
  char* last_ = nullptr;         // the window's last byte; at the end of input the '\0' after it
  char* put_ = nullptr;          // where in-situ parsing writes next
  char previous_ = '\0';         // the last byte of the window before (Previous() at a window's start)
  uint64_t window_offset_ = 0;   // file offset of buffer_[0]
  std::size_t cut_ = 0;          // the window is buffer_[0, cut_); after it, text not yet handed out
  std::size_t filled_ = 0;       // bytes of text in buffer_
  bool eof_ = false;             // the input has no more bytes
  bool input_done_ = false;      // read() said end of input (the buffer may still hold text)
  /// The window ends inside a run of text that is neither a string nor cut by structure
  /// (see next_window): asked for the next window, the run goes on and is refused.
  bool bare_run_ = false;

  std::unique_ptr<LineIndex> lines_;
};

}  // namespace jqtrace
