#include "window_view.h"

#include <algorithm>
#include <map>

#include "jobque.h"
#include "json_value.h"
#include "numbers.h"

namespace jqtrace {
namespace {

/// A trace of more marker kinds than this (a generic trace, where every instant name is a
/// kind) gets no unit tracks: a track per instant name would bury the lanes.
constexpr std::size_t kMaxUnitTracks = 8;

/// "pid":P,"tid":T of a lane (a string id quoted as the file had it, decoded).
std::string lane_fields(const ProcessId& pid, const ProcessId& tid, const Interner& names) {
  auto id = [&](const ProcessId& p) {
    return p.is_string ? json_quote(names.view(p.text)) : std::to_string(p.number);
  };
  return "\"pid\":" + id(pid) + ",\"tid\":" + id(tid);
}

/// A text edit: at `at`, `erase` bytes replaced by `insert`.
struct Edit {
  std::size_t at, erase;
  std::string insert;
};

/// Applies edits at distinct places, the rightmost first (each leaves the others' offsets
/// as they were).
void apply(std::vector<Edit> edits, std::string& text) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.at > b.at; });
  for (const Edit& e : edits) text.replace(e.at, e.erase, e.insert);
}

}  // namespace

WindowView::WindowView(const Trace& trace, const EventIndex& index, Range scope, const UnitRequest& request)
    : trace_(trace), index_(index), scope_(scope) {
  add_unit_tracks(request);
  int64_t max_tid = -1;
  for (const auto& [pid, tid] : index.lanes())
    if (!tid.is_string) max_tid = std::max(max_tid, tid.number);
  first_track_tid_ = max_tid + 1;
}

void WindowView::add_unit_tracks(const UnitRequest& request) {
  std::vector<std::string> kinds = marker_kinds(trace_);
  if (kinds.empty() || kinds.size() > kMaxUnitTracks) return;
  UnitPlanner planner(trace_, request);
  for_each_kind_markers(trace_, kinds, [&](std::size_t k, const Markers& markers) {
    if (markers.ts.empty()) return;
    std::vector<Unit> all = cut_units(markers, planner.plan(kinds[k], markers));
    bool labelled = units_have_args(all);
    UnitTrack track{kinds[k], {}, {}};
    for (const Unit& u : all) {
      bool in = scope_.clipped(u.range.lo, u.range.hi) > 0 || (u.range.length() == 0 && scope_.holds(u.range));
      if (!in) continue;
      std::string label = unit_arg_label(kinds[k], u, labelled);
      track.units.push_back(u);
      track.labels.push_back(label.empty() ? kinds[k] + " " + std::to_string(u.index) : label);
    }
    if (track.units.empty()) return;
    if (marker_lane_ == UINT32_MAX) {  // the tracks go in the process of the first kind's markers
      const Lane& lane = trace_.lanes[static_cast<std::size_t>(markers.lane.front())];
      for (uint32_t l = 0; l < index_.lanes().size(); ++l)
        if (index_.lanes()[l] == std::make_pair(lane.pid, lane.tid)) marker_lane_ = l;
    }
    tracks_.push_back(std::move(track));
  });
  if (marker_lane_ == UINT32_MAX) tracks_.clear();  // no lane of the window to put them beside
}

void WindowView::add_span(const EventIndex::Entry& entry, const RawEvent& event, const Interner& names) {
  if (!trace_.jobque || event.ph != 'X' || event.name == Interner::kNone) return;
  static const std::map<std::string_view, SpanKind> kKinds = {{kPublish, SpanKind::publish},
                                                              {kChunk, SpanKind::chunk},
                                                              {kStageWait, SpanKind::stage_wait},
                                                              {kWake, SpanKind::wake},
                                                              {kFifoJob, SpanKind::fifo_job}};
  auto kind = kKinds.find(names.view(event.name));
  if (kind == kKinds.end()) return;
  spans_.push_back({entry.index, entry.lane, kind->second, event.has_arg, entry.ts_ns, entry.ts_ns + entry.dur_ns, event.chain,
                    event.stage, event.arg});
}

void WindowView::plan() {
  // The chains' spans, by chain, then stage; publishes first.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < spans_.size(); ++i)
    if (spans_[i].kind == SpanKind::publish || spans_[i].kind == SpanKind::chunk) order.push_back(i);
  auto key = [&](std::size_t i) {
    const Span& s = spans_[i];
    bool chunk = s.kind == SpanKind::chunk;
    return std::make_tuple(s.chain, chunk, chunk ? s.stage : 0, s.ts, i);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin;
    while (end < order.size() && spans_[order[end]].chain == spans_[order[begin]].chain) ++end;
    plan_chain_flows(std::vector<std::size_t>(order.begin() + static_cast<long>(begin), order.begin() + static_cast<long>(end)));
    begin = end;
  }
}

