#pragma once
// Byte sources: a path, "-" for stdin, or memory; gzip is recognised by its magic bytes
// (1f 8b) and inflated on the fly. Memory stays bounded whatever the input size: one
// 64 KiB buffer of text (plus zlib's window for gzip).
//
// Source is a RapidJSON input stream (Peek/Take/Tell) and can turn a byte offset into a
// line:column (LineIndex: free for files, which are read again on the error path; about a
// byte per line for stdin, which cannot be).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "line_index.h"

namespace jqtrace {

/// 1-based line and column (column counts bytes). line == 0 means "unknown".
struct TextPosition {
  uint64_t line = 0;
  uint64_t column = 0;
};

/// Called after every buffer refill: bytes consumed from the file (compressed bytes for
/// gzip) and the file size (0 when unknown, e.g. stdin).
using ProgressFn = std::function<void(uint64_t consumed, uint64_t total)>;

/// Where raw bytes come from (a file descriptor, memory, or a gzip decoder over one).
class RawInput {
 public:
  virtual ~RawInput() = default;
  /// Reads up to size bytes; returns 0 at end of input, -1 on error (see error()).
  virtual long read(char* out, std::size_t size) = 0;
  virtual const std::string& error() const = 0;
  /// Bytes taken from the underlying file so far.
  virtual uint64_t consumed() const = 0;
  /// Zero-copy inputs (a mapped file) hand out their next window of bytes instead of
  /// copying into a buffer; false when the input cannot (then read() is used).
  virtual bool next_window(const char** data, std::size_t* size) {
    (void)data;
    (void)size;
    return false;
  }
  virtual bool zero_copy() const { return false; }
};

class Source {
 public:
  using Ch = char;
  static constexpr std::size_t kBufferSize = 64 * 1024;

  /// Opens a path or "-" (stdin). On failure returns nullptr with a message in *err.
  static std::unique_ptr<Source> open(const std::string& path, std::string* err);
  /// A source over bytes held in memory (tests); gzip magic is honoured here too.
  static std::unique_ptr<Source> from_string(std::string bytes, std::string name = "<memory>");
  /// One part of a regular, uncompressed file, for parallel parsing: `prefix` (text that
  /// puts the parser where the part starts, e.g. {"traceEvents":[ ) and then the file from
  /// `begin` to its end. Offsets (Tell, positions) are the file's own: the prefix takes the
  /// offsets just before `begin`. nullptr with *err when the file cannot be mapped.
  static std::unique_ptr<Source> open_part(const std::string& path, uint64_t begin, const std::string& prefix,
                                           std::string* err);

  /// first_offset: the file offset of the input's first byte.
  Source(std::unique_ptr<RawInput> input, std::string name, uint64_t total_size, std::unique_ptr<LineIndex> lines,
         uint64_t first_offset = 0);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  // RapidJSON input stream concept.
  Ch Peek() const { return *current_; }
  Ch Take() {
    Ch c = *current_;
    if (current_ < last_) ++current_;
    else refill();
    return c;
  }
  std::size_t Tell() const { return static_cast<std::size_t>(buffer_offset_ + (current_ - base_)); }
  Ch* PutBegin();
  void Put(Ch);
  void Flush();
  std::size_t PutEnd(Ch*);

  /// Line and column of a byte offset (the error path: see LineIndex for the cost).
  TextPosition locate(uint64_t offset);

  /// True when every byte has been read.
  bool at_end() const { return eof_; }
  /// Total bytes of (decompressed) text read so far.
  uint64_t text_bytes() const { return buffer_offset_ + filled_; }
  /// A read or decompression error, empty when none.
  const std::string& read_error() const { return read_error_; }
  const std::string& name() const { return name_; }
  bool is_gzip() const { return is_gzip_; }
  uint64_t total_size() const { return total_size_; }
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }

 private:
  void refill();

  std::unique_ptr<RawInput> input_;
  std::string name_;
  uint64_t total_size_ = 0;
  bool is_gzip_ = false;
  ProgressFn progress_;
  std::string read_error_;

  char buffer_[kBufferSize + 1];
  const char* base_ = buffer_;     // the current bytes: buffer_, or a window of a mapped file
  const char* current_ = buffer_;
  const char* last_ = buffer_;     // the last valid byte; at end of input a '\0' sentinel
  uint64_t buffer_offset_ = 0;     // file offset of base_[0]
  std::size_t filled_ = 0;         // valid bytes at base_
  bool eof_ = false;

  std::unique_ptr<LineIndex> lines_;
};

}  // namespace jqtrace
