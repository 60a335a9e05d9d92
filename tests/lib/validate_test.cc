// One test per validate rule: a tiny trace that breaks it and the exact message.
#include <doctest/doctest.h>

#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
/// The diagnostics as the CLI prints them (without the file name), one per line.
std::string problems(const std::string& json) { return join(validate_string(json).lines()); }
std::string one(std::string line) { return line; }
/// A publish on the caller lane (tid 2), late enough that the lane does not look stopped.
std::string publish(int stage, const char* ts = "1") {
  return std::string(R"({"ph":"X","pid":0,"tid":2,"ts":)") + ts + R"(,"dur":0.4,"name":"publish","args":{"stage":)" +
         std::to_string(stage) + R"(,"arg":3,"chain":17}})";
}
std::string chunk(int tid, int stage, int chain, const char* ts = "1") {
  return std::string(R"({"ph":"X","pid":0,"tid":)") + std::to_string(tid) + R"(,"ts":)" + ts +
         R"(,"dur":1,"name":"chunk","args":{"stage":)" + std::to_string(stage) + R"(,"arg":0,"chain":)" +
         std::to_string(chain) + "}}";
}
}  // namespace

TEST_CASE("the corpus-like samples are clean") {
  ValidateRun run = validate_string(trace_of({chunk(0, 0, 17), chunk(0, 1, 17), publish(2 | (1 << 8))}, kProfile));
  CHECK(join(run.lines()) == "");
  CHECK(run.result.jobque);
  CHECK(run.result.events == 3);
}

TEST_CASE("rule json-syntax") {
  CHECK(problems("{\"traceEvents\":[\n{\"ph\":\"i\" \"ts\":1}]}") ==
        one("2:11: error: missing ',' or '}' after object member [json-syntax]"));
}

TEST_CASE("rule not-a-trace") {
  CHECK(problems(R"({"events":[]})") == one("0:0: error: not a trace: no \"traceEvents\" array [not-a-trace]"));
}

TEST_CASE("rule truncated") {
  CHECK(problems("{\"traceEvents\":[\n{\"ph\":\"i\",\"name\":\"a\",\"ts\":1},\n{\"ph\"") ==
        one("3:6: error: the trace is cut off at byte 52 (1 complete events) [truncated]"));
}

TEST_CASE("rule trace-events-not-array") {
  auto lines = validate_string(R"({"traceEvents":7})").lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "1:16: error: traceEvents is not an array [trace-events-not-array]");
}

TEST_CASE("rule event-not-object") {
  CHECK(problems("[\n\"x\"]") == one("2:1: error: traceEvents element is not an object [event-not-object]"));
}

TEST_CASE("rule missing-field / per phase") {
  CHECK(problems(R"([{"ph":"X","name":"a","ts":1}])") == one("1:2: error: 'X' event has no dur [missing-field]"));
  CHECK(problems(R"([{"ph":"B","ts":1}])") == join({"1:2: error: 'B' event has no name [missing-field]",
                                                    "1:2: warning: B event on lane 0:0 is never closed [unclosed-begin]"}));
  CHECK(problems(R"([{"ph":"C","name":"c","ts":1}])") == one("1:2: error: 'C' event has no args [missing-field]"));
  CHECK(problems(R"([{"ph":"i","name":"c"}])") == one("1:2: error: 'i' event has no ts [missing-field]"));
  CHECK(problems(R"([{"name":"c","ts":1}])") == one("1:2: error: event has no ph [missing-field]"));
}

TEST_CASE("rule bad-field-type") {
  CHECK(problems(R"([{"ph":"i","name":3,"ts":1}])") == one("1:2: error: name is not a string [bad-field-type]"));
  CHECK(problems(R"([{"ph":"i","name":"a","ts":1,"pid":[1]}])") ==
        one("1:2: error: pid is not an integer or a string [bad-field-type]"));
}