void WindowView::plan_chain_flows(const std::vector<std::size_t>& chain) {
  // chain: its publish (if any) first, then its chunks by stage and time.
  std::size_t publish = SIZE_MAX;
  std::size_t prev_last = SIZE_MAX;  // the chunk of the previous stage that ended last
  int64_t prev_stage = INT64_MIN;
  for (std::size_t at = 0; at < chain.size();) {
    const Span& first = spans_[chain[at]];
    if (first.kind == SpanKind::publish) {
      publish = chain[at++];
      continue;
    }
    std::size_t end = at;  // [at, end): one stage's chunks
    while (end < chain.size() && spans_[chain[end]].stage == first.stage) ++end;
    std::size_t from = first.stage == 0 ? publish : prev_stage == first.stage - 1 ? prev_last : SIZE_MAX;
    std::vector<bool> lane_started(index_.lanes().size(), false);
    std::size_t last = chain[at];
    for (std::size_t k = at; k < end; ++k) {
      const Span& chunk = spans_[chain[k]];
      if (chunk.end > spans_[last].end) last = chain[k];
      if (from == SIZE_MAX) continue;
      // From a publish to every chunk of the first stage; from the last chunk of a stage
      // to each lane's first chunk of the next (a lane's later chunks follow on its track).
      if (first.stage != 0 && lane_started[chunk.lane]) continue;
      lane_started[chunk.lane] = true;
      flows_.push_back({from, chain[k]});
    }
    prev_last = last;
    prev_stage = first.stage;
    at = end;
  }
}

std::string WindowView::category_of(const Span& span) const {
  if (span.kind == SpanKind::wake) return std::string(kWakeGroup);
  if (span.kind == SpanKind::fifo_job) return std::string(kFifoJobGroup);
  const ChainInfo* chain = trace_.chains.find(span.chain);
  return chain_category(chain ? chain->nstages : 0, chain ? chain->tag : 0, trace_.profile, trace_.attribution).name;
}

std::string WindowView::view_name(const Span& span, const std::string& category) const {
  switch (span.kind) {
    case SpanKind::publish: return category + " \u00b7 publish";
    case SpanKind::chunk: return category + " \u00b7 chunk";
    case SpanKind::stage_wait: return category + " \u00b7 wait";
    default: return category;
  }
}

std::string WindowView::units_label(int64_t ts) const {
  std::string label;
  for (const UnitTrack& track : tracks_) {
    auto after = std::upper_bound(track.units.begin(), track.units.end(), ts,
                                  [](int64_t t, const Unit& u) { return t < u.range.lo; });
    if (after == track.units.begin()) continue;
    const Unit& unit = *(after - 1);
    bool last = after == track.units.end();
    if (ts < unit.range.hi || (last && ts == unit.range.hi)) {
      if (!label.empty()) label += " \u00b7 ";
      label += track.labels[static_cast<std::size_t>(after - 1 - track.units.begin())];
    }
  }
  return label;
}

std::string WindowView::lane_json(uint32_t lane) const {
  return lane_fields(index_.lanes()[lane].first, index_.lanes()[lane].second, trace_.names);
}

std::string WindowView::track_json(std::size_t k) const {
  const ProcessId& pid = index_.lanes()[marker_lane_].first;
  ProcessId tid;
  tid.present = true;
  tid.number = first_track_tid_ + static_cast<int64_t>(k);
  return lane_fields(pid, tid, trace_.names);
}

void WindowView::write_metadata(const std::vector<bool>& lanes_written,
                                const std::function<void(std::string_view)>& line) const {
  auto sort_index = [&](const std::string& lane, std::size_t index) {
    line("{\"ph\":\"M\",\"name\":\"thread_sort_index\"," + lane + ",\"args\":{\"sort_index\":" + std::to_string(index) +
         ",\"jqtrace_view\":\"track\"}}");
  };
  for (std::size_t k = 0; k < tracks_.size(); ++k) {
    line("{\"ph\":\"M\",\"name\":\"thread_name\"," + track_json(k) + ",\"args\":{\"name\":" +
         json_quote(tracks_[k].kind) + ",\"jqtrace_view\":\"track\"}}");
    sort_index(track_json(k), k);
  }
  // The marker lane right under the unit tracks, then the lanes in the file's order.
  std::size_t next = tracks_.size();
  if (marker_lane_ != UINT32_MAX) sort_index(lane_json(marker_lane_), next++);
  for (uint32_t lane = 0; lane < lanes_written.size(); ++lane)
    if (lanes_written[lane] && lane != marker_lane_) sort_index(lane_json(lane), next++);
}

