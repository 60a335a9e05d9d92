#pragma once
// The "jqtrace/validate/1" schema: the verdict over every file, the count of each rule,
// each file's verdict, and the diagnostics --max-errors let through.
#include <map>
#include <string>
#include <vector>

#include "diagnostic.h"
#include "model.h"
#include "validate.h"

namespace jqtrace::result {

struct ValidatedFile {
  std::string file;               ///< as shown
  ValidateResult result;
  std::vector<Diagnostic> kept;   ///< what --max-errors lets through
  uint64_t omitted = 0;
  bool valid = false;
};

Document validate_document(const std::vector<ValidatedFile>& files, bool all_valid);

}  // namespace jqtrace::result
