#include "trace_index.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <utility>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef JQTRACE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "jobque.h"
#include "parallel.h"
#include "paths.h"
#include "line_index.h"
#include "raw_input.h"

namespace jqtrace {
namespace {

constexpr char kMagic[8] = {'J', 'Q', 'T', 'R', 'A', 'C', 'E', 'X'};
constexpr std::size_t kEnds = 64 * 1024;  ///< bytes of each end of the trace its identity hashes

// ---------------------------------------------------------------------------------------
// Encoding: LEB128 varints, zigzag for signed values, strings as length + bytes.

class Writer {
 public:
  void u(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void s(int64_t v) { u((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void b(bool v) { u(v ? 1 : 0); }
  void text(std::string_view t) {
    u(t.size());
    out_.append(t);
  }
  /// A column; `deltas` for one sorted by value (times): small numbers instead of large.
  void column(const IntColumn& c, bool deltas = false) {
    u(c.size());
    u(c.width());  // the reader sizes the column at once
    int64_t previous = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      s(deltas ? static_cast<int64_t>(static_cast<uint64_t>(c[i]) - static_cast<uint64_t>(previous)) : c[i]);
      previous = c[i];
    }
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

/// Reads what Writer wrote; any read past the end or out of its range makes ok() false
/// (and yields zeros), so a corrupt index is refused, never trusted.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint64_t u() {
    if (at_ < in_.size() && static_cast<uint8_t>(in_[at_]) < 0x80) return static_cast<uint8_t>(in_[at_++]);
    return u_long();
  }
  uint64_t u_long() {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (at_ >= in_.size()) return fail();
      auto byte = static_cast<uint8_t>(in_[at_++]);
      v |= uint64_t{byte & 0x7Fu} << shift;
      if (!(byte & 0x80)) return v;
    }
    return fail();
  }
  int64_t s() {
    uint64_t z = u();
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  bool b() { return u() != 0; }
  /// A count of items that each take at least one byte: never more than the bytes left.
  std::size_t count() {
    uint64_t n = u();
    return n <= in_.size() - at_ ? static_cast<std::size_t>(n) : static_cast<std::size_t>(fail());
  }
  std::string text() {
    std::size_t n = count();
    std::string t(in_.substr(at_, n));
    at_ += n;
    return t;
  }
  void column(IntColumn* c, bool deltas = false) {
    std::size_t n = count();
    uint64_t width = u();
    if (width > 8) return invalid();
    c->reserve(n, static_cast<unsigned>(width));
    int64_t previous = 0;
    for (std::size_t i = 0; i < n && ok_; ++i) {
      int64_t v = s();
      if (deltas) v = static_cast<int64_t>(static_cast<uint64_t>(previous) + static_cast<uint64_t>(v));
      c->push(v);
      previous = v;
    }
  }
  uint32_t u32() { return static_cast<uint32_t>(fixed(4)); }
  uint64_t u64() { return fixed(8); }
  bool ok() const { return ok_; }
  /// Marks the input corrupt (a value out of its range).
  void invalid() { fail(); }
  bool at_end() const { return at_ == in_.size(); }
  std::string_view rest() const { return in_.substr(at_); }

 private:
  uint64_t fixed(unsigned n) {
    if (in_.size() - at_ < n) return fail();
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(in_[at_ + i])} << (8 * i);
    at_ += n;
    return v;
  }
  uint64_t fail() {
    ok_ = false;
    at_ = in_.size();
    return 0;
  }
  std::string_view in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// ---------------------------------------------------------------------------------------
// The skeleton: a Trace without its span tables.

void put_process(Writer& w, const ProcessId& p) {
  w.b(p.present);
  w.b(p.is_string);
  w.s(p.number);
  w.u(p.text == Interner::kNone ? 0 : uint64_t{p.text} + 1);
}

ProcessId get_process(Reader& r, std::size_t names) {
  ProcessId p;
  p.present = r.b();
  p.is_string = r.b();
  p.number = r.s();
  uint64_t text = r.u();
  if (text > names) r.invalid();
  p.text = text == 0 ? Interner::kNone : static_cast<uint32_t>(text - 1);
  return p;
}

void put_profile(Writer& w, const JobqueProfile& p) {
  w.b(p.present);
  w.s(p.version);
  w.s(p.lanes);
  w.u(p.categories.size());
  for (const ProfileCategory& c : p.categories) {
    w.s(c.id);
    w.text(c.name);
    w.text(c.color);
  }
  w.u(p.markers.size());
  for (const ProfileMarker& m : p.markers) {
    w.s(m.id);
    w.text(m.name);
  }
  w.text(p.unread);
}

void get_profile(Reader& r, JobqueProfile* p) {
  p->present = r.b();
  p->version = r.s();
  p->lanes = r.s();
  p->categories.resize(r.count());
  for (ProfileCategory& c : p->categories) {
    c.id = r.s();
    c.name = r.text();
    c.color = r.text();
  }
  p->markers.resize(r.count());
  for (ProfileMarker& m : p->markers) {
    m.id = r.s();
    m.name = r.text();
  }
  p->unread = r.text();
}

void put_window(Writer& w, const WindowRecord& x) {
  w.b(x.present);
  w.text(x.source);
  w.text(x.scope);
  w.s(x.lo_ns);
  w.s(x.hi_ns);
  w.s(x.rebased_by_ns);
  w.u(x.units.size());
  for (const WindowRecord::KindRule& k : x.units) {
    w.text(k.kind);
    w.b(k.at_end);
    w.text(k.nested_in);
  }
}

void get_window(Reader& r, WindowRecord* x) {
  x->present = r.b();
  x->source = r.text();
  x->scope = r.text();
  x->lo_ns = r.s();
  x->hi_ns = r.s();
  x->rebased_by_ns = r.s();
  std::size_t units = r.count();
  for (std::size_t i = 0; i < units && r.ok(); ++i) {
    WindowRecord::KindRule k;
    k.kind = r.text();
    k.at_end = r.b();
    k.nested_in = r.text();
    x->units.push_back(std::move(k));
  }
}

void put_lanes(Writer& w, const Trace& t) {
  w.u(t.lanes.size());
  for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
    const Lane& l = t.lanes[lane];
    put_process(w, l.pid);
    put_process(w, l.tid);
    w.text(t.thread_name(lane));
    w.u(l.events);
    w.s(l.first_ts);
    w.s(l.last_end);
    w.b(l.has_time);
  }
}

void get_lanes(Reader& r, std::size_t names, Trace* t) {
  std::size_t n = r.count();
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    Lane& l = t->lanes.emplace_back();
    l.pid = get_process(r, names);
    l.tid = get_process(r, names);
    std::string thread_name = r.text();
    if (!thread_name.empty()) l.thread_name = t->thread_names.intern(thread_name);
    l.events = r.u();
    l.first_ts = r.s();
    l.last_end = r.s();
    l.has_time = r.b();
  }
}

/// The read's outcome. An index is only written for a usable read (ok or truncated), so
/// there is no error message or rule to keep.
void put_read(Writer& w, const ReadResult& x) {
  w.u(static_cast<unsigned>(x.status));
  w.u(x.offset);
  w.u(static_cast<unsigned>(x.container));
  w.u(x.events);
  w.u(x.bytes);
  w.b(x.array_unterminated);
  w.b(x.stream_cut);
  w.u(static_cast<unsigned>(x.compression));
  w.b(x.has_events_array);
  w.u(x.profile_offset);
  w.u(x.profile_end);
}

void get_read(Reader& r, ReadResult* x) {
  uint64_t status = r.u();
  x->status = status == 1 ? ReadStatus::truncated : ReadStatus::ok;
  if (status > 1) r.invalid();  // an input error is never indexed
  x->offset = r.u();
  uint64_t container = r.u();
  x->container = container == 1 ? Container::object : container == 2 ? Container::array : Container::unknown;
  x->events = r.u();
  x->bytes = r.u();
  x->array_unterminated = r.b();
  x->stream_cut = r.b();
  uint64_t compression = r.u();
  x->compression = compression == 1 ? Compression::gzip : compression == 2 ? Compression::zstd : Compression::none;
  x->has_events_array = r.b();
  x->profile_offset = r.u();
  x->profile_end = r.u();
}

void put_skeleton(Writer& w, const Trace& t) {
  w.u(t.names.size());
  for (uint32_t id = 0; id < t.names.size(); ++id) w.text(t.names.view(id));
  put_profile(w, t.profile);
  put_window(w, t.window);
  w.b(t.jobque);
  put_lanes(w, t);
  w.column(t.instants.ts, true);  // sorted by time
  for (const IntColumn* c : {&t.instants.lane, &t.instants.name, &t.instants.arg, &t.instants.scope,
                             &t.instants.quiet_before, &t.instants.quiet_after, &t.instants.busy_before,
                             &t.instants.busy_after})
    w.column(*c);
  w.column(t.counters.ts, true);  // in file order: mostly increasing
  for (const IntColumn* c : {&t.counters.lane, &t.counters.name}) w.column(*c);
  w.u(static_cast<uint64_t>(t.attribution));
  w.u(t.categories.size());
  for (const Category& c : t.categories) {
    w.text(c.name);
    w.text(c.color);
    w.b(c.guessed);
  }
  w.u(t.process_names.size());
  for (const ProcessName& p : t.process_names) {
    put_process(w, p.pid);
    w.text(p.name);
  }
  w.s(t.start_ns);
  w.s(t.end_ns);
  w.b(t.has_time);
  for (uint64_t n : t.phase_counts) w.u(n);
  for (uint64_t n : {t.events, t.malformed, t.unclosed_begins, t.unmatched_ends}) w.u(n);
  w.s(t.duration_sum_ns);
  put_read(w, t.read);
}

/// The name ids a skeleton's columns hold must name something: checked once it is read.
bool names_in_range(const Trace& t) {
  auto within = [&](const IntColumn& c, int64_t lo) {
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i] < lo || c[i] >= static_cast<int64_t>(t.names.size())) return false;
    return true;
  };
  auto lanes_within = [&](const IntColumn& c) {
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i] < 0 || c[i] >= static_cast<int64_t>(t.lanes.size())) return false;
    return true;
  };
  return within(t.instants.name, 0) && within(t.counters.name, -1) && lanes_within(t.instants.lane) &&
         lanes_within(t.counters.lane) && t.instants.lane.size() == t.instants.ts.size() &&
         t.instants.name.size() == t.instants.ts.size() && t.instants.arg.size() == t.instants.ts.size() &&
         t.instants.scope.size() == t.instants.ts.size() && t.counters.lane.size() == t.counters.ts.size() &&
         t.instants.quiet_before.size() == t.instants.ts.size() && t.instants.quiet_after.size() == t.instants.ts.size() &&
         t.instants.busy_before.size() == t.instants.ts.size() && t.instants.busy_after.size() == t.instants.ts.size() &&
         t.counters.name.size() == t.counters.ts.size();
}

