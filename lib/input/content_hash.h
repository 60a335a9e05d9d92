#pragma once
// A file's identity by content, for a fleet that grows (export --append skips a trace whose
// bytes are already in the database): a 64-bit hash of its raw bytes (compressed ones, as
// they are on disk), 8 bytes a multiply, ~10x faster than zlib's crc32. Not a
// cryptographic digest: it tells a copy from a different run, not a forgery.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "input.h"

namespace jqtrace {

class ContentHash {
 public:
  void add(const char* bytes, std::size_t n);
  /// The hash of every byte added, as 16 hex digits.
  std::string hex() const;

 private:
  void mix(uint64_t word);
  uint64_t state_ = 0x9E3779B97F4A7C15ull;
  uint64_t length_ = 0;
  uint64_t pending_ = 0;      ///< bytes of a word not yet complete, little-endian
  unsigned pending_bytes_ = 0;
};

/// The hash of a regular file's raw bytes; nothing for standard input (read once, by the
/// parse) or when a read fails.
std::optional<std::string> content_hash_of(const Input& input);

}  // namespace jqtrace
