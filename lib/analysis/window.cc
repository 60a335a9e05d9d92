#include "window.h"

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <iterator>

#include "begin_end.h"
#include "decoders.h"
#include "jobque.h"
#include "raw_input.h"

namespace jqtrace {

void EventIndex::on_event(const RawEvent& e, const Interner& names) {
  if (publish_name_ == Interner::kNone) publish_name_ = names.find(kPublish);
  Kind kind = kUntimed;
  bool timed = e.has_ts && !(e.problems & (kTsNotNumber | kTsOutOfRange));
  if (e.ph == 'M') kind = kMetadata;
  else if (e.ph == 'X' && timed && e.has_dur && e.dur_ns >= 0) kind = kSpan;
  else if (timed) kind = kPoint;
  if (timed && (e.ph == 'B' || e.ph == 'E')) {
    begin_ends_.push_back({size(), e.pid, e.tid, e.ts_ns, e.ph == 'B'});
    kind = kSpan;  // selected by its pair's span (finish() pairs them)
  }
  if (e.ph == 'X' && e.name == publish_name_ && e.has_chain) publish_of_[e.chain] = static_cast<uint32_t>(size());
  if (size() == 0) first_offset_ = last_end_ = e.offset;  // a part's first event: small gaps from here on
  gap_.push(static_cast<int64_t>(e.offset - last_end_));
  length_.push(static_cast<int64_t>(e.end_offset - e.offset));
  ts_.push(kind == kSpan || kind == kPoint ? e.ts_ns : 0);
  dur_.push(kind == kSpan ? e.dur_ns : 0);
  kind_.push(kind);
  chain_.push(e.has_chain ? e.chain : 0);
  lane_.push(lane_of(e.pid, e.tid));
  last_end_ = e.end_offset;
}

uint32_t EventIndex::lane_of(const ProcessId& pid, const ProcessId& tid) {
  LaneKey key = lane_key(pid, tid);
  auto key_of = [&](uint32_t lane) { return lane_key(lanes_[lane].first, lanes_[lane].second); };
  if (last_lane_ != UINT32_MAX && key_of(last_lane_) == key) return last_lane_;
  auto [lane, added] = lane_index_.find_or_add(key, static_cast<uint32_t>(lanes_.size()), key_of);
  if (added) lanes_.emplace_back(pid, tid);
  last_lane_ = lane;
  return lane;
}

void EventIndex::absorb(SplittableSink& later_sink, const std::vector<uint32_t>& names) {
  auto& later = static_cast<EventIndex&>(later_sink);
  if (later.size() == 0) return;
  if (size() == 0) {
    // Nothing here yet (the first part): take the part whole instead of copying it.
    bool same_names = true;
    for (std::size_t i = 0; i < names.size() && same_names; ++i) same_names = names[i] == i;
    if (same_names) {
      *this = std::move(later);
      later = EventIndex{};
      return;
    }
  }
  std::size_t base = size();
  // Column by column, each freed once copied: the join never holds a second index.
  auto move_over = [](IntColumn& to, IntColumn& from) {
    to.append(from);
    from = IntColumn{};
  };
  move_over(gap_, later.gap_);
  // The later part's first gap is 0 (its events count from its first): count from here.
  gap_.set(base, static_cast<int64_t>(later.first_offset_ - last_end_));
  move_over(length_, later.length_);
  move_over(ts_, later.ts_);
  move_over(dur_, later.dur_);
  move_over(kind_, later.kind_);
  move_over(chain_, later.chain_);
  std::vector<uint32_t> lane_here;  // the later part's lane numbers -> these
  lane_here.reserve(later.lanes_.size());
  for (const auto& [pid, tid] : later.lanes_)
    lane_here.push_back(lane_of(reinterned(pid, names), reinterned(tid, names)));
  lane_.append_mapped(later.lane_, [&](int64_t lane) { return lane_here[static_cast<std::size_t>(lane)]; });
  later.lane_ = IntColumn{};
  publish_of_.absorb_each(later.publish_of_,
      [&](int64_t chain, uint32_t index) { publish_of_[chain] = static_cast<uint32_t>(base + index); });
  for (BeginEnd be : later.begin_ends_) {
    be.index += base;
    be.pid = reinterned(be.pid, names);
    be.tid = reinterned(be.tid, names);
    begin_ends_.push_back(be);
  }
  last_end_ = later.last_end_;
  later = EventIndex{};
}

void EventIndex::finish(int64_t end_ns) {
  std::map<LaneKey, BeginEndPairing<std::size_t>> lanes;  // entry numbers of the B and E events
  for (const BeginEnd& be : begin_ends_) {
    BeginEndPairing<std::size_t>& pairing = lanes[lane_key(be.pid, be.tid)];
    if (be.begin) {
      pairing.begin(be.index);
      pair_span_[be.index] = {be.ts, be.ts};
    } else if (auto begin = pairing.end(be.index)) {
      pair_span_[*begin].second = be.ts;
      pair_span_[be.index] = pair_span_[*begin];
    } else {
      kind_.set(be.index, kUntimed);  // an E that closes nothing: analyses drop it, and so do windows
    }
  }
  for (const auto& [lane, pairing] : lanes)
    for (std::size_t begin : pairing.unclosed()) pair_span_[begin].second = end_ns;
  std::vector<BeginEnd>().swap(begin_ends_);
}

WindowSelection select_window(const EventIndex& index, Range range) {
  WindowSelection chosen(index.size());
  index.for_each([&](const EventIndex::Entry& e) {
    bool in = false;
    switch (e.kind) {
      case EventIndex::kMetadata: in = true; break;
      case EventIndex::kSpan:
        in = e.paired() ? range.overlaps(e.pair.first, e.pair.second) : range.overlaps(e.ts_ns, e.ts_ns + e.dur_ns);
        break;
      case EventIndex::kPoint: in = e.ts_ns >= range.lo && e.ts_ns <= range.hi; break;
      case EventIndex::kUntimed: break;
    }
    if (!in) return;
    chosen.choose(e.index);
    // The publish of its chain, from outside the range too.
    if (std::size_t publish = e.chain != 0 ? index.publish_of(e.chain) : SIZE_MAX; publish != SIZE_MAX)
      chosen.choose(publish);
  });
  return chosen;
}

std::vector<EventIndex::Entry> WindowSelection::entries(const EventIndex& index) const {
  std::vector<EventIndex::Entry> out;
  for_each(index, [&](const EventIndex::Entry& e) { out.push_back(e); });
  return out;
}

uint64_t WindowSelection::first_offset(const EventIndex& index) const {
  uint64_t first = UINT64_MAX;
  if (empty()) return first;
  index.for_each_while([&](const EventIndex::Entry& e) {
    if (!chosen(e.index)) return true;
    first = e.offset;
    return false;
  });
  return first;
}

namespace {

/// The events of a text, in order.
struct ParsedEvents final : EventSink {
  std::vector<RawEvent> events;
  void on_event(const RawEvent& e, const Interner&) override { events.push_back(e); }
};

/// The events of json (an array), with names.
std::vector<RawEvent> parse_events(std::string json, Interner& names) {
  ParsedEvents parsed;
  read_trace(*Source::from_string(std::move(json)), parsed, names, nullptr);
  return std::move(parsed.events);
}

}  // namespace

void EventTexts::add(std::string_view event_text) {
  json_ += starts_.empty() ? "[" : ",";
  starts_.push_back(json_.size());
  json_ += event_text;
}

void EventTexts::read_back(const std::function<void(std::size_t, const RawEvent&, const Interner&)>& f) const {
  if (starts_.empty()) return;
  Interner names;
  std::string all = json_;
  all += ']';
  std::vector<RawEvent> events = parse_events(std::move(all), names);
  bool each_in_place = events.size() == starts_.size();
  for (std::size_t i = 0; i < events.size() && each_in_place; ++i) each_in_place = events[i].offset == starts_[i];
  if (each_in_place) {
    for (std::size_t i = 0; i < events.size(); ++i) f(i, events[i], names);
    return;
  }
  for (std::size_t i = 0; i < starts_.size(); ++i) {
    std::size_t end = i + 1 < starts_.size() ? starts_[i + 1] - 1 : json_.size();  // before the comma
    Interner own;  // an event's own names: the reader reads its interner's names when it starts
    std::string one = "[";
    one.append(json_, starts_[i], end - starts_[i]);
    one += ']';
    std::vector<RawEvent> alone = parse_events(std::move(one), own);
    if (alone.size() == 1) f(i, alone[0], own);
  }
}

namespace {

/// A plain file, read a block at a time: a window's events are mostly next to each other,
/// and a read of each (a system call an event) took a fifth of the time of a window of a
/// whole trace. The block grows while its reads serve several ranges and shrinks to a page
/// while they serve one (a window's publishes can be far apart).
class PlainRanges final : public TextRanges {
 public:
  explicit PlainRanges(std::shared_ptr<const Input> input) : input_(std::move(input)), block_(kMaxBlock) {}
  bool read(uint64_t offset, uint64_t end, std::string* out) override {
    std::size_t n = static_cast<std::size_t>(end - offset);
    if (n > kMaxBlock / 2) {  // a long range: straight into out
      std::size_t at = out->size();
      out->resize(at + n);
      return input_->read_at(offset, out->data() + at, n) == n;
    }
    if (offset < block_at_ || end > block_at_ + filled_) {
      want_ = served_ > 1 ? std::min(want_ * 2, kMaxBlock) : std::max(want_ / 2, kMinBlock);
      block_at_ = offset;
      filled_ = input_->read_at(offset, block_.data(), std::max(want_, n));
      served_ = 0;
      if (end > block_at_ + filled_) return false;
    }
    out->append(block_.data() + (offset - block_at_), n);
    ++served_;
    return true;
  }

