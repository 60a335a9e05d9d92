#pragma once
// Helpers for unit tests: run the reader, the model builder or the validator over a trace
// held in a string, and collect what comes out.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include "reader.h"
#include "trace.h"
#include "validate.h"

namespace jqtrace::test {

/// The repository's samples/ folder (defined in main.cc, the one file compiled with its path).
extern const char* const kSamplesDir;

/// Numbers in [0, n) from a seed, the same on every machine (xorshift64), for generated traces.
struct XorShift {
  uint64_t x;
  int64_t operator()(uint64_t n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<int64_t>(x % n);
  }
};

/// A temporary file holding bytes, removed at the end of the scope.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/jqtrace-test-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

/// The file at path, opened as jqtrace opens a trace.
inline std::shared_ptr<Input> input_of(const std::string& path) {
  std::string err;
  auto input = Input::open(path, &err);
  REQUIRE_MESSAGE(input, path << ": " << err);
  return input;
}

/// text as one gzip member (zlib, at `level`).
inline std::string gzip_bytes(const std::string& text, int level = 6) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// Two models hold the same events, lane by lane (names compared as text: each model has
/// its own ids).
inline void check_same_model(const Trace& one, const Trace& other) {
  CHECK(other.events == one.events);
  CHECK(other.start_ns == one.start_ns);
  CHECK(other.end_ns == one.end_ns);
  CHECK(other.instants.size() == one.instants.size());
  CHECK(other.counters.size() == one.counters.size());
  REQUIRE(other.lanes.size() == one.lanes.size());
  for (std::size_t l = 0; l < one.lanes.size(); ++l) {
    CHECK(one.thread_name(l) == other.thread_name(l));
    const SpanTable &a = one.lanes[l].spans, &b = other.lanes[l].spans;
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a.ts[i] == b.ts[i]);
      CHECK(a.dur[i] == b.dur[i]);
      CHECK(one.names.view(static_cast<uint32_t>(a.name[i])) == other.names.view(static_cast<uint32_t>(b.name[i])));
    }
  }
}

inline std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

struct Collected final : EventSink, DiagnosticSink {
  std::vector<RawEvent> events;
  std::vector<Diagnostic> diagnostics;
  JobqueProfile profile;
  Interner* names = nullptr;
  void on_event(const RawEvent& e, const Interner&) override { events.push_back(e); }
  void on_profile(const JobqueProfile& p) override { profile = p; }
  void report(Diagnostic d) override { diagnostics.push_back(std::move(d)); }
  std::string name(const RawEvent& e) const { return std::string(names->view(e.name)); }
};

struct ReadRun {
  Interner names;
  Collected got;
  ReadResult result;
};

inline void read_string(const std::string& json, ReadRun& run) {
  auto src = Source::from_string(json);
  run.got.names = &run.names;
  run.result = read_trace(*src, run.got, run.names, &run.got);
}

inline ReadResult load_string(const std::string& json, Trace* trace) {
  auto src = Source::from_string(json);
  return load_trace(*src, trace, nullptr);
}

/// The bytes of samples/NAME.
inline std::string sample_bytes(const std::string& name) {
  std::ifstream in(std::string(kSamplesDir) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The model of samples/NAME, loaded once per test run.
inline const Trace& load_sample(const std::string& name) {
  static std::map<std::string, Trace> cache;
  auto [it, added] = cache.try_emplace(name);
  if (added) load_string(sample_bytes(name), &it->second);
  return it->second;
}

struct ValidateRun {
  Collected got;
  ValidateResult result;
  /// "LINE:COL: severity: message [rule]" per diagnostic, as the CLI prints them.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : got.diagnostics)
      out.push_back(std::to_string(d.position.line) + ":" + std::to_string(d.position.column) + ": " +
                    (d.severity == Severity::error ? "error" : "warning") + ": " + d.message + " [" +
                    std::string(d.rule) + "]");
    return out;
  }
  bool has_rule(std::string_view rule) const { return result.rule_counts.count(rule) > 0; }
};

inline ValidateRun validate_string(const std::string& json) {
  ValidateRun run;
  auto src = Source::from_string(json);
  run.result = validate_trace(*src, run.got);
  return run;
}

/// A jobque-style trace: the events (one per line) inside {"traceEvents":[...]} plus an
/// optional profile.
inline std::string trace_of(const std::vector<std::string>& events, const std::string& profile = "") {
  std::string s = "{\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i) s += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  s += "]";
  if (!profile.empty()) s += ",\"jobqueProfile\":" + profile;
  return s + "}";
}

inline const char* kProfile =
    R"({"version":1,"lanes":3,"categories":[{"id":1,"name":"attn chain","color":"#5E96DE"},)"
    R"({"id":3,"name":"ffn chain","color":"#43B08A"}],"markers":[{"id":0,"name":"token"},{"id":1,"name":"layer"}]})";

}  // namespace jqtrace::test
