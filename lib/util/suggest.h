#pragma once
// "Did you mean": the closest of a few valid names to a mistyped one.
#include <string>
#include <string_view>
#include <vector>

namespace jqtrace {

/// Edit distance in bytes: insertions, deletions, substitutions and swaps of two
/// neighbouring bytes (optimal string alignment) cost one each.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to word, or empty when none is within a third of its length
/// (at least one edit is always allowed).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace jqtrace
