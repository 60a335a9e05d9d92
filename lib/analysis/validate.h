#pragma once
// `validate`: every rule of SPEC §3 checked in one streaming pass with bounded memory.
// Per-event rules are reported as the events arrive; rules that need the whole file
// (a chain's publish comes after its chunks, the profile after the events) keep a few
// bytes per chain, lane, tag or marker name and report after the pass.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "diagnostic.h"
#include "reader.h"
#include "source.h"

namespace jqtrace {

struct ValidateResult {
  ReadResult read;
  bool readable = true;   ///< false: the input could not be read as a trace (exit 3)
  bool jobque = false;
  uint64_t events = 0;
  uint64_t errors = 0;
  uint64_t warnings = 0;
  std::map<std::string_view, uint64_t> rule_counts;  ///< rules that fired, by id
};

/// Checks the trace in source, reporting each problem to out as it is found.
ValidateResult validate_trace(Source& source, DiagnosticSink& out);

/// The same check of an input read in parts on up to `threads` threads (as load_trace_parallel):
/// the same diagnostics in the same order, reported after the read. False, with nothing
/// reported, when the file does not split (see load_trace_parallel) or when a broken
/// trace's rules need the parts in order: the caller then uses validate_trace.
bool validate_trace_parallel(const std::shared_ptr<Input>& input, unsigned threads, DiagnosticSink& out,
                             const ProgressFn& progress, uint64_t min_part_bytes, ValidateResult* result);
/// The same for a text in memory in up to `parts` parts on `threads` threads (tests and
/// fuzzing, as load_text_parallel).
bool validate_text_parallel(std::shared_ptr<const std::string> text, unsigned parts, unsigned threads,
                            DiagnosticSink& out, uint64_t min_part_bytes, ValidateResult* result);

/// Validation riding along a model load (LoadOptions::tee): the checks of validate_trace
/// on the events the load reads, so a command that needs both reads the file once. Split
/// and joined with the load's parts; a join the validator cannot make exactly (only broken
/// traces: see validate_trace_parallel) leaves it !exact(), and the caller validates in a
/// pass of its own.
class ValidationTee final : public SplittableSink {
 public:
  ValidationTee();
  ~ValidationTee() override;
  ValidationTee(const ValidationTee&) = delete;
  ValidationTee& operator=(const ValidationTee&) = delete;

  std::unique_ptr<SplittableSink> fork() const override;
  void absorb(SplittableSink& later, const std::vector<uint32_t>& names) override;
  void bind(Interner& names) override;
  DiagnosticSink* container_diagnostics() override;
  void on_event(const RawEvent& e, const Interner& names) override;
  void on_profile(const JobqueProfile& p) override;
  void on_window_record(const WindowRecord& w) override;
  void on_root_member(RootMember m, uint64_t offset) override;

  /// Whether every join was exact (the result is validate_trace's).
  bool exact() const;
  /// Reports what was found, in file order, to out (positions from locator), then the rules
  /// that need the whole file. read: the load's result; names: the loaded model's interner
  /// (where the bound one was moved to). Once: what the tee kept is freed.
  ValidateResult conclude(DiagnosticSink& out, Source& locator, const ReadResult& read, Interner& names);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace jqtrace
