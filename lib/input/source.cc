#include "source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "decoders.h"
#include "read_ahead.h"

namespace jqtrace {
namespace {

/// A full window, or for short uncompressed text (size known: 0 when it is not) a smaller
/// one: a test's or a fuzz target's thousand loads a second then allocate kilobytes, not
/// megabytes. Compressed text may decode to any length. The floor keeps a file that grows
/// while it is read from being read in tiny windows.
std::size_t window_for(Compression found, uint64_t text_bytes) {
  constexpr uint64_t kSmallest = 4096;
  if (found != Compression::none || text_bytes == 0) return Source::kWindow;
  return static_cast<std::size_t>(std::clamp<uint64_t>(text_bytes + 1, kSmallest, Source::kWindow));
}

}  // namespace

std::unique_ptr<Source> Source::open(Input& input, GzipPointHunt* hunt) {
  auto text = input.text(hunt);
  if (!text) return nullptr;
  Compression found = input.compression();
  if (found != Compression::none) text = read_ahead(std::move(text));  // decoded on a thread of its own
  std::unique_ptr<LineIndex> lines;
  if (input.regular())
    lines = std::make_unique<ReopeningLineIndex>(input.text_again());
  else
    lines = std::make_unique<RecordingLineIndex>();  // a pipe or device: no second reading
  auto src = std::make_unique<Source>(std::move(text), input.name(), input.size(), std::move(lines), 0,
                                      window_for(found, input.size()));
  src->compression_ = found;
  return src;
}

std::unique_ptr<Source> Source::open(const std::string& path, std::string* err, GzipPointHunt* hunt) {
  std::string why;
  auto input = Input::open(path, &why);
  if (!input && err) *err = why;
  return input ? open(*input, hunt) : nullptr;
}

std::unique_ptr<Source> Source::open_part(const Input& input, uint64_t begin, const std::string& prefix) {
  if (!input.splits() || input.size() < begin || prefix.size() > begin) return nullptr;
  auto lines = std::make_unique<ReopeningLineIndex>(input.text_again());
  auto in = prefixed_input(input.bytes_from(begin), prefix);
  return std::make_unique<Source>(std::move(in), input.name(), input.size(), std::move(lines), begin - prefix.size(),
                                  window_for(Compression::none, input.size() - begin + prefix.size()));
}

std::unique_ptr<Source> Source::text_part(std::shared_ptr<const std::string> text, uint64_t begin,
                                          const std::string& prefix) {
  if (begin > text->size() || prefix.size() > begin) return nullptr;
  auto lines = std::make_unique<ReopeningLineIndex>([text]() -> std::unique_ptr<RawInput> { return memory_input(*text); });
  std::size_t rest = text->size() - begin;
  auto in = prefixed_input(memory_input(text->substr(begin)), prefix);
  return std::make_unique<Source>(std::move(in), "<memory>", text->size(), std::move(lines), begin - prefix.size(),
                                  window_for(Compression::none, rest + prefix.size()));
}

std::unique_ptr<Source> Source::from_string(std::string bytes, std::string name) {
  Compression found = Compression::none;
  std::size_t text_bytes = bytes.size();
  auto in = decode_by_magic(memory_input(std::move(bytes)), &found);
  std::size_t window = window_for(found, text_bytes);
  auto src = std::make_unique<Source>(std::move(in), std::move(name), 0, std::make_unique<RecordingLineIndex>(), 0,
                                      window);
  src->compression_ = found;
  return src;
}

Source::Source(std::unique_ptr<RawInput> input, std::string name, uint64_t total_size,
               std::unique_ptr<LineIndex> lines, uint64_t first_offset, std::size_t window)
    : input_(std::move(input)), name_(std::move(name)), total_size_(total_size),
      buffer_(new char[std::max<std::size_t>(window, 64) + 1]), capacity_(std::max<std::size_t>(window, 64)),
      window_offset_(first_offset), lines_(std::move(lines)) {
  first_offset_ = first_offset;
  buffer_[0] = '\0';
  current_ = last_ = put_ = buffer_.get();
  next_window();
}

Source::~Source() = default;

void Source::next_window() {
  if (eof_) return;
  char* buffer = buffer_.get();
  if (bare_run_) {  // the parser took a whole window of it and wants more: no JSON token is that long
    token_too_long_at_ = window_offset_;
    read_error_ = "over " + std::to_string(capacity_) + " bytes with no string, bracket, comma, colon or space: not JSON text";
    eof_ = true;
    buffer[0] = '\0';
    current_ = last_ = buffer;
    return;
  }
  if (cut_ == filled_ && input_done_) {
    // All text handed out. The position stays just past the last byte (a number that ends
    // the input is read as the bytes before it), on the '\0' that tells RapidJSON it ended.
    eof_ = true;
    buffer[filled_] = '\0';
    current_ = last_ = buffer + filled_;
    return;
  }
  if (cut_ > 0) previous_ = buffer[cut_ - 1];
  std::size_t carry = filled_ - cut_;  // the text after the cut moves to the front
  std::memmove(buffer, buffer + cut_, carry);
  window_offset_ += cut_;
  filled_ = carry;
  cut_ = 0;
  std::size_t searched = carry;  // the carried text holds no newline
  while (cut_ == 0) {
    if (input_done_) {
      cut_ = filled_;  // the end of the input ends the last window
      break;
    }
    if (filled_ == capacity_) {  // one line longer than the window
      bool in_string = false;
      cut_ = find_structural_cut(&in_string);
      if (cut_ == 0 && !in_string) {
        // Only a string may be this long. Anything else (NUL bytes, a binary file, a
        // number of 256 KiB) stops the parse inside the window, which is handed over
        // whole; growing it for such a run held the whole input (1 GiB of NULs: 2.1 GB).
        cut_ = filled_;
        bare_run_ = true;
        break;
      }
      if (cut_ == 0 && capacity_ * 2 > max_token_bytes_) {  // a string longer than any the reader takes
        token_too_long_at_ = window_offset_;
        read_error_ = "a string (or token) of over " + std::to_string(capacity_) + " bytes is longer than jqtrace reads (LIMITS in jqtrace(1))";
        input_done_ = true;
        cut_ = filled_;
        break;
      }
      if (cut_ == 0) grow();
      continue;
    }
    if (read_more()) cut_ = find_newline_cut(searched);
    searched = filled_;
  }
  if (filled_ == 0) {  // no text at all
    next_window();
    return;
  }
  current_ = buffer_.get();  // grow() may have moved the buffer
  last_ = current_ + cut_ - 1;
}

bool Source::read_more() {
  char* at = buffer_.get() + filled_;
  long n = input_->read(at, capacity_ - filled_);
  if (n < 0) {
    if (input_->cut_short()) cut_short_ = true;  // a prefix of the text: the reader sees a truncated trace
    else read_error_ = input_->error();
    n = 0;
  }
  if (n == 0) {
    input_done_ = true;
    return false;
  }
  std::size_t got = static_cast<std::size_t>(n);
  lines_->add(at, got, window_offset_ + filled_);  // before the parser writes into it
  // RapidJSON takes a NUL for the end of the text: note the first so that the reader can
  // name it instead of reporting a short or empty document.
  if (first_nul_ == UINT64_MAX)
    if (const void* nul = std::memchr(at, '\0', got))
      first_nul_ = window_offset_ + filled_ + static_cast<uint64_t>(static_cast<const char*>(nul) - at);
  filled_ += got;
  if (progress_) progress_(input_->consumed(), total_size_);
  return true;
}

std::size_t Source::find_newline_cut(std::size_t from) const {
  const char* text = buffer_.get();
  const void* newline = ::memrchr(text + from, '\n', filled_ - from);
  return newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - text) + 1 : 0;
}

std::size_t Source::find_structural_cut(bool* ends_in_string) const {
  // The window starts outside any string (it starts where the last one was cut), and in
  // text the parser accepts, quotes and backslashes tell exactly where strings are. Text
  // it does not accept stops the parse before the cut, so a wrong guess there is harmless.
  const char* text = buffer_.get();
  std::size_t cut = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < filled_; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == ' ' || c == '\n' ||
               c == '\t' || c == '\r') {
      cut = i + 1;  // whitespace too: no token spans it, and a run of it needs no buffering
    }
  }
  *ends_in_string = in_string;
  return cut;
}

void Source::grow() {
  std::size_t bigger = capacity_ * 2;
  std::unique_ptr<char[]> grown(new char[bigger + 1]);
  std::memcpy(grown.get(), buffer_.get(), filled_);
  buffer_ = std::move(grown);
  capacity_ = bigger;
}

TextPosition Source::locate(uint64_t offset) { return lines_->locate(offset); }

}  // namespace jqtrace