bool get_skeleton(Reader& r, Trace* t) {
  std::size_t names = r.count();
  for (std::size_t i = 0; i < names && r.ok(); ++i)
    if (t->names.intern(r.text()) != i) return false;  // a name twice: not what we wrote
  get_profile(r, &t->profile);
  get_window(r, &t->window);
  t->jobque = r.b();
  get_lanes(r, names, t);
  r.column(&t->instants.ts, true);
  for (IntColumn* c : {&t->instants.lane, &t->instants.name, &t->instants.arg, &t->instants.scope,
                       &t->instants.quiet_before, &t->instants.quiet_after, &t->instants.busy_before,
                       &t->instants.busy_after})
    r.column(c);
  r.column(&t->counters.ts, true);
  for (IntColumn* c : {&t->counters.lane, &t->counters.name}) r.column(c);
  uint64_t attribution = r.u();
  if (attribution > static_cast<uint64_t>(Attribution::unread_profile)) return false;
  t->attribution = static_cast<Attribution>(attribution);
  t->categories.resize(r.count());
  for (Category& c : t->categories) {
    c.name = r.text();
    c.color = r.text();
    c.guessed = r.b();
  }
  std::size_t processes = r.count();
  for (std::size_t i = 0; i < processes && r.ok(); ++i) {
    ProcessId pid = get_process(r, names);
    t->process_names.push_back({pid, r.text()});
  }
  t->start_ns = r.s();
  t->end_ns = r.s();
  t->has_time = r.b();
  for (uint64_t& n : t->phase_counts) n = r.u();
  for (uint64_t* n : {&t->events, &t->malformed, &t->unclosed_begins, &t->unmatched_ends}) *n = r.u();
  t->duration_sum_ns = r.s();
  get_read(r, &t->read);
  return r.ok() && names_in_range(*t);
}