TEST_CASE("rule bad-ts") {
  CHECK(problems(R"([{"ph":"i","name":"a","ts":-5}])") == one("1:2: error: ts is negative (-5) [bad-ts]"));
  CHECK(problems(R"([{"ph":"i","name":"a","ts":"5"}])") == one("1:2: error: ts is not a number [bad-ts]"));
  CHECK(problems(R"([{"ph":"i","name":"a","ts":1e300}])") == one("1:2: error: ts is out of range [bad-ts]"));
}

TEST_CASE("rule bad-dur") {
  CHECK(problems(R"([{"ph":"X","name":"a","ts":1,"dur":-0.5}])") == one("1:2: error: dur is negative (-0.5) [bad-dur]"));
  CHECK(problems(R"([{"ph":"X","name":"a","ts":1,"dur":null}])") == one("1:2: error: dur is not a number [bad-dur]"));
}

TEST_CASE("rule unknown-phase") {
  CHECK(problems(R"([{"ph":"Z","name":"a","ts":1}])") == one("1:2: error: unknown phase 'Z' [unknown-phase]"));
}

TEST_CASE("rule bad-instant-scope") {
  CHECK(problems(R"([{"ph":"i","s":"q","name":"a","ts":1}])") ==
        one("1:2: error: instant scope 'q' is not g, p or t [bad-instant-scope]"));
}

TEST_CASE("rule bad-counter-args") {
  CHECK(problems(R"([{"ph":"C","name":"c","ts":1,"args":{"v":"high"}}])") ==
        one("1:2: error: counter args must be one or more numbers [bad-counter-args]"));
}

TEST_CASE("rule unknown-metadata") {
  CHECK(problems(R"([{"ph":"M","name":"num_cpus","args":{"n":2}}])") ==
        one("1:2: warning: unknown metadata event 'num_cpus' [unknown-metadata]"));
}

TEST_CASE("rule unclosed-begin") {
  CHECK(problems(R"([{"ph":"B","name":"a","ts":1,"pid":1,"tid":2}])") ==
        one("1:2: warning: B event on lane 1:2 is never closed [unclosed-begin]"));
}

TEST_CASE("rule unmatched-end") {
  CHECK(problems(R"([{"ph":"E","ts":1,"pid":1,"tid":2}])") ==
        one("1:2: warning: E event on lane 1:2 closes nothing [unmatched-end]"));
}