void WindowView::write_added(int64_t shift, const std::vector<bool>& lanes_written,
                             const std::function<void(std::string_view)>& line) {
  write_metadata(lanes_written, line);
  auto time = [&](int64_t ns) { return us_text(ns - shift); };
  for (std::size_t k = 0; k < tracks_.size(); ++k) {
    const UnitTrack& track = tracks_[k];
    for (std::size_t i = 0; i < track.units.size(); ++i) {
      const Unit& u = track.units[i];
      int64_t lo = std::max(u.range.lo, scope_.lo), hi = std::min(u.range.hi, scope_.hi);
      bool part = lo != u.range.lo || hi != u.range.hi;
      std::string args = "\"jqtrace_view\":\"unit\",\"unit\":" + std::to_string(u.index);
      if (u.arg != kNoArg) args += ",\"arg\":" + std::to_string(u.arg);
      if (part) args += ",\"part\":\"the scope holds " + us_text(hi - lo) + " of its " + us_text(u.range.length()) + " us\"";
      line("{\"ph\":\"X\",\"name\":" + json_quote(track.labels[i] + (part ? " (part)" : "")) +
           ",\"cat\":\"jqtrace unit\"," + track_json(k) + ",\"ts\":" + time(lo) + ",\"dur\":" + us_text(hi - lo) +
           ",\"args\":{" + args + "}}");
      ++counts_.unit_slices;
    }
  }
  write_flows(shift, line);
  for (const StoppedLane& stopped : lanes_stopped_early(trace_)) {
    if (stopped.stop_ns >= scope_.hi) continue;
    const Lane& lane = trace_.lanes[stopped.lane];
    int64_t lo = std::max(stopped.stop_ns, scope_.lo);
    line("{\"ph\":\"X\",\"name\":\"not recorded\",\"cat\":\"jqtrace\"," + lane_fields(lane.pid, lane.tid, trace_.names) +
         ",\"ts\":" + time(lo) + ",\"dur\":" + us_text(scope_.hi - lo) +
         ",\"args\":{\"jqtrace_view\":\"not recorded\",\"stopped_at_us\":" + time(stopped.stop_ns) + "}}");
    ++counts_.not_recorded;
  }
}

void WindowView::write_flows(int64_t shift, const std::function<void(std::string_view)>& line) {
  for (const Flow& flow : flows_) {
    const Span& from = spans_[flow.from];
    const Span& to = spans_[flow.to];
    // Each end inside its slice (the viewer binds an end to the slice it lies in), and
    // the start no later than the end (the viewer reads them in time order).
    int64_t end_ts = to.ts + (to.end - to.ts) / 2;
    int64_t start_ts = std::max(from.ts, std::min(from.ts + (from.end - from.ts) / 2, end_ts));
    if (start_ts > end_ts) continue;
    std::string common = ",\"id\":" + std::to_string(counts_.flows + 1) + ",\"cat\":\"jqtrace flow\",\"name\":" +
                         json_quote(category_of(to) + " \u00b7 flow") + ",";
    // The viewer merges a flow's args from both ends and warns when a key repeats: the end
    // carries its own key (the reader drops either).
    line("{\"ph\":\"s\"" + common + lane_json(from.lane) + ",\"ts\":" + us_text(start_ts - shift) +
         ",\"args\":{\"jqtrace_view\":\"flow\",\"chain\":" + std::to_string(to.chain) + "}}");
    line("{\"ph\":\"f\",\"bp\":\"e\"" + common + lane_json(to.lane) + ",\"ts\":" + us_text(end_ts - shift) +
         ",\"args\":{\"jqtrace_flow\":\"end\"}}");
    ++counts_.flows;
  }
}

void WindowView::rewrite(const EventIndex::Entry& entry, std::string& text) {
  while (cursor_ < spans_.size() && spans_[cursor_].index < entry.index) ++cursor_;
  if (cursor_ == spans_.size() || spans_[cursor_].index != entry.index) return;
  const Span& span = spans_[cursor_];
  MemberPlace name = find_top_level_member(text, "name");
  MemberPlace cat = find_top_level_member(text, "cat");
  MemberPlace args = find_top_level_member(text, "args");
  bool args_object = args.found() && text[args.value_at] == '{';
  if (!name.found() || (args.found() && !args_object) || text.empty() || text[0] != '{') return;
  auto value = [&](const MemberPlace& m) { return text.substr(m.value_at, m.value_end - m.value_at); };
  // Its own name and cat first in args, as the file had them: the reader puts them back.
  std::string members = "\"jqtrace_name\":" + value(name);
  if (cat.found()) members += ",\"jqtrace_cat\":" + value(cat);
  std::string units = units_label(span.ts);
  if (!units.empty()) members += ",\"units\":" + json_quote(units);
  if (span.kind == SpanKind::chunk && span.has_arg) members += ",\"chunk\":" + std::to_string(span.arg);
  std::string category = category_of(span);
  std::vector<Edit> edits;
  edits.push_back({name.value_at, name.value_end - name.value_at, json_quote(view_name(span, category))});
  if (cat.found()) edits.push_back({cat.value_at, cat.value_end - cat.value_at, json_quote(category)});
  std::string added_front;  // members added at the object's start
  if (!cat.found()) added_front += "\"cat\":" + json_quote(category) + ",";
  if (args_object) {
    bool empty = text.find_first_not_of(" \t\r\n", args.value_at + 1) == text.find('}', args.value_at);
    edits.push_back({args.value_at + 1, 0, members + (empty ? "" : ",")});
  } else {
    added_front += "\"args\":{" + members + "},";
  }
  if (!added_front.empty()) edits.push_back({1, 0, added_front});
  apply(std::move(edits), text);
  ++counts_.renamed;
}

}  // namespace jqtrace