 private:
  static constexpr std::size_t kMinBlock = 4u << 10, kMaxBlock = 256u << 10;
  std::shared_ptr<const Input> input_;
  std::vector<char> block_;
  uint64_t block_at_ = 0;        ///< file offset of block_[0]
  std::size_t filled_ = 0;       ///< bytes of the file in block_
  std::size_t want_ = kMinBlock;  ///< bytes the next block reads
  std::size_t served_ = 0;       ///< ranges the block has served
};

/// Any other text (zstd, gzip without access points): decoded again from the start, a
/// block at a time, keeping only what is asked for. (Taking it a byte at a time through a
/// Source cost more than the decoding: window on a zstd trace took 1.4x its plain time.)
class StreamRanges final : public TextRanges {
 public:
  /// text_offset: where in the whole text the input's first byte stands.
  explicit StreamRanges(std::unique_ptr<RawInput> text, uint64_t text_offset = 0)
      : text_(std::move(text)), block_(kBlock), block_at_(text_offset) {}
  /// The earliest text offset it can still hand out, and the next one it would decode.
  uint64_t earliest() const { return block_at_; }
  uint64_t decoded_to() const { return block_at_ + filled_; }
  bool read(uint64_t offset, uint64_t end, std::string* out) override {
    while (offset < end) {
      uint64_t block_end = block_at_ + filled_;
      if (offset < block_at_) return false;  // behind the block: ranges must not go back
      if (offset < block_end) {
        uint64_t upto = std::min(end, block_end);
        out->append(block_.data() + (offset - block_at_), static_cast<std::size_t>(upto - offset));
        offset = upto;
        continue;
      }
      block_at_ = block_end;
      long n = text_->read(block_.data(), block_.size());
      filled_ = n > 0 ? static_cast<std::size_t>(n) : 0;
      if (n <= 0) return false;  // the text ended (or broke) before the range
    }
    return true;
  }

