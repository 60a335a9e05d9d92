#pragma once
// The "jqtraceWindow" key a trace written by `jqtrace window` carries next to traceEvents
// (Perfetto and catapult ignore unknown keys): where the window came from and the range
// its scope covered, so that analyses of the window default to that range (SPEC §2
// "Windows") and validate knows its lanes end where the cut is, on purpose.
//
//   "jqtraceWindow":{"version":1,"source":"big.json","scope":"--marker token 3 --unit-at end","kind":"token",
//                    "lo_us":9378.887,"hi_us":24619.743,"rebased_by_us":0,
//                    "units":{"token":"end","layer":"start in token","step":"start (ambiguous)"},
//                    "first_marker":{"token":2,"layer":64,"step":2},
//                    "edges":{"spans_kept_whole":3,"publishes_outside":1,"extent_us":[9370.5,24630.1]}}
#include <cstdint>
#include <string>
#include <vector>

#include "json_value.h"

namespace jqtrace {

struct WindowRecord {
  bool present = false;
  std::string source;         ///< the file the window was cut from
  std::string scope;          ///< the scope as a command line (Scope::label)
  std::string marker_kind;    ///< the kind of a --marker scope ("kind"; "" for a time range)
  int64_t lo_ns = 0;          ///< the scope's range in this file's clock
  int64_t hi_ns = 0;
  int64_t rebased_by_ns = 0;  ///< subtracted from every ts by --rebase (0: the source's clock)
  /// How each marker kind's units were cut in the source (SPEC §2 "Units"): analyses of
  /// the window cut theirs the same way ("units":{"token":"end","layer":"start in token"}).
  struct KindRule {
    std::string kind;
    bool at_end = false;
    std::string nested_in;  ///< "" when not nested
    /// Auto could not decide in the source ("start (ambiguous)"): the window's units are cut
    /// so, and gates and baselines on them are refused there as in the source.
    bool ambiguous = false;
    /// The source's number of the window's first marker of this kind ("first_marker"): the
    /// window's units keep the numbers they had in the source (token 3's window holds
    /// token 3, not token 0).
    int64_t first_marker = 0;
  };
  std::vector<KindRule> units;
  /// Written by `window --view` (its spans named for the viewer, tracks and flows added).
  bool view = false;
  /// The window's edges, written for people (not read back): spans the scope's edges cross,
  /// kept whole; publishes kept from outside the scope for their chains' categories; and
  /// the extent of the file's events, which viewers show (it runs past the scope by both).
  struct Edges {
    bool present = false;
    uint64_t spans_kept_whole = 0, publishes_outside = 0;
    int64_t extent_lo_ns = 0, extent_hi_ns = 0;
  } edges;
};

/// Reads a jqtraceWindow value; not present (ignored) unless lo_us <= hi_us are numbers.
WindowRecord interpret_window_record(const JsonValue& value);

/// The value's JSON text, as window writes it.
std::string window_record_json(const WindowRecord& record);

}  // namespace jqtrace
