#pragma once
// Where raw bytes come from: a file descriptor, memory, a decoder over one of those, or
// another thread (read_ahead.h). Source turns them into windows of text for the parser.
#include <cstdint>
#include <memory>
#include <string>

namespace jqtrace {

/// A stream of bytes, read in order.
class RawInput {
 public:
  virtual ~RawInput() = default;
  /// Reads up to size bytes; returns 0 at end of input, -1 on error (see error()).
  virtual long read(char* out, std::size_t size) = 0;
  virtual const std::string& error() const = 0;
  /// Bytes taken from the underlying file so far.
  virtual uint64_t consumed() const = 0;
  /// True when the input ended inside a compressed stream: what came before it is good
  /// text, just not all of it (a gzip file cut short, like a trace whose writer died).
  virtual bool cut_short() const { return false; }
};

/// Up to n bytes of fd at offset into out (pread(2), again after EINTR): fewer only at the
/// file's end, or on an error. Returns how many were read.
std::size_t read_at(int fd, uint64_t offset, char* out, std::size_t n);

/// read(2) on a descriptor (closed at the end when owned).
std::unique_ptr<RawInput> fd_input(int fd, bool owned);
/// Bytes held in memory.
std::unique_ptr<RawInput> memory_input(std::string bytes);
/// `prefix`, then the inner input's bytes: bytes already read (to sniff a magic), or text
/// that puts the parser where a part of a file starts (Source::open_part).
std::unique_ptr<RawInput> prefixed_input(std::unique_ptr<RawInput> inner, std::string prefix);

}  // namespace jqtrace