TEST_CASE("rules profile-shape / profile-version / profile-duplicate / profile-color") {
  ValidateRun run = validate_string(R"({"traceEvents":[],"jobqueProfile":{"version":3,"lanes":-1,)"
                                    R"("categories":[{"id":1,"name":"a","color":"#12345"},{"id":1,"name":"b"}]}})");
  CHECK(join(run.lines()) == join({
                                 "1:46: error: unsupported jobqueProfile version 3 (expected 1) [profile-version]",
                                 "1:56: error: jobqueProfile.lanes is not a positive integer [profile-shape]",
                                 "1:100: error: category 'a' color is not #RRGGBB [profile-color]",
                                 "1:110: error: category id 1 is defined twice [profile-duplicate]",
                             }));
}

TEST_CASE("rule jobque-args") {
  CHECK(problems(trace_of({R"({"ph":"X","pid":0,"tid":0,"ts":1,"dur":1,"name":"chunk","args":{"chain":3}})"})) ==
        one("2:1: error: chunk lacks integer args.stage, args.arg and args.chain [jobque-args]"));
}

TEST_CASE("rule marker-unregistered / with a suggestion") {
  CHECK(problems(trace_of({R"({"ph":"i","s":"g","pid":0,"tid":2,"ts":1,"name":"tokn","args":{"arg":0}})"}, kProfile)) ==
        one("2:1: error: global instant 'tokn' is not a marker of jobqueProfile (1 events); did you mean 'token'? "
            "[marker-unregistered]"));
}

TEST_CASE("rule nstages-range") {
  CHECK(problems(trace_of({publish(7 | (1 << 8))}, kProfile)) ==
        one("2:1: error: publish of chain 17 declares 7 stages (expected 1..6) [nstages-range]"));
}

TEST_CASE("rule stage-range: chunk before its publish (reported after the pass)") {
  CHECK(problems(trace_of({chunk(0, 0, 17), chunk(0, 2, 17), publish(2 | (1 << 8))}, kProfile)) ==
        one("3:1: error: an event of chain 17 has stage 2 but the chain has 2 stages [stage-range]"));
}

TEST_CASE("rule stage-range: chunk after its publish (reported at once)") {
  CHECK(problems(trace_of({publish(1 | (1 << 8)), chunk(2, 1, 17)}, kProfile)) ==
        one("3:1: error: chunk of chain 17 has stage 1 but the chain has 1 stages [stage-range]"));
}

TEST_CASE("rule duplicate-publish") {
  CHECK(problems(trace_of({publish(1 | (1 << 8)), publish(1 | (1 << 8))}, kProfile)) ==
        one("3:1: error: chain 17 is published again [duplicate-publish]"));
}

TEST_CASE("rule tid-range") {
  CHECK(problems(trace_of({chunk(5, 0, 17), publish(1 | (1 << 8))}, kProfile)) ==
        one("2:1: error: lane 0:5 has tid 5 but jobqueProfile.lanes is 3 [tid-range]"));
}

TEST_CASE("rule orphan-chain") {
  CHECK(problems(trace_of({chunk(0, 0, 41), chunk(0, 1, 41)}, kProfile)) ==
        one("3:1: warning: chain 41 has 2 chunk/stage_wait events but no publish (a full ring?) [orphan-chain]"));
}

TEST_CASE("rule unregistered-tag (only when a profile names tags)") {
  CHECK(problems(trace_of({publish(1 | (9 << 8))}, kProfile)) ==
        one("2:1: warning: tag 9 has no category in jobqueProfile (1 publishes; shown as 'router') [unregistered-tag]"));
  CHECK(problems(trace_of({publish(1 | (9 << 8))})).empty());  // a legacy trace
}

TEST_CASE("rule lane-stopped-early") {
  CHECK(problems(trace_of({chunk(0, 0, 17, "1"), chunk(1, 0, 17, "5000"), publish(1 | (1 << 8), "5000")},
                          kProfile)) ==
        one("2:1: warning: lane 0:0 stops recording at 2 us, 4999 us before the trace ends (ring full?) "
            "[lane-stopped-early]"));
  // A lane that ends a little early (under 1 ms or 10% of the span) is just idle.
  CHECK(problems(trace_of({chunk(0, 0, 17, "1"), chunk(1, 0, 17, "900"), publish(1 | (1 << 8), "900")}, kProfile)) ==
        "");
}

TEST_CASE("a truncated trace skips the rules a cut would trip") {
  std::string cut = trace_of({chunk(0, 0, 17, "1"), chunk(1, 0, 19, "100")}, kProfile);
  cut.resize(cut.find("]"));
  ValidateRun run = validate_string(cut);
  CHECK(run.has_rule("truncated"));
  CHECK_FALSE(run.has_rule("orphan-chain"));
  CHECK_FALSE(run.has_rule("lane-stopped-early"));
}

TEST_CASE("counts per rule / errors and warnings") {
  ValidateRun run = validate_string(R"([{"ph":"Z","ts":1},{"ph":"Z","ts":1},{"ph":"E","ts":1}])");
  CHECK(run.result.errors == 2);
  CHECK(run.result.warnings == 1);
  CHECK(run.result.rule_counts.at("unknown-phase") == 2);
}

TEST_CASE("rule duplicate-key: a warning at the event, the last value counting") {
  ValidateRun v = validate_string(trace_of({R"({"ph":"X","name":"a","ts":1,"dur":2,"ts":3,"pid":0,"tid":0})"}));
  CHECK(v.has_rule("duplicate-key"));
  CHECK(v.result.errors == 0);
  CHECK(v.result.warnings == 1);
  REQUIRE(v.lines().size() == 1);
  CHECK(v.lines()[0] == "2:1: warning: a field appears twice in the event; its last value counts [duplicate-key]");
}

TEST_CASE("rule bad-string: invalid UTF-8 or a NUL in a kept string is an error") {
  ValidateRun bytes = validate_string(trace_of({"{\"ph\":\"X\",\"name\":\"a\xFF\",\"ts\":1,\"dur\":2,\"pid\":0,\"tid\":0}"}));
  CHECK(bytes.has_rule("bad-string"));
  CHECK(bytes.result.errors == 1);
  ValidateRun nul = validate_string(trace_of({R"({"ph":"X","name":"a\u0000","ts":1,"dur":2,"pid":0,"tid":0})"}));
  CHECK(nul.has_rule("bad-string"));
  ValidateRun profile = validate_string(
      trace_of({R"({"ph":"X","name":"a","ts":1,"dur":2,"pid":0,"tid":0})"},
               "{\"version\":1,\"categories\":[{\"id\":1,\"name\":\"x\xC3\",\"color\":\"#000000\"}],\"markers\":[]}"));
  CHECK(profile.has_rule("bad-string"));
  ValidateRun fine = validate_string(trace_of({R"({"ph":"X","name":"caf\u00e9 \ud83d\ude00","ts":1,"dur":2,"pid":0,"tid":0})"}));
  CHECK_FALSE(fine.has_rule("bad-string"));  // escapes that decode to valid UTF-8 are fine
}

// ---- validation riding along a model load (ValidationTee) ----
namespace {


std::vector<std::string> with_counts(const ValidateRun& run) {
  std::vector<std::string> lines = run.lines();
  lines.push_back(std::to_string(run.result.errors) + " errors, " + std::to_string(run.result.warnings) +
                  " warnings, " + std::to_string(run.result.events) + " events, readable " +
                  std::to_string(run.result.readable) + ", jobque " + std::to_string(run.result.jobque));
  return lines;
}

/// validate_trace over the file, as `jqtrace validate -j 1` runs it.
std::vector<std::string> validated_alone(const std::string& path) {
  ValidateRun run;
  auto src = Source::open(path, nullptr);
  REQUIRE(src);
  run.result = validate_trace(*src, run.got);
  return with_counts(run);
}

/// The same checks made while loading the model: in one pass (threads 1), in file parts, or
/// in stream parts (a compressed file), as `jqtrace report` loads. *exact: whether the
/// parts' checks joined exactly.
std::vector<std::string> validated_along(const std::string& path, unsigned threads, uint64_t part_bytes,
                                         bool* exact) {
  Trace trace;
  ValidationTee tee;
  LoadOptions options;
  options.tee = &tee;
  ReadResult r;
  if (threads < 2 || !load_trace_parallel(input_of(path), threads, &trace, nullptr, options, {}, &r, part_bytes)) {
    auto src = Source::open(path, nullptr);
    REQUIRE(src);
    r = load_trace(*src, &trace, nullptr, options);
  }
  *exact = tee.exact();
  auto locator = Source::open(path, nullptr);
  REQUIRE(locator);
  ValidateRun run;
  run.result = tee.conclude(run.got, *locator, r, trace.names);
  return with_counts(run);
}

/// A broken trace of every kind the validator reports, many events long so that small
/// parts cut it everywhere: E without B, negative ts, a duplicate key, a bad string, a
/// metadata event without args, an unknown phase, overlapping spans, a B never closed.
std::string broken_trace(int n) {
  std::string t = "{\"traceEvents\":[\n";
  for (int i = 0; i < n; ++i) {
    t += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i % 3) + ",\"ts\":" + std::to_string(i * 10) +
         ",\"dur\":" + (i % 97 == 3 ? "50" : "5") + ",\"name\":\"e" + std::to_string(i % 7) + "\"},\n";
    if (i % 211 == 5) t += "{\"ph\":\"E\",\"pid\":1,\"tid\":0,\"ts\":" + std::to_string(i * 10) + "},\n";
    if (i % 307 == 9) t += "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(i * 10) + ",\"name\":\"b\"},\n";
    if (i % 401 == 7) t += "{\"ph\":\"X\",\"pid\":1,\"ts\":-5,\"ts\":3,\"dur\":1,\"name\":\"neg\"},\n";
    if (i % 503 == 1) t += "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":1,\"dur\":1,\"name\":\"\xff\"},\n";
    if (i % 601 == 2) t += "{\"ph\":\"M\",\"pid\":1,\"name\":\"thread_name\"},\n7,\n{\"ph\":\"?\"},\n";
  }
  return t + "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":5,\"name\":\"mark\"}\n]}\n";
}

/// Thousands of lanes opened by a B in the first half and closed by an E in the second
/// (string and numeric tids, four pids), with a stray E on some: parts see each lane first,
/// or again, and the joins must find each one.
std::string many_lanes_trace(int lanes) {
  std::string t = "{\"traceEvents\":[\n";
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < lanes; ++k) {
      std::string tid = k % 2 ? std::to_string(k) : std::string("\"t") + std::to_string(k) + "\"";
      std::string ids = "\"pid\":" + std::to_string(k % 4) + ",\"tid\":" + tid;
      t += pass == 0 ? "{\"ph\":\"B\"," + ids + ",\"ts\":" + std::to_string(k) + ",\"name\":\"b\"},\n"
                     : "{\"ph\":\"E\"," + ids + ",\"ts\":" + std::to_string(lanes + k) + "},\n";
      if (pass == 1 && k % 97 == 0) t += "{\"ph\":\"E\"," + ids + ",\"ts\":" + std::to_string(lanes + k) + "},\n";
    }
  return t + "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":5,\"name\":\"mark\"}\n]}\n";
}

}  // namespace

