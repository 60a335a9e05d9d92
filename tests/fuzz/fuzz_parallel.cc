// libFuzzer target: the parallel loader, with parts as small as 64 bytes, must build the
// model one pass builds (or decline and leave the read to one pass) for any bytes; the
// parallel validator, and validation riding a model load (report's), likewise report what
// the one-pass validator reports.
//
// Every input is cut into parts in memory and the parts read one after another (the joins
// are the subject, and they are the same code as for a file): an execution costs a few
// parses, not files and threads. One input in kThreadedEvery (by a hash of its bytes, so a
// mutation has that chance) is also read as files, on threads: the plain file in parts,
// the bytes gzipped (where the decoded stream is cut into parts as it comes, never
// declined: a stream cannot be read twice), and a gzip stream of many small deflate
// blocks, whose access points the ISA-L decoder takes as it decodes it each decode,
// through zlib and ISA-L, to the text after them. That path cost ~10 ms an execution
// (30 threads, a dozen files, zlib's and ISA-L's states): every input through it made
// this target run at 16-40 executions a second under ASan.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <unistd.h>
#include <zlib.h>

#include "decoders.h"
#include "gzip_points.h"
#include "raw_input.h"
#include "trace.h"
#include "validate.h"
#include "window.h"

using namespace jqtrace;

namespace {

constexpr unsigned kParts = 8;           ///< parts of a text cut in memory (each at least 64 bytes)
constexpr uint64_t kThreadedEvery = 64;  ///< one input in this many also takes the threaded path

struct CountingSink final : DiagnosticSink {
  std::size_t count = 0;
  void report(Diagnostic) override { ++count; }
};

std::string temp_path() {
  char name[] = "/tmp/jqtrace-fuzz-XXXXXX";
  int fd = mkstemp(name);
  if (fd >= 0) close(fd);
  return std::string(name);
}

std::string write_file(const std::string& path, const uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

std::string temp_file(const uint8_t* data, std::size_t size) {
  static std::string path = temp_path();
  return write_file(path, data, size);
}

/// The bytes gzipped, in *bytes and in a file whose path is returned.
std::string gzip_file(const uint8_t* data, std::size_t size, std::string* bytes) {
  static std::string path = temp_path();
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&z, size) + 64, '\0');
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  *bytes = out;
  return write_file(path, reinterpret_cast<const uint8_t*>(out.data()), out.size());
}

void check(bool ok) {
  if (!ok) std::abort();  // a difference between the parallel and the one-pass result
}

/// The bytes gzipped in deflate blocks of ~200 input bytes (Z_BLOCK flushes), with the
/// strategy (dynamic, fixed or stored blocks) the first byte picks: headers of every kind
/// for the access point hunt to stop at (or miss).
std::string small_blocks_gzip(const uint8_t* data, std::size_t size) {
  int level = size && data[0] % 4 == 3 ? 0 : 6;
  int strategy = size && data[0] % 4 == 2 ? Z_FIXED : Z_DEFAULT_STRATEGY;
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, strategy) != Z_OK) std::abort();
  std::string out(deflateBound(&z, size) + 64 + size / 4, '\0');
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  for (std::size_t at = 0;;) {
    std::size_t n = std::min<std::size_t>(200, size - at);
    z.next_in = const_cast<Bytef*>(data + at);
    z.avail_in = static_cast<uInt>(n);
    at += n;
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    bool last = at == size;
    int ret = deflate(&z, last ? Z_FINISH : Z_BLOCK);
    if (last ? ret != Z_STREAM_END : ret != Z_OK) std::abort();
    if (last) break;
  }
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// The file at path, opened as jqtrace opens a trace (it was just written: it opens).
std::shared_ptr<Input> input_of(const std::string& path) {
  std::string err;
  auto input = Input::open(path, &err);
  if (!input) std::abort();
  return input;
}