// ---------------------------------------------------------------------------------------
// Blocks.

void put_blocks(Writer& w, const std::vector<IndexBlock>& blocks) {
  w.u(blocks.size());
  uint64_t previous = 0;
  for (const IndexBlock& b : blocks) {
    w.u(b.start - previous);  // blocks are in file order: small deltas
    w.u(b.stop == UINT64_MAX ? 0 : b.stop - b.start + 1);
    previous = b.start;
    w.b(b.has_time);
    w.s(b.lo_ns);
    w.s(b.hi_ns);
    w.b(b.has_metadata);
    w.u(b.publish_blocks.size());
    for (uint32_t p : b.publish_blocks) w.u(p);
  }
}

bool get_blocks(Reader& r, std::vector<IndexBlock>* blocks) {
  std::size_t n = r.count();
  uint64_t previous = 0;
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    IndexBlock& b = blocks->emplace_back();
    b.start = previous + r.u();
    uint64_t length = r.u();
    b.stop = length == 0 ? UINT64_MAX : b.start + length - 1;
    previous = b.start;
    b.has_time = r.b();
    b.lo_ns = r.s();
    b.hi_ns = r.s();
    b.has_metadata = r.b();
    b.publish_blocks.resize(r.count());
    for (uint32_t& p : b.publish_blocks) {
      uint64_t at = r.u();
      if (at >= n) return false;
      p = static_cast<uint32_t>(at);
    }
  }
  if (!r.ok()) return false;
  for (std::size_t i = 0; i < blocks->size(); ++i) {  // in file order, each stopping where the next starts
    const IndexBlock& b = (*blocks)[i];
    bool last = i + 1 == blocks->size();
    if (last ? b.stop != UINT64_MAX : b.stop != (*blocks)[i + 1].start || b.stop <= b.start) return false;
  }
  return true;
}

/// Access points: their windows deflated (32 KiB of JSON text each is mostly repeats).
void put_points(Writer& w, const std::vector<GzipPoint>& points) {
  w.u(points.size());
  uint64_t out = 0, in = 0;
  for (const GzipPoint& p : points) {
    w.u(p.out - out);
    w.u(p.in - in);
    out = p.out;
    in = p.in;
    w.u(p.bits);
    if (p.packed_size || p.window.empty()) {  // packed where it was found (or read from an index)
      w.u(p.packed_size);
      w.text(p.window);
      continue;
    }
    GzipPoint packed = p;
    pack_point(&packed);
    w.u(packed.packed_size);
    w.text(packed.window);
  }
}

bool get_points(Reader& r, std::vector<GzipPoint>* points) {
  std::size_t n = r.count();
  uint64_t out = 0, in = 0;
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    GzipPoint& p = points->emplace_back();
    p.out = out += r.u();
    p.in = in += r.u();
    uint64_t bits = r.u(), size = r.u();
    // Kept packed: a command inflates the few windows it uses (unpack_point).
    p.window = r.text();
    if (!r.ok() || bits > 7 || size > 32 * 1024) return false;
    p.bits = static_cast<uint8_t>(bits);
    p.packed_size = static_cast<uint32_t>(size);
    if (size == 0) p.window.clear();
  }
  return r.ok();
}