TEST_CASE("validation along a load reports what validate reports: one pass, file parts, stream parts") {
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const char* name : {"broken.trace.json", "ring-full.trace.json", "decode-small.trace.json",
                           "truncated.trace.json", "chrome-small.json", "array-form.json", "legacy-small.trace.json"})
    inputs.emplace_back(name, sample_bytes(name));
  inputs.emplace_back("broken (generated)", broken_trace(3000));
  inputs.emplace_back("broken, cut off", broken_trace(2000).substr(0, 90000));
  inputs.emplace_back("broken, json error", broken_trace(2000).replace(60000, 1, "#"));
  inputs.emplace_back("many lanes", many_lanes_trace(3000));
  for (auto& [name, bytes] : inputs) {
    for (bool gz : {false, true}) {
      CAPTURE(name);
      CAPTURE(gz);
      TempFile file(gz ? gzip_bytes(bytes) : bytes);
      std::vector<std::string> alone = validated_alone(file.path);
      for (auto [threads, part] : {std::pair<unsigned, uint64_t>{1, 0}, {3, 256}, {2, 4096}, {3, 1u << 20}}) {
        CAPTURE(threads);
        CAPTURE(part);
        bool exact = false;
        std::vector<std::string> along = validated_along(file.path, threads, part, &exact);
        CHECK(exact);
        CHECK(along == alone);
      }
    }
  }
}

TEST_CASE("validation along a load: a join that cannot be exact says so (the caller validates alone)") {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 600; ++i) {
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":" + std::to_string(i * 10) + ",\"dur\":5,\"name\":\"e\"},\n";
    if (i == 50 || i == 450)  // the same chain published twice, far apart
      text += "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":" + std::to_string(i * 10) +
              ",\"dur\":1,\"name\":\"publish\",\"args\":{\"stage\":2,\"arg\":0,\"chain\":7}},\n";
  }
  text += "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":5,\"name\":\"m\"}\n],\"jobqueProfile\":{\"version\":1}}\n";
  TempFile file(text);
  bool exact = true;
  validated_along(file.path, 3, 256, &exact);
  CHECK_FALSE(exact);
  std::vector<std::string> one_pass = validated_along(file.path, 1, 0, &exact);
  CHECK(exact);
  CHECK(one_pass == validated_alone(file.path));
}
