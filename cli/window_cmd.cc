// jqtrace window FILE: index (one streaming pass) → scope → choose events → write them
// (as a trace with their own text, the old compact rows, or CSV/TSV) → summary on stderr.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unistd.h>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "jobque.h"
#include "load.h"
#include "numbers.h"
#include "scope_options.h"
#include "text_format.h"
#include "timings.h"
#include "window.h"
#include "window_view.h"

namespace jqtrace::cli {
namespace {

struct WindowCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  bool rebase = false;
  bool view = false;
  std::string file;
};

/// window reads its input twice: a stream (standard input, a pipe) is copied to a
/// temporary file as the first pass reads it, and read again from the copy, which is
/// removed as soon as it is opened.
class StreamCopy {
 public:
  ~StreamCopy() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) std::remove(path_.c_str());
  }
  /// False when no temporary file can be made.
  bool start(Input& stream) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/jqtrace-stdin-XXXXXX";
    fd_ = mkstemp(path_.data());
    if (fd_ < 0) {
      path_.clear();
      return false;
    }
    stream.copy_stream_to(fd_);
    return true;
  }
  /// The copy of what the first pass read, opened; nullptr when it could not be written.
  std::shared_ptr<Input> finish(const Input& stream) {
    bool ok = ::close(fd_) == 0 && !stream.copy_failed();
    fd_ = -1;
    std::string err;
    auto copy = ok ? Input::open(path_, &err) : nullptr;
    std::remove(path_.c_str());
    path_.clear();
    return copy;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

struct Written {
  uint64_t events = 0;
  std::set<std::string> lanes;
  WindowRecord::Edges edges;  ///< a trace's
};

/// The labels of the index's lanes marked in `wrote` (their ids are the model's names).
void add_lane_labels(const EventIndex& index, const std::vector<bool>& wrote, const Interner& names, Written* w) {
  for (std::size_t lane = 0; lane < wrote.size(); ++lane)
    if (wrote[lane]) w->lanes.insert(jqtrace::lane_label(index.lanes()[lane].first, index.lanes()[lane].second, names));
}

std::string lane_label(const RawEvent& e, const Interner& names) { return jqtrace::lane_label(e.pid, e.tid, names); }

/// The window's events: the index and the choice made from it.
struct Chosen {
  const EventIndex& index;
  WindowSelection selection;
  template <typename F>
  void for_each(F&& f) const {
    selection.for_each(index, f);
  }
  /// f(entry, text) for the chosen events that wanted(entry) accepts, each event's text read
  /// again; false when a text could not be (the file changed), after which none is read.
  template <typename Wanted, typename F>
  bool read_each(TextRanges& text, Wanted&& wanted, F&& f) const {
    bool read_all = true;
    std::string event;  // one buffer for every event's text
    for_each([&](const EventIndex::Entry& e) {
      if (!read_all || !wanted(e)) return;
      event.clear();
      read_all = text.read(e.offset, e.end_offset, &event);
      if (read_all) f(e, event);
    });
    return read_all;
  }
  /// f(entry, event, names) for the chosen events that wanted(entry) accepts, each event's
  /// fields read back from its text; false as read_each.
  template <typename Wanted, typename F>
  bool parse_each(TextRanges& text, Wanted&& wanted, F&& f) const {
    EventTexts batch;
    std::vector<EventIndex::Entry> entries;  // the batch's
    auto flush = [&] {
      batch.read_back(
          [&](std::size_t i, const RawEvent& event, const Interner& names) { f(entries[i], event, names); });
      batch.clear();
      entries.clear();
    };
    bool read_all = read_each(text, wanted, [&](const EventIndex::Entry& e, const std::string& event) {
      batch.add(event);
      entries.push_back(e);
      if (batch.size() == EventTexts::kBatch) flush();
    });
    flush();  // what was read before a failed read is written, as it always was
    return read_all;
  }
  uint64_t first_offset() const { return selection.first_offset(index); }
};

/// --rebase: what every ts is shifted by, so that the window's earliest event starts in its
/// first µs (events that start before the scope, and the publishes kept for their chains,
/// included: no ts goes negative); 0 without --rebase. A whole number of µs: viewers round
/// times to µs before they nest slices, and a fractional shift moved 69 of 1,583 slices of
/// a real window to another depth.
int64_t rebase_shift(const WindowCommandOptions& o, const Chosen& chosen, Range range) {
  if (!o.rebase) return 0;
  int64_t earliest = range.lo;
  chosen.for_each([&](const EventIndex::Entry& e) {
    if (e.kind != EventIndex::kMetadata) earliest = std::min(earliest, e.ts_ns);
  });
  int64_t whole_us = earliest / 1000 - (earliest % 1000 < 0 ? 1 : 0);  // floor, for a clock before 0 too
  return whole_us * 1000;
}

/// Writes doc out once it holds a megabyte (a window can be as large as its trace). After a
/// failed write (the reader closed the pipe, the disk is full) nothing more is written, and
/// the callers' `wanted` stops reading events for it.
void flush_if_large(std::string& doc, Output& out) {
  if (doc.size() <= (1u << 20)) return;
  out.write(doc);
  doc.clear();
}

/// The extent of the events written and how the scope's edges cut them (the record's
/// "edges"), in the file's clock.
struct EdgeTally {
  WindowRecord::Edges edges;
  void add(const EventIndex::Entry& e, Range range) {
    if (e.kind == EventIndex::kMetadata) return;
    bool span = e.kind == EventIndex::kSpan;
    int64_t start = span && e.paired() ? e.pair.first : e.ts_ns;
    int64_t end = span ? (e.paired() ? e.pair.second : e.ts_ns + e.dur_ns) : e.ts_ns;
    bool counted = span && (!e.paired() || e.ts_ns == e.pair.first);  // a B/E pair once, at its B
    if (counted && !range.overlaps(start, end)) ++edges.publishes_outside;  // kept for its chain's category
    else if (counted && (start < range.lo || end > range.hi)) ++edges.spans_kept_whole;
    edges.extent_lo_ns = edges.present ? std::min(edges.extent_lo_ns, start) : start;
    edges.extent_hi_ns = edges.present ? std::max(edges.extent_hi_ns, end) : end;
    edges.present = true;
  }
};

/// --view's first pass: the window's jobque spans, read back for their fields, then the
/// flows between them.
bool plan_view(const Chosen& chosen, TextRanges& text, WindowView* view) {
  auto x_span = [](const EventIndex::Entry& e) { return e.x_span(); };
  bool read_all = chosen.parse_each(text, x_span, [&](const EventIndex::Entry& e, const RawEvent& event,
                                                     const Interner& names) { view->add_span(e, event, names); });
  view->plan();
  return read_all;
}

/// --format trace: the chosen events' own text, in file order, as an object-form trace
/// (whatever the input's container) with the profile and a jqtraceWindow record saying
/// which range of which file this is; with --view (view not null), its spans named for the
/// viewer and its unit tracks, flows and unrecorded stretches added.
bool write_trace(const WindowCommandOptions& o, const Trace& trace, const Chosen& chosen, const Scope& scope,
                 TextRanges& text, WindowView* view, Output& out, Written* w) {
  const ReadResult& read = trace.read;
  int64_t shift = rebase_shift(o, chosen, scope.range);
  bool has_profile = read.profile_end > read.profile_offset;
  std::string profile;
  bool profile_first = has_profile && read.profile_offset < chosen.first_offset();
  if (profile_first && !text.read(read.profile_offset, read.profile_end, &profile)) return false;
  std::string doc = "{\"traceEvents\":[\n";
  bool first = true;
  auto put = [&](std::string_view event) {
    if (!first) doc += ",\n";
    first = false;
    doc += event;
    flush_if_large(doc, out);
  };
  std::vector<bool> wrote_lane(chosen.index.lanes().size());
  EdgeTally tally;
  auto every = [&out](const EventIndex::Entry&) { return !out.failed(); };
  bool read_all = chosen.read_each(text, every, [&](const EventIndex::Entry& e, std::string& event) {
    if (e.kind != EventIndex::kMetadata) {
      if (o.rebase) {
        // The reader took this event's ts from its last top-level "ts" key (escapes
        // decoded): that exact value is rewritten, or the event is left out.
        if (!replace_top_level_number(event, "ts", us_text(e.ts_ns - shift))) {
          print_warning(o.common, fmt::format("{}: the event at byte {} has no ts that --rebase can rewrite; left "
                                              "out of the window",
                                              display_name(o.file), e.offset));
          return;
        }
      }
      ++w->events;
      wrote_lane[e.lane] = true;
      tally.add(e, scope.range);
      if (view) view->rewrite(e, event);
    }
    put(event);
  });
  if (!read_all) return false;
  if (view) view->write_added(shift, wrote_lane, put);  // after the trace's own: each keeps its plain window's line
  add_lane_labels(chosen.index, wrote_lane, trace.names, w);
  doc += first ? "]" : "\n]";
  if (has_profile && !profile_first && !text.read(read.profile_offset, read.profile_end, &profile)) return false;
  if (has_profile) doc += ",\"jobqueProfile\":" + profile;
  WindowRecord record;
  record.source = display_name(o.file);
  record.scope = scope.label;
  if (scope.kind == ScopeRequest::Kind::marker) record.marker_kind = scope.marker_kind;
  record.lo_ns = scope.range.lo - shift;
  record.hi_ns = scope.range.hi - shift;
  record.rebased_by_ns = shift + trace.window.rebased_by_ns;
  record.units = unit_rules_to_record(trace, unit_at_request(o.scope.unit_at), scope.range);
  record.view = view != nullptr;
  record.edges = tally.edges;
  record.edges.extent_lo_ns -= shift;
  record.edges.extent_hi_ns -= shift;
  w->edges = record.edges;
  doc += ",\n\"jqtraceWindow\":" + window_record_json(record) + "}\n";
  out.write(doc);
  return true;
}

/// Python's round(x, 1) then json.dumps: "%.1f" rounds the same binary value the same way.
std::string py_round1(double v) { return fmt::format("{:.1f}", v); }

/// --format compact: the rows trace_window.py wrote, computed the way it computed them
/// (doubles in microseconds), sorted by tid then rounded ts, ties in file order.
bool write_compact(const WindowCommandOptions& o, const Trace& trace, const Chosen& chosen, Range range,
                   TextRanges& text, Output& out, Written* w) {
  static const std::map<std::string_view, int> kKinds = {
      {kPublish, 0}, {kChunk, 1}, {kStageWait, 2}, {kWake, 3}, {kFifoJob, 4}};
  // The old script took T_LO_MS T_HI_MS and multiplied by 1000.0: do the same with --ms.
  double lo = static_cast<double>(range.lo) / 1000.0, hi = static_cast<double>(range.hi) / 1000.0;
  if (o.scope.ms.size() == 2) {
    lo = std::strtod(o.scope.ms[0].c_str(), nullptr) * 1000.0;
    hi = std::strtod(o.scope.ms[1].c_str(), nullptr) * 1000.0;
  }
  struct Row {
    int64_t tid;
    std::string ts_text;
    double ts_rounded;
    std::string fields;
  };
  std::vector<Row> rows;
  auto x_span = [](const EventIndex::Entry& e) { return e.x_span(); };
  auto row = [&](const EventIndex::Entry&, const RawEvent& r, const Interner& names) {
    if (r.tid.is_string) return;
    auto kind = kKinds.find(names.view(r.name));
    if (kind == kKinds.end()) return;  // the old script knew only the five jobque spans
    double ts = static_cast<double>(r.ts_ns) / 1000.0, dur = static_cast<double>(r.dur_ns) / 1000.0;
    if (ts + dur < lo || ts > hi) return;
    const ChainInfo* chain = trace.chains.find(r.chain);
    int64_t stage = kind->second == 0 ? (r.stage & 0xFF) : r.stage;
    std::string rounded = py_round1(ts - lo);
    rows.push_back({r.tid.number, rounded, std::strtod(rounded.c_str(), nullptr),
                    fmt::format("{},{},{},{},{},{},{}", py_round1(dur), kind->second, stage,
                                chain ? chain->nstages : 0, r.chain, r.arg, chain ? chain->tag : 0)});
  };
  if (!chosen.parse_each(text, x_span, row)) return false;
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.ts_rounded < b.ts_rounded;
  });
  std::string events = "[";
  int64_t max_tid = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    events += fmt::format("{}[{},{},{}]", i ? "," : "", r.tid, r.ts_text, r.fields);
    max_tid = std::max(max_tid, r.tid);
    w->lanes.insert(std::to_string(r.tid));
  }
  events += "]";
  std::string doc = fmt::format("{{\"lanes\":{},\"span\":{:.1f},\"events\":{}}}", max_tid + 1, hi - lo, events);
  w->events = rows.size();
  out.write(doc);
  return true;
}

