#pragma once
// `window --view`: a window written for eyes. Viewers (Perfetto, chrome://tracing) ignore
// jobqueProfile, so the meaning jqtrace resolves is put into the events themselves:
//   - a jobque span is named by its category and kind ("ffn chain · chunk", "ffn chain ·
//     publish", "ffn chain · wait", "wake", "fifo job"; viewers colour by name) with cat the
//     category, and args that give the units it starts in ("token 3 · layer 5"), the chunk
//     index, and its own name and cat (jqtrace_name, jqtrace_cat);
//   - each marker kind gets a track of its own above the lanes (a pseudo-thread of the
//     marker lane's process), a slice a unit labelled as the program labels it;
//   - chains become flows: a publish to every chunk of its chain's first stage, a stage's
//     last chunk to each lane's first chunk of the next stage;
//   - a lane that stopped recording shows the rest of the window as a "not recorded" slice;
//   - thread sort order puts the unit tracks, then the marker lane, first.
// Every event it adds carries args.jqtrace_view and the reader drops it; a renamed span's
// args.jqtrace_name (and jqtrace_cat) give it its own name back: jqtrace reads a --view
// window with the numbers of a plain one.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "scope.h"
#include "window.h"

namespace jqtrace {

/// What a view adds, counted (the summary line and tests).
struct ViewCounts {
  uint64_t renamed = 0;       ///< jobque spans named by category
  uint64_t unit_slices = 0;   ///< slices on the unit tracks
  uint64_t flows = 0;         ///< arrows (each an "s" and an "f" event)
  uint64_t not_recorded = 0;  ///< stopped lanes' slices
  uint64_t added_events() const { return unit_slices + 2 * flows + not_recorded; }
};

class WindowView {
 public:
  /// scope: the window's range; request: how units are cut (the window's --unit-at).
  WindowView(const Trace& trace, const EventIndex& index, Range scope, const UnitRequest& request);

  /// First pass, in file order: every chosen span with its fields read back (a jobque
  /// span is kept).
  void add_span(const EventIndex::Entry& entry, const RawEvent& event, const Interner& names);
  /// After the first pass: the flows between the chains' spans.
  void plan();

  /// put(event) for each event a view adds after the trace's: metadata (the unit tracks'
  /// names, the sort order of every lane written: lanes_written, by index lane), unit
  /// slices, flows, not-recorded stretches, each ts less shift (--rebase). Handed over one
  /// at a time: a view of a whole trace has an arrow for most of its chunks.
  void write_added(int64_t shift, const std::vector<bool>& lanes_written,
                   const std::function<void(std::string_view)>& put);
  /// Rewrites a chosen event's text for the viewer (a jobque span: named by its category);
  /// called in file order with the entries add_span() saw. Other events are left as they are.
  void rewrite(const EventIndex::Entry& entry, std::string& text);

  const ViewCounts& counts() const { return counts_; }

 private:
  enum class SpanKind : uint8_t { publish, chunk, stage_wait, wake, fifo_job };
  struct Span {  // a jobque span of the window
    std::size_t index;  ///< the event's number in the file
    uint32_t lane;      ///< EventIndex's lane
    SpanKind kind;
    bool has_arg;  ///< args.arg given (a chunk's index)
    int64_t ts, end, chain, stage, arg;
  };
  struct UnitTrack {  // one marker kind's units in the window
    std::string kind;
    std::vector<Unit> units;  ///< overlapping the scope, in time order
    std::vector<std::string> labels;
  };
  struct Flow {
    std::size_t from, to;  ///< indices into spans_
  };

  /// "ffn chain · chunk" of a span whose category is given.
  std::string view_name(const Span& span, const std::string& category) const;
  std::string category_of(const Span& span) const;
  std::string units_label(int64_t ts) const;
  std::string lane_json(uint32_t lane) const;  ///< "pid":..,"tid":.. of an index lane
  std::string track_json(std::size_t k) const;  ///< the same of the k-th unit track
  void plan_chain_flows(const std::vector<std::size_t>& chain);
  void write_metadata(const std::vector<bool>& lanes_written, const std::function<void(std::string_view)>& put) const;
  void write_flows(int64_t shift, const std::function<void(std::string_view)>& put);
  void add_unit_tracks(const UnitRequest& request);

  const Trace& trace_;
  const EventIndex& index_;
  Range scope_;
  std::vector<Span> spans_;  ///< in file order
  std::size_t cursor_ = 0;   ///< rewrite()'s place in spans_
  std::vector<UnitTrack> tracks_;
  std::vector<Flow> flows_;
  uint32_t marker_lane_ = UINT32_MAX;  ///< the index lane of the markers (the tracks' process)
  int64_t first_track_tid_ = 0;
  ViewCounts counts_;
};

}  // namespace jqtrace
