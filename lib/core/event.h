#pragma once
// One trace event as the reader hands it to a sink: every field the analyses and the
// validator look at, already converted (times in integer ns, names interned), plus flags
// saying what was missing or malformed. Sinks decide what a problem means to them.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "interner.h"
#include "source.h"

namespace jqtrace {

/// A pid or tid: JSON allows numbers and strings.
struct ProcessId {
  int64_t number = 0;
  uint32_t text = Interner::kNone;  ///< interned, when is_string
  bool present = false;
  bool is_string = false;
  bool operator==(const ProcessId&) const = default;  // 16 bytes: two a lane
};

/// A lane, (pid, tid), as an ordered key (for maps of lanes).
using LaneKey = std::tuple<bool, int64_t, uint32_t, bool, int64_t, uint32_t>;
inline LaneKey lane_key(const ProcessId& pid, const ProcessId& tid) {
  return {pid.is_string, pid.number, pid.text, tid.is_string, tid.number, tid.text};
}

/// id as another interner names it (names: Interner::intern_all's mapping).
inline ProcessId reinterned(ProcessId id, const std::vector<uint32_t>& names) {
  if (id.is_string && id.text != Interner::kNone) id.text = names[id.text];
  return id;
}
inline LaneKey reinterned(LaneKey key, const std::vector<uint32_t>& names) {
  auto text = [&](bool is_string, uint32_t t) { return is_string && t != Interner::kNone ? names[t] : t; };
  std::get<2>(key) = text(std::get<0>(key), std::get<2>(key));
  std::get<5>(key) = text(std::get<3>(key), std::get<5>(key));
  return key;
}

/// "pid:tid" as people read it, names for string ids.
inline std::string lane_label(const ProcessId& pid, const ProcessId& tid, const Interner& names) {
  auto id = [&](const ProcessId& p) {
    return p.is_string ? std::string(names.view(p.text)) : std::to_string(p.number);
  };
  return id(pid) + ":" + id(tid);
}

/// Field-level problems (bits of RawEvent::problems).
enum EventProblem : uint32_t {
  kBadPh = 1u << 0,         ///< ph is not a one-character string
  kNameNotString = 1u << 1,
  kCatNotString = 1u << 2,
  kTsNotNumber = 1u << 3,
  kTsOutOfRange = 1u << 4,
  kDurNotNumber = 1u << 5,
  kDurOutOfRange = 1u << 6,
  kPidBad = 1u << 7,
  kTidBad = 1u << 8,
  kScopeBad = 1u << 9,      ///< s is not a one-character string
  kArgsNotObject = 1u << 10,
  kStageBad = 1u << 11,     ///< args.stage present but not an integer
  kArgBad = 1u << 12,
  kChainBad = 1u << 13,
  kDuplicateKey = 1u << 14,  ///< a field the reader knows appears twice (the last one counts)
  kBadString = 1u << 15,     ///< a string with invalid UTF-8 or a NUL (stored with \xHH escapes instead)
};

struct RawEvent {
  uint64_t offset = 0;     ///< byte offset of the event's '{' (Source::locate makes it line:column)
  uint64_t end_offset = 0; ///< one past its '}': the event's text is [offset, end_offset)
  char ph = 0;             ///< 0 when missing
  char scope = 0;          ///< instant scope s; 0 when missing
  bool has_ts = false, has_dur = false, has_args = false;
  bool has_stage = false, has_arg = false, has_chain = false;
  uint32_t name = Interner::kNone;
  uint32_t cat = Interner::kNone;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  ProcessId pid, tid;
  int64_t stage = 0, arg = 0, chain = 0;  ///< jobque args (and args.arg of markers)
  uint32_t args_numbers = 0;      ///< numeric top-level args values (counters)
  uint32_t args_non_numbers = 0;  ///< other top-level args values
  std::string arg_name;           ///< args.name (metadata events)
  uint32_t problems = 0;          ///< EventProblem bits
  /// A `window --view` file's renamed span: its original name and cat (args.jqtrace_name,
  /// args.jqtrace_cat), which the reader puts back before the sinks see the event.
  uint32_t view_name = Interner::kNone;
  uint32_t view_cat = Interner::kNone;
  /// args.jqtrace_view (or jqtrace_flow, a flow's end): an event `window --view` added for the viewer (a unit's track, a
  /// flow, a stretch not recorded); not part of the trace, the reader drops it.
  bool view_added = false;

  /// Back to a fresh event, keeping arg_name's storage (one reset per event: keep it cheap).
  void reset() {
    ph = scope = 0;
    has_ts = has_dur = has_args = has_stage = has_arg = has_chain = false;
    name = cat = Interner::kNone;
    ts_ns = dur_ns = stage = arg = chain = 0;
    pid = tid = ProcessId{};
    args_numbers = args_non_numbers = problems = 0;
    arg_name.clear();
    view_name = view_cat = Interner::kNone;
    view_added = false;
  }
};

}  // namespace jqtrace
