#include "suggest.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace jqtrace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the optimal-string-alignment table: two letters swapped ("stast",
  // "fromat") is the commonest typo and costs one edit, not two.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best_distance <= std::max<std::size_t>(1, word.size() / 3) ? best : std::string();
}

namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  if (std::string near = closest_match(word, candidates); !near.empty()) return {near};
  std::string needle = lowered(word);
  if (needle.empty()) return {};
  struct Found {
    std::size_t at;
    const std::string* name;
  };
  std::vector<Found> found;
  for (const std::string& c : candidates)
    if (std::size_t at = lowered(c).find(needle); at != std::string::npos) found.push_back({at, &c});
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return (a.at == 0) > (b.at == 0); });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < found.size() && i < limit; ++i) out.push_back(*found[i].name);
  return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) list += i + 1 == names.size() ? " or " : ", ";
    list += "'" + names[i] + "'";
  }
  return " (did you mean " + list + "?)";
}

}  // namespace jqtrace
