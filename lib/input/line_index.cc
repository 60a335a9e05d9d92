#include "line_index.h"

#include <algorithm>
#include <cstring>

#include "source.h"

namespace jqtrace {

void RecordingLineIndex::add(const char* data, std::size_t size, uint64_t offset) {
  const char* p = data;
  const char* end = data + size;
  while (p < end) {
    const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (!hit) break;
    const char* nl = static_cast<const char*>(hit);
    uint64_t at = offset + static_cast<uint64_t>(nl - data);
    uint64_t gap = at - last_;
    do {
      uint8_t byte = gap & 0x7F;
      gap >>= 7;
      deltas_.push_back(static_cast<uint8_t>(byte | (gap ? 0x80 : 0)));
    } while (gap);
    last_ = at;
    if (count_ % kCheckpointEvery == 0) checkpoints_.push_back({at, count_, deltas_.size()});
    ++count_;
    p = nl + 1;
  }
}

TextPosition RecordingLineIndex::locate(uint64_t offset) {
  // The last checkpoint at a newline before offset, then walk the deltas forward.
  auto it = std::partition_point(checkpoints_.begin(), checkpoints_.end(),
                                 [&](const Checkpoint& c) { return c.newline_offset < offset; });
  if (it == checkpoints_.begin()) return {1, offset + 1};  // no newline before offset
  const Checkpoint& c = *(it - 1);
  uint64_t index = c.index, at = c.newline_offset;
  std::size_t byte = c.byte;
  while (index + 1 < count_) {
    uint64_t gap = 0;
    int shift = 0;
    std::size_t b = byte;
    for (;; ++b, shift += 7) {
      gap |= static_cast<uint64_t>(deltas_[b] & 0x7F) << shift;
      if (!(deltas_[b] & 0x80)) break;
    }
    if (at + gap >= offset) break;
    at += gap;
    ++index;
    byte = b + 1;
  }
  return {index + 2, offset - at};
}

ReopeningLineIndex::ReopeningLineIndex(std::function<std::unique_ptr<RawInput>()> open_again)
    : open_again_(std::move(open_again)) {}

ReopeningLineIndex::~ReopeningLineIndex() = default;

TextPosition ReopeningLineIndex::locate(uint64_t offset) {
  if (!input_ || offset < offset_) {  // start over
    input_ = open_again_();
    if (!input_) return {};
    if (!buffer_) buffer_ = std::make_unique_for_overwrite<char[]>(kReadBytes);  // only now: most loads never locate anything
    buffered_ = consumed_ = 0;
    offset_ = newlines_ = 0;
    last_newline_ = -1;
  }
  while (offset_ < offset) {
    if (consumed_ == buffered_) {
      long n = input_->read(buffer_.get(), kReadBytes);
      if (n <= 0) break;
      buffered_ = static_cast<std::size_t>(n);
      consumed_ = 0;
    }
    std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(buffered_ - consumed_, offset - offset_));
    const char* from = buffer_.get() + consumed_;
    for (const char* p = from; p < from + take;) {
      const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(from + take - p));
      if (!hit) break;
      const char* nl = static_cast<const char*>(hit);
      ++newlines_;
      last_newline_ = static_cast<int64_t>(offset_ + static_cast<uint64_t>(nl - from));
      p = nl + 1;
    }
    consumed_ += take;
    offset_ += take;
  }
  return {newlines_ + 1, static_cast<uint64_t>(static_cast<int64_t>(offset) - last_newline_)};
}

}  // namespace jqtrace
