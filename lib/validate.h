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

/// The same check of a regular, uncompressed file read in up to `threads` parts at once:
/// the same diagnostics in the same order, reported after the read. False, with nothing
/// reported, when the file does not split (see load_trace_parallel) or when a broken
/// trace's rules need the parts in order: the caller then uses validate_trace.
bool validate_trace_parallel(const std::string& path, unsigned threads, DiagnosticSink& out,
                             const ProgressFn& progress, uint64_t min_part_bytes, ValidateResult* result);

}  // namespace jqtrace