 private:
  static constexpr std::size_t kBlock = 256u << 10;
  std::unique_ptr<RawInput> text_;
  std::vector<char> block_;
  uint64_t block_at_ = 0;   ///< text offset of block_[0]
  std::size_t filled_ = 0;  ///< bytes of text in block_
};

/// A zstd file of several frames, with access points at their starts (found as the first
/// pass decoded it): each range decoded afresh from the frame before it, or onwards from
/// where the last range ended when that is near.
class FrameRanges final : public TextRanges {
 public:
  FrameRanges(std::shared_ptr<const Input> input, const std::vector<GzipPoint>& frames)
      : input_(std::move(input)), frames_(frames) {}
  bool read(uint64_t offset, uint64_t end, std::string* out) override {
    const GzipPoint* from = point_before(frames_, offset);
    if (!from) return false;
    bool behind = !stream_ || offset < stream_->earliest();
    bool far = stream_ && from->out > stream_->decoded_to() + kMinSkip;
    if (behind || far) {
      stream_ = decoded_from(*from);
      if (!stream_) return false;
    }
    return stream_->read(offset, end, out);
  }

 private:
  static constexpr uint64_t kMinSkip = 256u << 10;
  std::unique_ptr<StreamRanges> decoded_from(const GzipPoint& frame) const {
    return std::make_unique<StreamRanges>(zstd_decoder(input_->bytes_from(frame.in)), frame.out);
  }

  std::shared_ptr<const Input> input_;
  const std::vector<GzipPoint>& frames_;
  std::unique_ptr<StreamRanges> stream_;
};

/// A gzip file with access points (an index's): each range decoded from the point before
/// it, or onwards from the last one when that is near.
class PointRanges final : public TextRanges {
 public:
  PointRanges(std::shared_ptr<const Input> input, const std::vector<GzipPoint>& points)
      : points_(points), cursor_(std::move(input)) {}
  bool read(uint64_t offset, uint64_t end, std::string* out) override {
    const GzipPoint* from = point_before(points_, offset);
    if (!from) return false;
    // Jumping to a point beats decoding up to it once that is more than a little text: a
    // start costs a window's copy (and its inflate, from an index), tens of microseconds.
    bool behind = !started_ || offset < cursor_.position();
    bool far = from->out > cursor_.position() + kMinSkip;
    if (behind || far) {
      started_ = cursor_.start(*from);
      if (!started_) return false;
    }
    std::size_t had = out->size();
    return cursor_.read(offset, end, out) && out->size() - had == end - offset;
  }

