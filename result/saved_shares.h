#pragma once
// Reading shares back from a saved document (a baseline): `stats --format json`'s groups,
// `latency --format json`'s shares. One reader, so both refuse the same bad input alike.
#include <string>
#include <string_view>

#include "gate_metrics.h"

namespace jqtrace::result {

/// True when head starts like a document of this schema (its schema is the first key).
bool looks_like_schema(std::string_view head, std::string_view schema);

/// Which document, and where its shares are.
struct SavedShares {
  std::string_view schema;   ///< "jqtrace/stats/1"
  std::string_view command;  ///< "stats": messages name the command that saves it
  std::string_view table;    ///< the array of {"name", "share_pct"} rows: "groups"
  std::string_view item;     ///< what a row is, for messages: "group"
  /// The document's grouping is its "by" field (required); empty: every such document is
  /// grouped alike, and this is its name.
  std::string_view fixed_by;
};

/// The shares, scope and grouping of a saved document; false with a reason when it is not one.
bool read_saved_shares(std::string_view text, const SavedShares& what, BaselineShares* out, std::string* error);

}  // namespace jqtrace::result
