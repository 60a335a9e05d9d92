#pragma once
// A trace's input, opened once: a path, or "-" for standard input. The descriptor, what
// kind of file it is, its size and identity, and its compression (from its first bytes)
// are found here once; every reader takes its bytes from here: the sequential parse, the
// parts of a parallel one, a compressed stream's parts, the index's blocks, window's second
// read, and the error path's line positions. Before it, a path was opened and sniffed in
// seven places, and a file replaced between two of them was read half old, half new.
//
// What it can do follows from what it is: a regular file is read at any offset (pread, so
// any number of readers at once, each with its own position) and again from its start; a
// regular gzip file is decoded from access points, a zstd one from its frames; a pipe or
// standard input is a stream read once, from the start.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/stat.h>

#include "decoders.h"
#include "raw_input.h"

namespace jqtrace {

struct GzipPointHunt;

class Input : public std::enable_shared_from_this<Input> {
 public:
  /// Opens path ("-": standard input) and reads its magic. nullptr with *err (the system's
  /// words, or "is a directory") when it cannot be opened.
  static std::shared_ptr<Input> open(const std::string& path, std::string* err);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  /// As given: "-" for standard input.
  const std::string& path() const { return path_; }
  /// For messages: "<stdin>" or the path.
  const std::string& name() const { return name_; }
  bool is_stdin() const { return path_ == "-"; }
  /// A regular file (not standard input, which is read as a stream): read at any offset,
  /// and again.
  bool regular() const { return regular_; }
  /// A regular file's bytes (compressed bytes for gzip and zstd); 0 for anything else.
  uint64_t size() const { return size_; }
  /// The file's status when it was opened (device, inode, size, time: the index's key).
  const struct stat& status() const { return status_; }
  Compression compression() const { return compression_; }
  /// Parts may be cut at byte offsets of the text: a regular uncompressed file.
  bool splits() const { return regular_ && compression_ == Compression::none; }

  /// Up to n raw bytes at offset (a regular file): fewer only at its end or on an error.
  std::size_t read_at(uint64_t offset, char* out, std::size_t n) const;
  /// The same for a reader that must tell a failed read from the file's end: -1 (errno
  /// says why) when an error left nothing read, 0 only at the end.
  long read_or_error(uint64_t offset, char* out, std::size_t n) const;
  /// The raw bytes from offset on, as a stream of its own (a regular file); nullptr else.
  std::unique_ptr<RawInput> bytes_from(uint64_t offset) const;
  /// A stream's raw bytes from its start (its magic included), once: nullptr after, and
  /// for a regular file (see bytes_from).
  std::unique_ptr<RawInput> take_stream();
  /// Has a stream's raw bytes written to fd as they are read, from the start, by whoever
  /// takes it (window keeps a copy of a stream to read its events again: copied as the
  /// first pass reads, a stream that is not a trace, /dev/zero say, costs what the parse
  /// reads of it, not a disk). Call before the stream is taken.
  void copy_stream_to(int fd) { copy_to_ = fd; }
  /// True when writing the copy failed (a full disk): the copy is not the stream.
  bool copy_failed() const { return copy_failed_; }
  /// The decoded text from its start. A regular file gives it as often as asked; a stream
  /// once (nullptr after). hunt (may be null): access points taken as gzip or zstd decodes.
  std::unique_ptr<RawInput> text(GzipPointHunt* hunt = nullptr);
  /// What gives the decoded text again from its start, for line positions on the error
  /// path; empty for a stream, which cannot be read twice.
  std::function<std::unique_ptr<RawInput>()> text_again() const;

 private:
  Input() = default;
  /// The magic: read at offset 0 of a regular file, else the first bytes of the stream,
  /// kept to be handed on ahead of the rest.
  void sniff();

  std::string path_, name_;
  int fd_ = -1;
  bool owned_ = false;  ///< closed with the input (not standard input's)
  bool regular_ = false;
  bool stream_taken_ = false;
  uint64_t size_ = 0;
  struct stat status_ {};
  Compression compression_ = Compression::none;
  std::string head_;  ///< a stream's first bytes, read to sniff its magic
  int copy_to_ = -1;
  bool copy_failed_ = false;
};

}  // namespace jqtrace
