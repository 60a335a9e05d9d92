#pragma once
// The legend jobque traces carry in their "jobqueProfile" key.
#include <cstdint>
#include <string>
#include <vector>

namespace jqtrace {

struct ProfileCategory {
  int64_t id = 0;      ///< the tag publishes carry (stage >> 8)
  std::string name;
  std::string color;   ///< "#RRGGBB", or empty when the profile gave none
};

struct ProfileMarker {
  int64_t id = 0;
  std::string name;    ///< the instant event name of this marker kind
};

struct JobqueProfile {
  bool present = false;
  int64_t version = 0;
  int64_t lanes = 0;   ///< 0 when absent
  std::vector<ProfileCategory> categories;
  std::vector<ProfileMarker> markers;
  /// Why the trace's jobqueProfile could not be read (past jqtrace's limits), empty when
  /// it was (or there is none): its categories and markers are then unknown, not absent.
  std::string unread;

  const ProfileCategory* category(int64_t id) const {
    for (const auto& c : categories)
      if (c.id == id) return &c;
    return nullptr;
  }
  bool has_marker(std::string_view name) const {
    for (const auto& m : markers)
      if (m.name == name) return true;
    return false;
  }
};

}  // namespace jqtrace

#include "diagnostic.h"
#include "json_value.h"

namespace jqtrace {

/// Reads a jobqueProfile value, reporting shape problems (profile-* rules) to diags
/// (may be null). What is well-formed is kept; malformed entries are dropped.
JobqueProfile interpret_profile(const JsonValue& value, DiagnosticSink* diags);

/// True for "#RRGGBB" (hex digits in either case).
bool is_hex_color(std::string_view color);

}  // namespace jqtrace