uint32_t crc_of(const Input& input, uint64_t offset, std::size_t n) {
  std::string bytes(n, '\0');
  std::size_t got = input.read_at(offset, bytes.data(), n);
  return static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(got)));
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char* cwd = ::getcwd(nullptr, 0);
  std::string out = cwd ? std::string(cwd) + "/" + path : path;
  std::free(cwd);
  return out;
}

/// The user's cache directory for indexes, or "" when there is none: with no HOME there is
/// no cache (a shared fallback such as /tmp would let other users plant indexes there).
std::string cache_directory() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/jqtrace";
  const char* home = std::getenv("HOME");
  return home && *home == '/' ? std::string(home) + "/.cache/jqtrace" : "";
}

/// The cache's name for a trace: its file name and a hash of its absolute path (two
/// traces of one name in different directories get different indexes).
std::string cached_index_path(const std::string& trace_path) {
  std::string dir = cache_directory();
  if (dir.empty()) return "";
  std::string abs = absolute(trace_path);
  std::string base = base_name(abs);
  uint32_t hash = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(abs.data()), static_cast<uInt>(abs.size())));
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  return dir + "/" + base + "-" + hex + ".jqx";
}

bool make_directories(const std::string& dir) {
  for (std::size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

/// `size` bytes of an open file, read into memory whose pages are populated in one call (an
/// index is read once, whole: one call, not ~1,500 separate page faults as read() fills a
/// fresh buffer). Read, not mapped: a file cut short while it is mapped kills the reader
/// with SIGBUS at the first page past its new end; read, it is only short (and then fails
/// its length and CRC checks).
class IndexFileBytes {
 public:
  IndexFileBytes(int fd, std::size_t size) : capacity_(size) {
    if (capacity_ == 0) return;
    void* p = ::mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<char*>(p);
    size_ = read_at(fd, 0, data_, capacity_);  // short when cut since fstat: fails the checks
  }
  ~IndexFileBytes() {
    if (data_) ::munmap(data_, capacity_);
  }
  IndexFileBytes(const IndexFileBytes&) = delete;
  IndexFileBytes& operator=(const IndexFileBytes&) = delete;
  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }

 private:
  char* data_ = nullptr;
  std::size_t capacity_ = 0, size_ = 0;
};

/// Bytes of text decoded past a block's end: a part proves it stopped at a boundary by
/// seeing the next event's '{' there.
constexpr uint64_t kBlockTail = 64;
/// The most a block's text is given room for before it is decoded (an index's blocks are
/// ~256 KiB; a forged one may claim any length).
constexpr uint64_t kMaxReserve = 16u << 20;

/// The text of chosen blocks of a compressed file, decoded once, in order: block k waits
/// until every earlier block was copied out (run_parallel hands blocks out in order, so
/// the block being decoded is always one a thread is working on).
class DecodedBlocks {
 public:
  DecodedBlocks(const Input& input, std::vector<ByteRange> blocks) : blocks_(std::move(blocks)) {
    if (auto open = input.text_again()) input_ = open();
  }

  /// Block k's text, and a few bytes after it (a part proves it stopped at a boundary by
  /// seeing the next event's '{'). False when the decoder fails or the text ends early.
  bool text(std::size_t k, std::string* out) {
    std::unique_lock<std::mutex> lock(mutex_);
    turn_.wait(lock, [&] { return next_ == k; });
    bool ok = copy(blocks_[k], out);
    ++next_;
    turn_.notify_all();
    return ok;
  }

 private:
  static constexpr std::size_t kChunk = 256 * 1024;

  bool copy(const ByteRange& block, std::string* out) {
    if (!input_ || !skip_to(block.start)) return false;
    uint64_t end = block.stop == UINT64_MAX ? UINT64_MAX : block.stop + kBlockTail;
    bool more = true;
    while (more && window_start_ + window_.size() < end) more = fill();
    if (!input_ok_) return false;
    std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(end, window_start_ + window_.size()) - block.start);
    out->assign(window_, static_cast<std::size_t>(block.start - window_start_), n);
    return block.stop == UINT64_MAX || window_start_ + window_.size() > block.stop;
  }

  /// Drops the text before offset (decoding and dropping what lies between).
  bool skip_to(uint64_t offset) {
    while (window_start_ + window_.size() < offset) {
      window_start_ += window_.size();
      window_.clear();
      if (!fill()) return false;
    }
    window_.erase(0, static_cast<std::size_t>(offset - window_start_));
    window_start_ = offset;
    return true;
  }

  /// Appends up to kChunk decoded bytes; false at the end or on an error.
  bool fill() {
    std::size_t had = window_.size();
    window_.resize(had + kChunk);
    long n = input_->read(window_.data() + had, kChunk);
    window_.resize(had + static_cast<std::size_t>(std::max(n, 0L)));
    if (n < 0 && !input_->cut_short()) input_ok_ = false;  // a stream cut short just ends (a truncated trace)
    return n > 0;
  }

  std::vector<ByteRange> blocks_;
  std::unique_ptr<RawInput> input_;
  bool input_ok_ = true;
  std::string window_;           ///< decoded text from window_start_
  uint64_t window_start_ = 0;
  std::mutex mutex_;
  std::condition_variable turn_;
  std::size_t next_ = 0;
};

