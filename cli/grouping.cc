#include "grouping.h"

#include "common.h"

namespace jqtrace::cli {

/// The grouping the user asked for, checked against the kind of trace.
bool choose_grouping(const std::string& by, const Trace& trace, GroupBy* out) {
  if (by.empty()) {
    *out = trace.jobque ? GroupBy::category : GroupBy::cat;
    return true;
  }
  parse_group_by(by, out);  // the option's check already limited the names
  if (!trace.jobque && *out == GroupBy::category) *out = GroupBy::cat;  // a generic trace's category is its cat
  if (!trace.jobque && *out == GroupBy::kind) {
    print_error("--by kind groups jobque span kinds; this is not a jobque trace (use cat, name or lane)");
    return false;
  }
  return true;
}

void add_grouping_option(CLI::App& cmd, std::string& by) {
  cmd.add_option("--by", by, "Group by category (jobque default), cat (generic default), name, lane, kind")
      ->check(CLI::IsMember({"category", "cat", "name", "lane", "kind"}))
      ->option_text("GROUPING");
}

}  // namespace jqtrace::cli