/// Access points taken by the ISA-L decoder: the text it hands out is unchanged, and each
/// point decodes (both inflaters) to the text after it.
void check_gzip_points(const uint8_t* data, std::size_t size) {
  if (!have_isal()) return;
  static std::string path = temp_path();
  std::string gz = small_blocks_gzip(data, size);
  write_file(path, reinterpret_cast<const uint8_t*>(gz.data()), gz.size());
  GzipPointHunt hunt(256);
  auto in = gzip_decoder(memory_input(gz), GzipEngine::isal, &hunt);
  std::string text;
  char buf[4096];
  for (long n; (n = in->read(buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  in.reset();
  check(text == std::string(reinterpret_cast<const char*>(data), size));
  auto file = input_of(path);
  for (const GzipPoint& p : hunt.points) {
    uint64_t to = std::min<uint64_t>(p.out + 600, text.size());
    for (GzipEngine engine : {GzipEngine::zlib, GzipEngine::isal}) {
      std::string got;
      check(decode_from_point(file, p, p.out, to, &got, engine) && got == text.substr(p.out, to - p.out));
    }
  }
}

void check_same_model(const ReadResult& r1, const Trace& one, const ReadResult& r2, const Trace& parts) {
  check(r1.status == r2.status);
  check(r1.events == r2.events);
  if (r1.status != ReadStatus::input_error) {
    check(one.lanes.size() == parts.lanes.size());
    check(one.counters.size() == parts.counters.size());
    check(one.instants.size() == parts.instants.size());
    check(one.start_ns == parts.start_ns && one.end_ns == parts.end_ns);
    for (std::size_t l = 0; l < one.lanes.size(); ++l) {
      check(one.lanes[l].spans.size() == parts.lanes[l].spans.size());
      check(one.thread_name(l) == parts.thread_name(l));
    }
  } else {
    check(r1.message == r2.message && r1.offset == r2.offset);
  }
}

/// What validation riding a load concluded (positions from locator) is what validating
/// alone found: expected, and expected_count problems.
void check_concluded(ValidationTee& tee, Source& locator, const ReadResult& r, Trace& trace,
                     const ValidateResult& expected, std::size_t expected_count) {
  CountingSink found;
  ValidateResult v = tee.conclude(found, locator, r, trace.names);
  check(v.errors == expected.errors && v.warnings == expected.warnings && v.events == expected.events);
  check(found.count == expected_count);
}

/// Loads text in memory as report does, in parts of 64 bytes read one after another,
/// validating along: the same counts as validating alone, unless a join could not be exact.
void check_validation_along_in_memory(const std::shared_ptr<const std::string>& text, const ValidateResult& expected,
                                      std::size_t expected_count) {
  Trace trace;
  ValidationTee tee;
  LoadOptions options;
  options.tee = &tee;
  ReadResult r;
  if (!load_text_parallel(text, kParts, 1, &trace, nullptr, options, &r, 64)) return;
  if (tee.exact()) check_concluded(tee, *Source::from_string(*text), r, trace, expected, expected_count);
}

/// FNV-1a of the bytes: picks the inputs that also take the threaded path.
uint64_t hash_of(const uint8_t* data, std::size_t size) {
  uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

/// Loads path as report does, validating along (one pass and in parts of 64 bytes): the
/// same counts as validating alone (expected), unless a join could not be exact.
void check_validation_along(const std::string& path, const ValidateResult& expected, std::size_t expected_count) {
  for (unsigned threads : {1u, 3u}) {
    Trace trace;
    ValidationTee tee;
    LoadOptions options;
    options.tee = &tee;
    ReadResult r;
    if (threads < 2 || !load_trace_parallel(input_of(path), threads, &trace, nullptr, options, {}, &r, 64)) {
      auto src = Source::open(path, nullptr);
      if (!src) std::abort();
      r = load_trace(*src, &trace, nullptr, options);
    }
    if (!tee.exact()) continue;
    auto locator = Source::open(path, nullptr);
    if (!locator) std::abort();
    check_concluded(tee, *locator, r, trace, expected, expected_count);
  }
}

/// What a window's index holds of each event, its lane as a label (ids differ by interner).
using IndexedEvent =
    std::tuple<uint64_t, uint64_t, int64_t, int64_t, int, int64_t, std::pair<int64_t, int64_t>, std::string>;
std::vector<IndexedEvent> indexed_events(const EventIndex& index, const Trace& trace) {
  std::vector<IndexedEvent> out;
  index.for_each([&](const EventIndex::Entry& e) {
    const auto& [pid, tid] = index.lanes()[e.lane];
    out.emplace_back(e.offset, e.end_offset, e.ts_ns, e.dur_ns, e.kind, e.chain, e.pair,
                     lane_label(pid, tid, trace.names));
  });
  return out;
}

/// A window's index (the model loaded without spans, as window does), one pass and in
/// parts: the same events in the same lanes.
void check_index_in_parts(const std::shared_ptr<const std::string>& text) {
  Trace one, parts;
  EventIndex whole, joined;
  LoadOptions options;
  options.spans = false;
  options.tee = &whole;
  auto source = Source::from_string(*text);
  ReadResult r1 = load_trace(*source, &one, nullptr, options);
  options.tee = &joined;
  ReadResult r2;
  if (!load_text_parallel(text, kParts, 1, &parts, nullptr, options, &r2, 64)) return;
  check(r1.status == r2.status);
  if (r1.status == ReadStatus::input_error) return;
  whole.finish(one.end_ns);
  joined.finish(parts.end_ns);
  check(indexed_events(whole, one) == indexed_events(joined, parts));
}

/// The joins in memory: model, validation, validation riding the load, a window's index.
void check_in_memory(const uint8_t* data, std::size_t size) {
  auto text = std::make_shared<const std::string>(reinterpret_cast<const char*>(data), size);
  Trace one, parts;
  auto source = Source::from_string(*text);
  ReadResult r1 = load_trace(*source, &one, nullptr);
  ReadResult r2;
  if (load_text_parallel(text, kParts, 1, &parts, nullptr, LoadOptions{}, &r2, 64)) check_same_model(r1, one, r2, parts);
  CountingSink a, b;
  auto again = Source::from_string(*text);
  ValidateResult v1 = validate_trace(*again, a);
  ValidateResult v2;
  if (validate_text_parallel(text, kParts, 1, b, 64, &v2)) {
    check(v1.errors == v2.errors && v1.warnings == v2.warnings);
    check(a.count == b.count);
  }
  check_validation_along_in_memory(text, v1, a.count);
  check_index_in_parts(text);
}

/// The same through files and threads, the gzip stream's parts, and gzip access points.
void check_threaded(const uint8_t* data, std::size_t size) {
  std::string path = temp_file(data, size);
  std::string gz_bytes;
  std::string gz = gzip_file(data, size, &gz_bytes);
  Trace one;
  auto source = Source::from_string(std::string(reinterpret_cast<const char*>(data), size));
  ReadResult r1 = load_trace(*source, &one, nullptr);
  Trace parts;
  ReadResult r2;
  if (load_trace_parallel(input_of(path), 3, &parts, nullptr, LoadOptions{}, {}, &r2, 64)) check_same_model(r1, one, r2, parts);
  // The gzipped copy decodes to the input's bytes as they are (one pass over the input
  // itself would decode them again when they are gzip: compare with one pass over the copy).
  // Two threads (one parsing beside the decoding one) are enough to exercise the joins.
  Trace one_gz, streamed;
  auto gz_source = Source::from_string(gz_bytes);
  ReadResult r1_gz = load_trace(*gz_source, &one_gz, nullptr);
  ReadResult r3;
  check(load_trace_parallel(input_of(gz), 2, &streamed, nullptr, LoadOptions{}, {}, &r3, 64));
  check_same_model(r1_gz, one_gz, r3, streamed);

  CountingSink a, b, c, d;
  auto again = Source::from_string(std::string(reinterpret_cast<const char*>(data), size));
  ValidateResult v1 = validate_trace(*again, a);
  ValidateResult v2;
  if (validate_trace_parallel(input_of(path), 3, b, {}, 64, &v2)) {
    check(v1.errors == v2.errors && v1.warnings == v2.warnings);
    check(a.count == b.count);
  }
  // Validation riding a model load (as report does): what validate_trace reports, unless a
  // join could not be exact (then report validates alone).
  check_validation_along(path, v1, a.count);
  auto gz_again = Source::from_string(gz_bytes);
  ValidateResult v1_gz = validate_trace(*gz_again, d);
  check_validation_along(gz, v1_gz, d.count);
  ValidateResult v3;
  check(validate_trace_parallel(input_of(gz), 2, c, {}, 64, &v3));
  check(v1_gz.errors == v3.errors && v1_gz.warnings == v3.warnings);
  check(d.count == c.count);
  check_gzip_points(data, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  check_in_memory(data, size);
  if (hash_of(data, size) % kThreadedEvery == 0) check_threaded(data, size);
  return 0;
}
