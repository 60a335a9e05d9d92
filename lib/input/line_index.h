#pragma once
// Byte offset → line:column, computed only on the error path. Two ways:
//  - ReopeningLineIndex: for regular files (plain or gzip). Costs nothing while parsing;
//    when a position is asked for, it reads the file again from the start (or from where
//    it stopped last time, since positions are mostly asked for in increasing order).
//  - RecordingLineIndex: for stdin and memory, which cannot be read twice. Records every
//    newline offset as it passes, delta-encoded (about one byte per line).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace jqtrace {

struct TextPosition;
class RawInput;

class LineIndex {
 public:
  virtual ~LineIndex() = default;
  /// Sees every buffer of text in order (only the recording index needs them).
  virtual void add(const char* data, std::size_t size, uint64_t offset) = 0;
  virtual TextPosition locate(uint64_t offset) = 0;
};

class RecordingLineIndex final : public LineIndex {
 public:
  void add(const char* data, std::size_t size, uint64_t offset) override;
  TextPosition locate(uint64_t offset) override;

 private:
  struct Checkpoint {
    uint64_t newline_offset;  ///< offset of newline number `index`
    uint64_t index;
    std::size_t byte;         ///< where its delta ends in deltas_
  };
  static constexpr uint64_t kCheckpointEvery = 1024;
  std::vector<uint8_t> deltas_;  ///< LEB128 gaps between consecutive newline offsets
  std::vector<Checkpoint> checkpoints_;
  uint64_t count_ = 0;
  uint64_t last_ = 0;
};

class ReopeningLineIndex final : public LineIndex {
 public:
  /// open_again returns a fresh reader of the same (decompressed) text, or nullptr.
  explicit ReopeningLineIndex(std::function<std::unique_ptr<RawInput>()> open_again);
  ~ReopeningLineIndex() override;
  void add(const char*, std::size_t, uint64_t) override {}
  TextPosition locate(uint64_t offset) override;

 private:
  static constexpr std::size_t kReadBytes = 64 * 1024;
  std::function<std::unique_ptr<RawInput>()> open_again_;
  std::unique_ptr<RawInput> input_;
  std::unique_ptr<char[]> buffer_;
  std::size_t buffered_ = 0;   ///< valid bytes in buffer_
  std::size_t consumed_ = 0;   ///< bytes of buffer_ already counted
  uint64_t offset_ = 0;        ///< file offset of buffer_[consumed_]
  uint64_t newlines_ = 0;
  int64_t last_newline_ = -1;
};

}  // namespace jqtrace