/// A source over one block's text held in memory, at the block's offsets.
std::unique_ptr<Source> block_source(std::string text, const ByteRange& block, const std::string& prefix,
                                     const std::string& name) {
  std::size_t window = std::min(Source::kWindow, text.size() + prefix.size() + 1);
  auto in = prefixed_input(memory_input(std::move(text)), prefix);
  return std::make_unique<Source>(std::move(in), name, 0, std::make_unique<RecordingLineIndex>(),
                                  block.start - prefix.size(), window);
}

/// Writes bytes to path through a temporary file renamed over it: a reader never sees half
/// an index. Makes the cache's directories as needed.
bool write_atomically(const std::string& path, const std::string& bytes, std::string* why) {
  std::string dir = path.substr(0, path.rfind('/'));
  if (path.rfind('/') != std::string::npos && !dir.empty() && !make_directories(dir)) {
    *why = "cannot create " + dir + ": " + std::strerror(errno);
    return false;
  }
  // A fresh name made with O_EXCL (mkstemp): a predictable one, in a directory others can
  // write (a trace in /tmp), lets them plant a symlink there that we would write through.
  std::string temp = path + ".XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    *why = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fchmod(fd, 0644) == 0;  // as readable as a file written the usual way
  for (std::size_t at = 0; ok && at < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) at += static_cast<std::size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    *why = "cannot write " + path + ": " + std::strerror(errno);
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------

BlockOpener block_opener(std::shared_ptr<Input> input, const TraceIndex& index, const std::vector<ByteRange>& blocks) {
  std::string prefix = index.prefix;
  if (index.compression == Compression::none) {
    return [input, prefix, blocks](std::size_t k) { return Source::open_part(*input, blocks[k].start, prefix); };
  }
  if (index.compression == Compression::gzip && index.points.size() > 1) {
    // Each block decoded from the access point before it, on any thread.
    auto points = std::make_shared<std::vector<GzipPoint>>(index.points);
    return [points, input, prefix, blocks](std::size_t k) -> std::unique_ptr<Source> {
      const ByteRange& b = blocks[k];
      const GzipPoint* from = point_before(*points, b.start);
      std::string text;
      uint64_t end = b.stop == UINT64_MAX ? UINT64_MAX : b.stop + kBlockTail;
      // Room for the block at once: grown by doubling, a 1 MiB block would touch twice its
      // pages (each a fault of ~9 µs here), 500 a block.
      if (end != UINT64_MAX && end > b.start) text.reserve(static_cast<std::size_t>(std::min<uint64_t>(end - b.start, kMaxReserve)));
      if (!from || b.start < prefix.size() || !decode_from_point(input, *from, b.start, end, &text)) return nullptr;
      return block_source(std::move(text), b, prefix, input->name());
    };
  }
  auto decoded = std::make_shared<DecodedBlocks>(*input, blocks);
  return [decoded, input, prefix, blocks](std::size_t k) -> std::unique_ptr<Source> {
    std::string text;
    if (!decoded->text(k, &text) || blocks[k].start < prefix.size()) return nullptr;
    return block_source(std::move(text), blocks[k], prefix, input->name());
  };
}

std::optional<FileIdentity> identify_file(const Input& input) {
  if (!input.regular()) return std::nullopt;
  const struct stat& st = input.status();
  FileIdentity id;
  id.size = input.size();
  id.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.head_crc = crc_of(input, 0, static_cast<std::size_t>(std::min<uint64_t>(id.size, kEnds)));
  uint64_t tail = std::min<uint64_t>(id.size, kEnds);
  id.tail_crc = crc_of(input, id.size - tail, static_cast<std::size_t>(tail));
  return id;
}

std::vector<uint32_t> TraceIndex::blocks_overlapping(Range range) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].has_time && blocks[i].lo_ns <= range.hi && blocks[i].hi_ns >= range.lo) out.push_back(i);
  return out;
}

std::vector<uint32_t> TraceIndex::blocks_for(Range range, bool metadata) const {
  std::vector<bool> wanted(blocks.size());
  for (uint32_t i : blocks_overlapping(range)) {
    wanted[i] = true;
    for (uint32_t p : blocks[i].publish_blocks) wanted[p] = true;
  }
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < blocks.size(); ++i)
    if (wanted[i] || (metadata && blocks[i].has_metadata)) out.push_back(i);
  return out;
}

// ---------------------------------------------------------------------------------------

void BlockRecorder::on_event(const RawEvent& e, const Interner& names) {
  if (publish_name_ == Interner::kNone) publish_name_ = names.find(kPublish);
  if (open_ && e.offset - blocks_.back().start >= block_bytes_) close_block();
  if (!open_) {
    blocks_.emplace_back().start = e.offset;
    open_ = true;
    recent_chains_.fill(INT64_MIN);
  }
  IndexBlock& b = blocks_.back();
  open_end_ = e.end_offset;
  if (e.ph == 'M') b.has_metadata = true;
  if (e.ph == 'B' || e.ph == 'E') begin_end_ = true;
  bool timed = e.has_ts && !(e.problems & (kTsNotNumber | kTsOutOfRange));
  if (timed) {
    int64_t end = e.ts_ns;
    bool dur = e.has_dur && !(e.problems & (kDurNotNumber | kDurOutOfRange)) && e.dur_ns > 0;
    if (dur && __builtin_add_overflow(e.ts_ns, e.dur_ns, &end)) end = INT64_MAX;
    b.lo_ns = b.has_time ? std::min(b.lo_ns, e.ts_ns) : e.ts_ns;
    b.hi_ns = b.has_time ? std::max(b.hi_ns, end) : end;
    b.has_time = true;
  }
  if (e.has_chain) {
    // A block's events name a few thousand chains many times each: a direct-mapped
    // table of the chains seen keeps the list (sorted at the block's end) short.
    int64_t& seen = recent_chains_[static_cast<uint64_t>(e.chain) % recent_chains_.size()];
    if (seen != e.chain) {
      seen = e.chain;
      open_chains_.push_back(e.chain);
    }
    if (e.ph == 'X' && e.name == publish_name_) publish_block_[e.chain] = static_cast<uint32_t>(blocks_.size() - 1);
  }
}

