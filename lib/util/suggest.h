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

/// What a person may have meant by word: the closest match when there is one, else the
/// candidates holding word as a part of them, case aside ('attn' for 'attn chain' and
/// 'attn std'), those starting with it first, at most `limit`.
std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       std::size_t limit = 4);

/// " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)", " (did you mean 'a', 'b' or
/// 'c'?)"; "" for none.
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace jqtrace
