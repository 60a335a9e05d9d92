#include "parts.h"

namespace jqtrace {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// Looks for the place after or at `from` (and before `limit`) where a line starts with
/// '{' and the text before it, blanks aside, ends with ','. npos when there is none.
std::size_t next_cut(std::string_view text, std::size_t from, std::size_t limit) {
  for (std::size_t nl = text.find('\n', from); nl != std::string_view::npos && nl < limit;
       nl = text.find('\n', nl + 1)) {
    std::size_t at = nl + 1;
    while (at < text.size() && blank(text[at])) ++at;
    if (at >= text.size() || text[at] != '{') continue;
    std::size_t before = nl;
    while (before > 0 && blank(text[before - 1])) --before;
    if (before > 0 && text[before - 1] == ',') return at;
  }
  return std::string_view::npos;
}

}  // namespace

PartPlan plan_parts(std::string_view text, unsigned parts, uint64_t min_part) {
  PartPlan plan;
  plan.starts.push_back(0);
  std::size_t first = 0;
  while (first < text.size() && blank(text[first])) ++first;
  if (first == text.size()) return plan;
  // Assigned from std::string: GCC 12 warns falsely (-Wrestrict) on assigning literals here.
  static const std::string kObjectPrefix = "{\"traceEvents\":[", kArrayPrefix = "[";
  if (text[first] == '{') plan.prefix = kObjectPrefix;
  else if (text[first] == '[') plan.prefix = kArrayPrefix;
  else return plan;  // not a trace: the sequential reader says why
  uint64_t size = text.size();
  if (parts < 2 || size < 2 * min_part) return plan;
  uint64_t want = std::min<uint64_t>(parts, size / min_part);
  for (uint64_t k = 1; k < want; ++k) {
    std::size_t target = static_cast<std::size_t>(size * k / want);
    if (target <= plan.starts.back() + min_part / 2) continue;
    // Search up to a part's length for a cut: the next part starts there.
    std::size_t cut = next_cut(text, target, std::min<std::size_t>(text.size(), target + size / want));
    if (cut == std::string_view::npos || cut < plan.prefix.size()) continue;
    if (cut + min_part / 2 > size) break;
    plan.starts.push_back(cut);
  }
  return plan;
}

}  // namespace jqtrace