void BlockRecorder::close_block() {
  std::sort(open_chains_.begin(), open_chains_.end());
  open_chains_.erase(std::unique(open_chains_.begin(), open_chains_.end()), open_chains_.end());
  chains_.push_back(std::move(open_chains_));
  open_chains_.clear();
  open_ = false;
}

void BlockRecorder::absorb(SplittableSink& later_sink, const std::vector<uint32_t>&) {
  auto& later = static_cast<BlockRecorder&>(later_sink);
  if (later.blocks_.empty()) return;
  if (open_) close_block();
  if (later.open_) later.close_block();
  auto base = static_cast<uint32_t>(blocks_.size());
  for (IndexBlock& b : later.blocks_) blocks_.push_back(std::move(b));
  for (auto& c : later.chains_) chains_.push_back(std::move(c));
  publish_block_.absorb_each(later.publish_block_, [&](int64_t chain, uint32_t block) { publish_block_[chain] = base + block; });
  begin_end_ = begin_end_ || later.begin_end_;
  later = BlockRecorder(later.block_bytes_);
}

std::vector<IndexBlock> BlockRecorder::finish(unsigned threads) {
  if (open_) close_block();
  // A lookup a chain a block, in a table of every chain: a serial step after the parse,
  // so spread over the threads (the table is only read).
  run_parallel(blocks_.size(), threads, [&](std::size_t i) {
    IndexBlock& b = blocks_[i];
    b.stop = i + 1 < blocks_.size() ? blocks_[i + 1].start : UINT64_MAX;
    for (int64_t chain : chains_[i]) {
      const uint32_t* p = publish_block_.find(chain);
      if (p && *p != i) b.publish_blocks.push_back(*p);
    }
    std::sort(b.publish_blocks.begin(), b.publish_blocks.end());
    b.publish_blocks.erase(std::unique(b.publish_blocks.begin(), b.publish_blocks.end()), b.publish_blocks.end());
  });
  chains_.clear();
  return std::move(blocks_);
}

std::unique_ptr<SplittableSink> SinkPair::fork() const {
  auto a = first_->fork(), b = second_->fork();
  auto pair = std::make_unique<SinkPair>(a.get(), b.get());
  pair->owned_first_ = std::move(a);
  pair->owned_second_ = std::move(b);
  return pair;
}

void SinkPair::absorb(SplittableSink& later_sink, const std::vector<uint32_t>& names) {
  auto& later = static_cast<SinkPair&>(later_sink);
  first_->absorb(*later.first_, names);
  second_->absorb(*later.second_, names);
}

// ---------------------------------------------------------------------------------------

namespace {

/// The payload as stored. A compressed trace's: a zlib stream when that is shorter (the
/// skeleton's varints shrink ~2.6x, which keeps the index ~1.3% of a .gz, not ~1.7%; the
/// access points' windows are deflated already). Level 1: within 2% of level 6 here, and
/// the index pass is timed against a validate pass. A plain trace's index is ~0.1% of it
/// either way: stored as it is, so a query does not inflate it (~20 ms on a 4 GB trace).
/// Stored as long as the payload: as it is; shorter: deflated.
std::string stored_payload(const std::string& raw, Compression trace) {
  if (trace == Compression::none) return raw;
  uLongf bound = compressBound(static_cast<uLong>(raw.size()));
  std::string stored(bound, '\0');
  if (compress2(reinterpret_cast<Bytef*>(stored.data()), &bound, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), 1) != Z_OK ||
      bound >= raw.size())
    return raw;
  stored.resize(bound);
  return stored;
}

/// Room to inflate a payload into: what a real one inflates to (~3x the stored bytes),
/// bounded by the stored bytes, not by the length a corrupt header may claim. Room given at
/// once is written once; a buffer grown by doubling touches twice the pages (a page fault
/// costs ~9 µs on the machines we measure on).
std::size_t first_room(std::string_view stored, uint64_t raw_length) {
  return static_cast<std::size_t>(std::min<uint64_t>(raw_length, 8 * uint64_t{stored.size()} + (1u << 20)));
}

/// After a call of the inflater that filled raw (made: what it wrote): doubles the room up
/// to raw_length. False when the stream cannot be right: longer than raw_length (the room
/// was full at raw_length and a call with none left did not end it), or cut short (a call
/// with room made nothing). *last_try: the one call allowed with no room, which lets an
/// inflater whose text filled the room exactly read the stream's end.
bool room_after(std::string* raw, uint64_t raw_length, bool full, std::size_t made, bool* last_try) {
  if (!full) return made != 0;
  if (raw->size() >= raw_length) return !std::exchange(*last_try, true);
  raw->resize(static_cast<std::size_t>(std::min<uint64_t>(raw_length, 2 * uint64_t{raw->size()} + 1)));
  return true;
}

