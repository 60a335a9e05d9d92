#include "content_hash.h"

#include <cstring>
#include <vector>

namespace jqtrace {

void ContentHash::mix(uint64_t word) {
  // One multiply-xorshift round a word (the finaliser of splitmix64 over the running state):
  // every input bit reaches every state bit within two words.
  uint64_t h = (state_ ^ word) * 0xBF58476D1CE4E5B9ull;
  state_ = (h ^ (h >> 31)) * 0x94D049BB133111EBull;
}

void ContentHash::add(const char* bytes, std::size_t n) {
  length_ += n;
  while (n > 0 && pending_bytes_ != 0) {  // finish a word begun by the last call
    pending_ |= static_cast<uint64_t>(static_cast<unsigned char>(*bytes++)) << (8 * pending_bytes_++);
    --n;
    if (pending_bytes_ == 8) {
      mix(pending_);
      pending_ = 0;
      pending_bytes_ = 0;
    }
  }
  for (; n >= 8; bytes += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    mix(word);
  }
  for (; n > 0; --n) pending_ |= static_cast<uint64_t>(static_cast<unsigned char>(*bytes++)) << (8 * pending_bytes_++);
}

std::string ContentHash::hex() const {
  ContentHash last = *this;
  last.mix(last.pending_ ^ (uint64_t{last.pending_bytes_} << 56));
  last.mix(last.length_);  // "ab" and "ab\0" differ
  char text[17];
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int k = 0; k < 16; ++k) text[k] = kDigits[(last.state_ >> (60 - 4 * k)) & 0xF];
  return std::string(text, 16);
}

std::optional<std::string> content_hash_of(const Input& input) {
  if (!input.regular()) return std::nullopt;
  ContentHash hash;
  std::vector<char> buffer(std::size_t{1} << 20);
  for (uint64_t at = 0;;) {
    long got = input.read_or_error(at, buffer.data(), buffer.size());
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    hash.add(buffer.data(), static_cast<std::size_t>(got));
    at += static_cast<uint64_t>(got);
  }
  return hash.hex();
}

}  // namespace jqtrace
