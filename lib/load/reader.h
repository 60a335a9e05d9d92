#pragma once
// The streaming trace reader: RapidJSON's SAX Reader (iterative, numbers as text, trailing
// commas allowed) driving an explicit state machine that turns the JSON into RawEvents.
//
// States (the handler's `State`):
//   start ──{──▶ root-object ──"traceEvents"──▶ events ──{──▶ event-key ⇄ event-value
//     │                │                                             └─"args"{─▶ args ⇄ args-value
//     │                ├──"jobqueProfile"{──▶ profile (a small value tree, read after)
//     │                ├──"jqtraceWindow"{──▶ profile state too (its own small tree)
//     │                └──other key──▶ skip (any subtree, by depth)
//     └──[──▶ events (array form; the closing ']' is optional)
// Events are handed to the sink only when complete (their '}' was read), so a truncated
// file yields every complete event and nothing half-read.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diagnostic.h"
#include "event.h"
#include "interner.h"
#include "profile.h"
#include "source.h"
#include "window_record.h"

namespace jqtrace {

class EventSink {
 public:
  virtual ~EventSink() = default;
  /// A complete event. Names in e are ids in `names`.
  virtual void on_event(const RawEvent& e, const Interner& names) = 0;
  /// The jobqueProfile, once read (before or after the events).
  virtual void on_profile(const JobqueProfile&) {}
  /// The jqtraceWindow record of a window jqtrace wrote (when well-formed).
  virtual void on_window_record(const WindowRecord&) {}
  /// A traceEvents array or a jobqueProfile object of the top-level object starts at
  /// offset: validate warns when either comes twice (the file's own, never a part's prefix).
  enum class RootMember { events, profile };
  virtual void on_root_member(RootMember, uint64_t /*offset*/) {}
};

/// An EventSink that parallel loading can split: fork() makes an empty sink of the same
/// kind for one part of the file; absorb() appends what the sink of the next part saw.
/// `names` maps that part's name ids to this sink's (the parts intern names separately).
class SplittableSink : public EventSink {
 public:
  virtual std::unique_ptr<SplittableSink> fork() const = 0;
  virtual void absorb(SplittableSink& later, const std::vector<uint32_t>& names) = 0;
  /// The interner the name ids of the events to come are in (the loaded model's, or its
  /// part's), said before the first event.
  virtual void bind(Interner&) {}
  /// Where the reader's container-level problems go as well, for a sink that checks them
  /// (null: it does not want them).
  virtual DiagnosticSink* container_diagnostics() { return nullptr; }
};

enum class Container { unknown, object, array };

enum class ReadStatus {
  ok,           ///< the whole input was read (an array form may lack its ']')
  truncated,    ///< the input ends inside the trace; every complete event was delivered
  input_error,  ///< unreadable, not JSON, or not a trace: see message/position
};

struct ReadResult {
  ReadStatus status = ReadStatus::ok;
  std::string message;       ///< for input_error: lower-case, no file name
  std::string_view rule;     ///< for input_error: json-syntax, not-a-trace or unreadable
  uint64_t offset = Diagnostic::kNoOffset;  ///< for input_error and truncated
  TextPosition position;     ///< of offset, for input_error (line 0 when not tied to a place)
  Container container = Container::unknown;
  uint64_t events = 0;       ///< complete event objects delivered
  /// Events `window --view` added for the viewer (args.jqtrace_view), read and dropped:
  /// not part of the trace, not in `events`.
  uint64_t view_events = 0;
  uint64_t bytes = 0;        ///< bytes of JSON text read
  bool array_unterminated = false;  ///< array form without its closing ']' (allowed)
  bool stream_cut = false;   ///< a compressed input ended early (its text is a prefix)
  Compression compression = Compression::none;  ///< of the input
  bool has_events_array = false;
  uint64_t profile_offset = 0;  ///< the jobqueProfile object's text: [profile_offset, profile_end)
  uint64_t profile_end = 0;     ///< 0 when there is no (complete) profile
  /// With ReadOptions::stop_at: whether the read stopped there, as asked.
  enum class Stop { not_reached, at_boundary, overshot } stop = Stop::not_reached;
};

/// For reading one part of a file (parallel parsing): stop when the next event of the
/// events array would start at stop_at. A part stops `at_boundary` only when an event of
/// the events array starts exactly there, which proves the offset was a boundary; any other
/// ending (`overshot`: the offset fell inside an event; `not_reached`: the array ended first)
/// tells the caller its guess was wrong.
/// The longest string jqtrace reads (LIMITS in jqtrace(1)): 64 MiB.
constexpr uint64_t kMaxStringBytes = uint64_t{64} << 20;
/// Names (event names, categories, thread and process names) longer than this are kept as
/// their first bytes, their length and a hash (cut_name): no table, picture or index
/// copies a name of megabytes, and two long names stay two names.
constexpr std::size_t kMaxNameBytes = 4096;
/// A name as the model keeps it: itself, or, past kMaxNameBytes, "<its first bytes>…
/// [cut: N bytes, #hash]".
std::string cut_name(std::string_view name);
/// True for a name cut_name shortened.
bool is_cut_name(std::string_view name);

struct ReadOptions {
  uint64_t stop_at = UINT64_MAX;
  /// How far the read window may grow to hold one string (escapes included): a longer
  /// string is an input error where its window starts, found after buffering this much of
  /// it, never the whole (a 4.5 GB string took 4.2 GB and 49 s to refuse at 4 GiB, the most
  /// RapidJSON 1.1.0's 32-bit lengths allow). Tests lower it.
  uint64_t max_string_bytes = kMaxStringBytes;
};

/// Reads the whole source, handing events and the profile to sink, container-level problems
/// (event-not-object, trace-events-not-array, profile rules) to diags (may be null), and
/// interning names into names.
ReadResult read_trace(Source& source, EventSink& sink, Interner& names, DiagnosticSink* diags,
                      const ReadOptions& options = {});

}  // namespace jqtrace