#ifdef JQTRACE_HAVE_ISAL
/// Through ISA-L (a zlib stream, its Adler-32 checked): ~4x fewer instructions than zlib
/// for the 15 MB payload of a 4 GB trace's index, which every query inflates.
bool inflate_into(std::string_view stored, uint64_t raw_length, std::string* raw) {
  auto state = std::make_unique<inflate_state>();
  isal_inflate_init(state.get());
  state->crc_flag = ISAL_ZLIB;
  const auto* in = reinterpret_cast<const unsigned char*>(stored.data());
  std::size_t read = 0, got = 0;
  bool last_try = false;
  for (;;) {
    IsalRun run = isal_run(state.get(), in + read, stored.size() - read,
                           reinterpret_cast<unsigned char*>(raw->data()) + got, raw->size() - got);
    if (run.failed || run.read < 0 || static_cast<std::size_t>(run.read) > stored.size() - read) return false;
    read += static_cast<std::size_t>(run.read);
    got += run.made;
    if (run.finished) break;
    if (!room_after(raw, raw_length, got == raw->size(), run.made, &last_try)) return false;
  }
  raw->resize(got);
  return read == stored.size();
}
#else
bool inflate_into(std::string_view stored, uint64_t raw_length, std::string* raw) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stored.data()));
  z.avail_in = static_cast<uInt>(stored.size());
  std::size_t got = 0;
  bool last_try = false;
  int status = Z_OK;
  while (status == Z_OK || status == Z_BUF_ERROR) {
    z.next_out = reinterpret_cast<Bytef*>(raw->data()) + got;
    z.avail_out = static_cast<uInt>(raw->size() - got);
    status = inflate(&z, Z_NO_FLUSH);
    std::size_t made = raw->size() - got - z.avail_out;
    got += made;
    if (status != Z_STREAM_END && !room_after(raw, raw_length, got == raw->size(), made, &last_try)) status = Z_DATA_ERROR;
  }
  inflateEnd(&z);
  raw->resize(got);
  return status == Z_STREAM_END && z.avail_in == 0;
}
#endif

/// A deflated payload inflated, which must come to exactly raw_length bytes. Memory grows
/// with what actually comes out (never with what a corrupt header claims).
bool inflate_payload(std::string_view stored, uint64_t raw_length, std::string* raw) {
  if (stored.size() > raw_length) return false;
  raw->resize(first_room(stored, raw_length));
  return inflate_into(stored, raw_length, raw) && raw->size() == raw_length;
}

}  // namespace

std::string serialize_index(const TraceIndex& index, const Trace& trace) {
  Writer payload;
  payload.u(static_cast<unsigned>(index.compression));
  payload.text(index.prefix);
  payload.b(index.ranges);
  put_blocks(payload, index.blocks);
  put_points(payload, index.points);
  put_skeleton(payload, trace);
  return index_file_bytes(index.identity, payload.bytes(), index.compression);
}

std::string index_file_bytes(const FileIdentity& identity, const std::string& payload, Compression trace) {
  Writer file;
  file.bytes().append(kMagic, sizeof kMagic);
  file.u32(TraceIndex::kVersion);
  file.u64(identity.size);
  file.u64(static_cast<uint64_t>(identity.mtime_ns));
  file.u64(static_cast<uint64_t>(identity.ctime_ns));
  file.u64(identity.device);
  file.u64(identity.inode);
  file.u32(identity.head_crc);
  file.u32(identity.tail_crc);
  std::string body = stored_payload(payload, trace);
  file.u64(payload.size());
  file.u64(body.size());
  file.u32(static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
  file.bytes() += body;
  return std::move(file.bytes());
}

namespace {

/// What an index file's fixed-size header says.
struct IndexHeader {
  FileIdentity identity;  ///< of the trace it describes
  uint64_t raw_length = 0, length = 0;  ///< the payload, inflated and as stored
  uint32_t crc = 0;                     ///< of the stored payload
};
constexpr std::size_t kHeaderBytes = sizeof kMagic + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 4 + 8 + 8 + 4;

/// The header at the start of bytes (at least kHeaderBytes of them), or false with why.
bool parse_header(std::string_view bytes, IndexHeader* h, std::string* why) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    *why = "not a jqtrace index";
    return false;
  }
  Reader head(bytes.substr(sizeof kMagic, kHeaderBytes - sizeof kMagic));
  uint32_t version = head.u32();
  if (head.ok() && version != TraceIndex::kVersion) {
    *why = "written in index format " + std::to_string(version) + ", this jqtrace reads format " +
           std::to_string(TraceIndex::kVersion);
    return false;
  }
  h->identity.size = head.u64();
  h->identity.mtime_ns = static_cast<int64_t>(head.u64());
  h->identity.ctime_ns = static_cast<int64_t>(head.u64());
  h->identity.device = head.u64();
  h->identity.inode = head.u64();
  h->identity.head_crc = head.u32();
  h->identity.tail_crc = head.u32();
  h->raw_length = head.u64();
  h->length = head.u64();
  h->crc = head.u32();
  if (!head.ok()) *why = "truncated or corrupt";
  return head.ok();
}

}  // namespace

