#pragma once
// Problems found in a trace. Every problem has a stable rule id (documented in
// man/jqtrace-validate.1) so scripts can count and filter them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "source.h"

namespace jqtrace {

enum class Severity { warning, error };

struct Diagnostic {
  Severity severity = Severity::error;
  std::string_view rule;  ///< one of the ids in rules(); static storage
  std::string message;
  uint64_t offset = kNoOffset;  ///< byte offset the problem points at
  TextPosition position;        ///< line:column of offset, filled in when reported
  static constexpr uint64_t kNoOffset = UINT64_MAX;  ///< not tied to one place in the file
};

struct RuleInfo {
  std::string_view id;
  Severity severity;
  std::string_view summary;
};

/// Every rule jqtrace checks, in the order validate reports counts.
const std::vector<RuleInfo>& rules();
/// The rule's entry; aborts on an unknown id (a programming error).
const RuleInfo& rule_info(std::string_view id);

/// Receives problems as they are found.
class DiagnosticSink {
 public:
  virtual ~DiagnosticSink() = default;
  virtual void report(Diagnostic d) = 0;
};

/// Keeps what it is told, in order (a part of a parallel read reports after the join).
struct CollectedDiagnostics final : DiagnosticSink {
  std::vector<Diagnostic> items;
  void report(Diagnostic d) override { items.push_back(std::move(d)); }
};

/// Convenience: a diagnostic whose severity is the rule's own.
Diagnostic make_diagnostic(std::string_view rule, std::string message, uint64_t offset = Diagnostic::kNoOffset);

}  // namespace jqtrace