/// --format csv|tsv: one row per chosen event.
bool write_rows(const Trace& trace, const Chosen& chosen, Range range, TextRanges& text, char sep, bool raw,
                Output& out, Written* w) {
  // Names from the trace are guarded against spreadsheets' formulas (--csv-raw: as they are).
  auto text_cell = [raw](std::string cell) { return raw ? cell : result::spreadsheet_text(cell); };
  std::string doc = delimited_row(
      {"lane", "ts_us", "dur_us", "ph", "name", "category", "stage", "nstages", "chain", "arg", "tag"}, sep);
  // Rows are the events of the range: not metadata, nor the publishes a trace window adds
  // for context.
  auto in_range = [&](const EventIndex::Entry& e) {
    if (e.kind == EventIndex::kMetadata || out.failed()) return false;
    return !e.x_span() || range.overlaps(e.ts_ns, e.ts_ns + e.dur_ns);
  };
  auto row = [&](const EventIndex::Entry& e, const RawEvent& r, const Interner& names) {
    std::string name = r.name == Interner::kNone ? "" : std::string(names.view(r.name));
    std::string category, nstages, tag;
    bool jobque_span = trace.jobque && (name == kPublish || name == kChunk || name == kStageWait);
    if (jobque_span) {
      const ChainInfo* chain = trace.chains.find(r.chain);
      category = chain_category(chain ? chain->nstages : 0, chain ? chain->tag : 0, trace.profile, trace.attribution).name;
      nstages = std::to_string(chain ? chain->nstages : 0);
      tag = std::to_string(chain ? chain->tag : 0);
    } else if (trace.jobque && name == kWake) {
      category = std::string(kWakeGroup);
    } else if (trace.jobque && name == kFifoJob) {
      category = std::string(kFifoJobGroup);
    } else if (r.cat != Interner::kNone) {
      category = std::string(names.view(r.cat));
    }
    bool args = r.has_stage || r.has_chain;
    doc += delimited_row({text_cell(lane_label(r, names)), us_fixed(e.ts_ns),
                          e.kind == EventIndex::kSpan ? us_fixed(e.dur_ns) : "", text_cell(std::string(1, r.ph)),
                          text_cell(name), text_cell(category), args ? std::to_string(r.stage) : "", nstages,
                          args ? std::to_string(r.chain) : "", r.has_arg ? std::to_string(r.arg) : "", tag},
                         sep);
    ++w->events;
    w->lanes.insert(lane_label(r, names));
    flush_if_large(doc, out);
  };
  if (!chosen.parse_each(text, in_range, row)) return false;
  out.write(doc);
  return true;
}