bool parse_index(std::string_view bytes, TraceIndex* index, std::string* why) {
  IndexHeader h;
  if (!parse_header(bytes, &h, why)) return false;
  index->identity = h.identity;
  uint64_t raw_length = h.raw_length;
  std::string_view body = bytes.substr(kHeaderBytes);
  if (body.size() != h.length ||
      crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())) != h.crc) {
    *why = "truncated or corrupt";
    return false;
  }
  std::string inflated;
  std::string_view payload = body;  // stored as it is when as long
  if (body.size() != raw_length) {
    if (!inflate_payload(body, raw_length, &inflated)) {
      *why = "corrupt";
      return false;
    }
    payload = inflated;
  }
  Reader r(payload);
  uint64_t compression = r.u();
  index->compression = compression == 1 ? Compression::gzip : compression == 2 ? Compression::zstd : Compression::none;
  index->prefix = r.text();
  index->ranges = r.b();
  if (!get_blocks(r, &index->blocks) || !get_points(r, &index->points) || !get_skeleton(r, &index->skeleton) ||
      !r.at_end()) {
    *why = "corrupt";
    return false;
  }
  return true;
}

std::string index_path_for_writing(const std::string& trace_path) {
  std::string beside = trace_path + ".jqx";
  if (::access(directory_of(trace_path).c_str(), W_OK) == 0) return beside;
  return cached_index_path(trace_path);
}

std::vector<std::string> index_paths_for_reading(const std::string& trace_path) {
  std::vector<std::string> paths{trace_path + ".jqx"};
  if (std::string cached = cached_index_path(trace_path); !cached.empty()) paths.push_back(cached);
  return paths;
}

std::string write_index(const Input& input, const Trace& trace, const ReadResult& read, BlockRecorder& recorder,
                        std::vector<GzipPoint> points, unsigned threads, std::string* why) {
  const std::string& path = input.path();
  auto identity = identify_file(input);
  if (!identity) {
    *why = "not a regular file";
    return "";
  }
  TraceIndex index;
  index.identity = *identity;
  index.compression = read.compression;
  index.prefix = read.container == Container::array ? "[" : "{\"traceEvents\":[";
  index.ranges = !recorder.saw_begin_end();
  index.blocks = recorder.finish(threads);
  if (read.compression == Compression::gzip) index.points = std::move(points);
  std::string bytes = serialize_index(index, trace);
  recorder.note_written(index.blocks.size(), bytes.size());
  // Beside the trace; where that fails (a read-only file system, which even root cannot
  // write), in the cache.
  std::string out = index_path_for_writing(path);
  if (!out.empty() && write_atomically(out, bytes, why)) return out;
  if (out != path + ".jqx") {
    if (out.empty()) *why = "the trace's directory is not writable and there is no cache directory (HOME is not set)";
    return "";
  }
  out = cached_index_path(path);
  if (out.empty()) return "";  // *why: the write beside the trace's
  return write_atomically(out, bytes, why) ? out : "";
}

namespace {

/// An index file's bytes when its header describes the trace as it is now and the file is
/// as long as the header says; else nullopt and *why. The header is read first, so a
/// stale, foreign or forged index costs 80 bytes of reading, however large the file.
std::optional<std::string_view> read_index_of(int fd, uint64_t file_size, const Input& trace,
                                              std::optional<IndexFileBytes>* file, std::string* why, bool* stale) {
  char head_bytes[kHeaderBytes];
  IndexHeader h;
  if (!parse_header(std::string_view(head_bytes, read_at(fd, 0, head_bytes, sizeof head_bytes)), &h, why))
    return std::nullopt;
  auto now = identify_file(trace);
  if (!now || !(*now == h.identity)) {
    *stale = true;
    return std::nullopt;
  }
  if (file_size != kHeaderBytes + h.length) {
    *why = "truncated or corrupt";
    return std::nullopt;
  }
  file->emplace(fd, static_cast<std::size_t>(file_size));
  return (*file)->bytes();
}

}  // namespace

namespace {

/// What kind of file a mode names, for messages.
const char* file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

std::optional<TraceIndex> read_fresh_index(const Input& trace, std::string* warning) {
  if (!trace.regular()) return std::nullopt;
  const std::string& path = trace.path();
  for (const std::string& candidate : index_paths_for_reading(path)) {
    // Without blocking: opening a FIFO planted under the index's name would wait for a
    // writer forever. Anything but a regular file is ignored below, with a warning as every
    // other unusable index gets.
    int fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      *warning = candidate + ": not a regular file (" + file_type_name(st.st_mode) + "); ignored (jqtrace index " +
                 path + " writes one once it is removed)";
      return std::nullopt;
    }
    // An index says where a range's events are: one planted by another user (beside a
    // trace in a directory others can write) could make a window silently wrong.
    if (st.st_uid != ::geteuid() && st.st_uid != trace.status().st_uid) {
      ::close(fd);
      *warning = candidate + ": owned by another user (uid " + std::to_string(st.st_uid) +
                 ") than you and the trace; ignored";
      return std::nullopt;
    }
    std::optional<IndexFileBytes> file;
    std::string why;
    bool stale = false;
    std::optional<std::string_view> bytes = read_index_of(fd, static_cast<uint64_t>(st.st_size), trace, &file, &why, &stale);
    ::close(fd);
    TraceIndex index;
    if (bytes && parse_index(*bytes, &index, &why)) return index;  // its identity is the header's, checked
    if (stale)
      *warning = candidate + ": stale (the trace changed since it was indexed); ignored (jqtrace index " + path +
                 " writes a new one)";
    else
      *warning = candidate + ": " + why + "; ignored (jqtrace index " + path + " writes a new one)";
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace jqtrace
