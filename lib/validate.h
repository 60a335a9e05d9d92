#pragma once
// `validate`: every rule of SPEC §3 checked in one streaming pass with bounded memory.
// Per-event rules are reported as the events arrive; rules that need the whole file
// (a chain's publish comes after its chunks, the profile after the events) keep a few
// bytes per chain, lane, tag or marker name and report after the pass.
#include <cstdint>
#include <map>
#include <string>

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

}  // namespace jqtrace