 private:
  static constexpr uint64_t kMinSkip = 256u << 10;
  const std::vector<GzipPoint>& points_;
  GzipCursor cursor_;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<TextRanges> TextRanges::open(const std::shared_ptr<Input>& input, std::string* err,
                                             const std::vector<GzipPoint>* points) {
  if (!input->regular()) {
    *err = "not a regular file";
    return nullptr;
  }
  Compression compression = input->compression();
  bool has_points = points && points->size() > 1;
  if (compression == Compression::gzip && has_points) return std::make_unique<PointRanges>(input, *points);
  if (compression == Compression::zstd && has_points) return std::make_unique<FrameRanges>(input, *points);
  if (compression != Compression::none) return std::make_unique<StreamRanges>(input->text());
  return std::make_unique<PlainRanges>(input);
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// A JSON string's text (between its quotes) decoded as the reader decodes it, so that
/// "\u0074s" is the key ts. Escapes that do not decode stay as they are (they match nothing).
std::string decoded(std::string_view raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out += raw[i];
      continue;
    }
    char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        unsigned code = 0;
        bool ok = i + 4 < raw.size();
        for (std::size_t k = 1; ok && k <= 4; ++k) {
          int d = hex_digit(raw[i + k]);
          ok = d >= 0;
          code = code * 16 + static_cast<unsigned>(d);
        }
        if (!ok) {
          out += "\\u";
          break;
        }
        i += 4;
        // Keys here are ASCII ("ts"); anything else only needs to differ from them.
        if (code < 0x80) out += static_cast<char>(code);
        else out += "\xff";
        break;
      }
      default: out += e;  // \" \\ \/
    }
  }
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

namespace {

/// One past the JSON string whose opening quote is at text[at].
std::size_t string_end(std::string_view text, std::size_t at) {
  std::size_t j = at + 1;
  while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
  return std::min(j + 1, text.size());
}

/// One past the JSON value that starts at text[at] (a string, an object or array with
/// everything in it, or a scalar).
std::size_t value_end(std::string_view text, std::size_t at) {
  if (at >= text.size()) return at;
  if (text[at] == '"') return string_end(text, at);
  if (text[at] == '{' || text[at] == '[') {
    int depth = 0;
    for (std::size_t i = at; i < text.size(); ++i) {
      char c = text[i];
      if (c == '"') i = string_end(text, i) - 1;
      else if (c == '{' || c == '[') ++depth;
      else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    }
    return text.size();
  }
  std::size_t v = at;
  while (v < text.size() && !std::strchr(",}] \t\n\r", text[v])) ++v;
  return v;
}

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

}  // namespace

MemberPlace find_top_level_member(std::string_view text, std::string_view key) {
  // A small scanner over the object's members, a value skipped whole (so a "ts" inside args
  // is not taken); the reader keeps the last of duplicate keys, and decodes escapes, so the
  // same is done here.
  MemberPlace found;
  std::size_t i = skip_space(text, 0);
  if (i >= text.size() || text[i] != '{') return found;
  ++i;
  while (true) {
    i = skip_space(text, i);
    if (i >= text.size() || text[i] != '"') return found;
    std::size_t key_at = i, key_end = string_end(text, i);
    std::size_t colon = skip_space(text, key_end);
    if (colon >= text.size() || text[colon] != ':') return found;
    std::size_t value_at = skip_space(text, colon + 1), end = value_end(text, value_at);
    if (decoded(text.substr(key_at + 1, key_end - key_at - 2)) == key) found = {key_at, value_at, end};
    i = skip_space(text, end);
    if (i >= text.size() || text[i] != ',') return found;
    ++i;
  }
}

bool replace_top_level_number(std::string& text, std::string_view key, std::string_view number) {
  MemberPlace place = find_top_level_member(text, key);
  if (!place.found()) return false;
  std::string_view value = std::string_view(text).substr(place.value_at, place.value_end - place.value_at);
  if (value.empty() || value.find_first_not_of("+-0123456789.eE") != std::string_view::npos) return false;
  text.replace(place.value_at, value.size(), number);
  return true;
}

}  // namespace jqtrace