/// Says how far a trace window's events run past its scope (the viewer shows all of them).
void print_edges(const WindowRecord::Edges& edges, int64_t scope_ns) {
  if (!edges.present || (edges.spans_kept_whole == 0 && edges.publishes_outside == 0)) return;
  fmt::print(stderr, "edges: spans kept whole across the scope's edges {}, publishes kept from outside it {}; the "
                     "events span {} us for a scope of {} us\n",
             edges.spans_kept_whole, edges.publishes_outside, us_fixed(edges.extent_hi_ns - edges.extent_lo_ns),
             us_fixed(scope_ns));
}

int run_window(WindowCommandOptions o) {
  if (!check_output_format(o.common, "window")) return kUsage;
  if (o.view && o.common.format() != Format::trace) {
    print_error("window --view writes a trace: it cannot be given with --format csv, tsv or compact");
    return kUsage;
  }
  std::string name = display_name(o.file);
  auto input = open_trace(o.file);
  if (!input) return kInput;
  StreamCopy copy;
  if (!input->regular() && !copy.start(*input)) {
    print_error(fmt::format("{}: cannot make a temporary file to copy it to (window reads its input twice)", name));
    return kInput;
  }
  Trace& trace = trace_for_process();
  EventIndex index;
  LoadOptions load;
  load.spans = false;
  load.tee = &index;
  Scope scope;
  std::vector<GzipPoint> points;  // a compressed trace's access points: where its events' text can be decoded from
  if (int status = load_scoped(input, o.common, o.scope, &trace, &scope, load, BlocksFor::window, &points))
    return status;
  index.finish(trace.end_ns);
  Range range = scope.range;
  Chosen chosen{index, select_window(index, range)};
  if (std::getenv("JQTRACE_SHOW_INDEX"))  // tests: the second read of a compressed trace starts from its access points
    if (Compression c = input->compression(); c != Compression::none)
      fmt::print(stderr, "jqtrace: window: {} {} access points\n", points.size(), compression_name(c));
  std::shared_ptr<Input> again = input->regular() ? input : copy.finish(*input);
  if (!again) {
    print_error(fmt::format("{}: cannot copy to a temporary file (window reads its input twice)", name));
    return kInput;
  }
  std::string err;
  auto text = TextRanges::open(again, &err, &points);
  if (!text) {
    print_error(fmt::format("{}: cannot read again: {}", name, err));
    return kInput;
  }
  std::unique_ptr<WindowView> view;
  if (o.view) {  // a first read of the window's spans, from a reader of its own (reads go forward only)
    view = std::make_unique<WindowView>(trace, index, range, unit_at_request(o.scope.unit_at));
    auto spans = TextRanges::open(again, &err, &points);
    if (!spans || !plan_view(chosen, *spans, view.get())) {
      print_error(fmt::format("{}: the file changed while it was read", name));
      return kInput;
    }
  }
  PhaseClock clock("render", PhaseKind::serial);  // the range's events, read again and written
  int status = kInput;
  auto out = Output::open(o.common, &status);
  if (!out) return status;  // cannot write, or -o names an input
  Written w;
  bool ok = false;
  switch (o.common.format()) {
    case Format::compact: ok = write_compact(o, trace, chosen, range, *text, *out, &w); break;
    case Format::csv: ok = write_rows(trace, chosen, range, *text, ',', o.common.csv_raw, *out, &w); break;
    case Format::tsv: ok = write_rows(trace, chosen, range, *text, '\t', o.common.csv_raw, *out, &w); break;
    default: ok = write_trace(o, trace, chosen, scope, *text, view.get(), *out, &w); break;
  }
  if (!ok) {
    print_error(fmt::format("{}: the file changed while it was read", name));
    return kInput;
  }
  bool reader_left = out->reader_went_away();
  if (!out->close()) return out->failure_status();
  if (reader_left) {  // what the reader got, not what the window holds
    if (!o.common.quiet)
      fmt::print(stderr, "window: the reader closed the pipe after {} bytes; stopped writing\n", out->bytes_written());
    return kOk;
  }
  if (o.common.quiet) return kOk;
  fmt::print(stderr, "events={} lanes={} span_us={} bytes={}\n", w.events, w.lanes.size(), us_fixed(range.length()),
             out->bytes_written());
  print_edges(w.edges, range.length());
  if (view) {
    const ViewCounts& c = view->counts();
    fmt::print(stderr, "view: {} spans named by category, {} unit slices, {} flows, {} not-recorded stretches\n",
               c.renamed, c.unit_slices, c.flows, c.not_recorded);
  }
  return kOk;
}

}  // namespace

void setup_window(CLI::App& app) {
  auto opts = std::make_shared<WindowCommandOptions>();
  CLI::App* cmd = app.add_subcommand("window", "Cut the events of a scope out of a trace (a trace Perfetto opens)");
  add_common_options(*cmd, opts->common, {Format::trace, Format::compact, Format::csv, Format::tsv});
  add_scope_options(*cmd, opts->scope);
  add_index_options(*cmd, opts->common, true);
  cmd->add_flag("--view", opts->view,
                 "Write the window for eyes: spans named by category, unit tracks, chain flows (trace format)");
  cmd->add_flag("--rebase", opts->rebase, "Shift every ts by whole µs so that the window starts in its first µs (trace format)");
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace window --marker token 3 big.trace.json.gz -o token3.json\n  jqtrace window --rebase --marker layer 10..12 trace.json > layers.json\n  jqtrace window --format csv --us 1000 1500 trace.json");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "window")) throw CommandDone{kUsage};
    throw CommandDone{run_window(*opts)};
  });
}

}  // namespace jqtrace::cli
