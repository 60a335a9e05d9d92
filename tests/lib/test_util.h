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

#include "reader.h"
#include "trace.h"
#include "validate.h"

namespace jqtrace::test {

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

/// The model of samples/NAME, loaded once per test run.
inline const Trace& load_sample(const std::string& name) {
  static std::map<std::string, Trace> cache;
  auto [it, added] = cache.try_emplace(name);
  if (added) {
    std::ifstream in(std::string(JQTRACE_SAMPLES) + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    load_string(ss.str(), &it->second);
  }
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
