// libFuzzer target: trace bytes (plain or gzip) -> model -> every analysis, the window
// selection and rebase, and the validator. Any crash, sanitizer report, or a disagreement
// the code asserts below is a finding.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <rapidjson/document.h>

#include "formats.h"
#include "gaps.h"
#include "markers.h"
#include "stats.h"
#include "stats_schema.h"
#include "svg.h"
#include "timeline.h"
#include "unit_busy.h"
#include "validate.h"
#include "window.h"

using namespace jqtrace;

namespace {

struct NullSink final : DiagnosticSink {
  void report(Diagnostic) override {}
};

/// Every number two range stats print, compared (doubles as computed: the same sums in
/// the same order give the same bits).
bool same_stats(const RangeStats& a, const RangeStats& b) {
  if (a.events != b.events || a.busy_ns != b.busy_ns || a.wait_ns != b.wait_ns || a.publishes != b.publishes ||
      a.idle_pct != b.idle_pct || a.parallelism != b.parallelism || a.groups.size() != b.groups.size())
    return false;
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    const GroupStats &x = a.groups[g], &y = b.groups[g];
    if (x.name != y.name || x.events != y.events || x.busy_ns != y.busy_ns || x.total_ns != y.total_ns ||
        x.self_ns != y.self_ns || x.share_pct != y.share_pct)
      return false;
  }
  return true;
}

bool same(const Distribution& a, const Distribution& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Every class's and stage's samples, and the publishes: what the runs of chains join.
bool same_gaps(const GapsReport& a, const GapsReport& b) {
  if (a.chains != b.chains || a.classes.size() != b.classes.size() || a.tail.size() != b.tail.size() ||
      !same(a.publish.post_cls_gap_ns, b.publish.post_cls_gap_ns) || !same(a.wake_dur_ns, b.wake_dur_ns))
    return false;
  for (std::size_t k = 0; k < a.classes.size(); ++k) {
    const ChainClass &x = a.classes[k], &y = b.classes[k];
    if (x.key != y.key || !same(x.wall_ns, y.wall_ns) || !same(x.first_claim_ns, y.first_claim_ns) ||
        x.stages.size() != y.stages.size())
      return false;
    for (std::size_t s = 0; s < x.stages.size(); ++s)
      if (!same(x.stages[s].span_ns, y.stages[s].span_ns) || !same(x.stages[s].busy_ns, y.stages[s].busy_ns) ||
          !same(x.stages[s].gap_from_prev_ns, y.stages[s].gap_from_prev_ns))
        return false;
  }
  for (std::size_t t = 0; t < a.tail.size(); ++t)
    if (!same(a.tail[t].tail_pct, b.tail[t].tail_pct)) return false;
  return true;
}

/// The busy walk of report's bars (every unit, and every other unit in a second list)
/// against the unit rows: the same categories with busy time, busy and share, in order.
void check_unit_busy(const Trace& trace, const SpanIndex& index, const std::vector<UnitRow>& rows) {
  std::vector<std::vector<Unit>> lists(2);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    lists[0].push_back(rows[k].unit);
    if (k % 2 == 0) lists[1].push_back(rows[k].unit);
  }
  std::optional<UnitsBusy> busy = busy_by_category_of_units(trace, index, lists, 2);
  if (!busy) return;  // not a jobque trace, units that overlap, or too many tallies
  for (std::size_t list = 0; list < 2; ++list)
    for (std::size_t u = 0; u < lists[list].size(); ++u) {
      const RangeStats& want = rows[list == 0 ? u : 2 * u].stats;
      const std::vector<CategoryBusy>& got = (*busy)[list][u];
      std::size_t c = 0;
      for (const GroupStats& g : want.groups) {
        if (g.busy_ns <= 0) continue;
        if (c == got.size() || trace.categories[got[c].category].name != g.name || got[c].busy_ns != g.busy_ns ||
            got[c].share_pct != g.share_pct)
          std::abort();
        ++c;
      }
      if (c != got.size()) std::abort();
    }
}

/// The stats document of s, whose rows of groups and lanes are made from the trace as it
/// is written, in every format: the table fitted to a narrow terminal too, JSON valid.
void write_stats(const Trace& trace, const RangeStats& s) {
  result::StatsContext c;
  c.trace = &trace;
  c.hist = true;
  result::Document doc = result::stats_document(s, c);
  result::RenderOptions narrow;
  narrow.width = 30;
  narrow.color = narrow.utf8 = true;
  for (result::Format f : result::kDocumentFormats) {
    std::string out = result::render(doc, f, f == result::Format::table ? narrow : result::RenderOptions{});
    if (out.find('\0') != std::string::npos) std::abort();
    if (f != result::Format::json) continue;
    rapidjson::Document parsed;
    parsed.Parse<rapidjson::kParseValidateEncodingFlag>(out.c_str());
    if (parsed.HasParseError()) std::abort();
  }
}

void analyse(const Trace& trace) {
  SpanIndex index(trace);
  Range whole = whole_trace(trace);
  std::vector<GroupBy> groupings = trace.jobque
                                       ? std::vector<GroupBy>{GroupBy::category, GroupBy::name, GroupBy::lane, GroupBy::kind}
                                       : std::vector<GroupBy>{GroupBy::cat, GroupBy::name, GroupBy::lane};
  for (GroupBy by : groupings) {
    StatsOptions options;
    options.by = by;
    options.hist = true;
    options.slice_rows = 3;  // many slices: the split walk and its joins
    options.threads = 2;
    RangeStats s = compute_stats(trace, index, whole, options);
    compute_stats(trace, index, {whole.lo + whole.length() / 3, whole.hi - whole.length() / 3}, options);
    write_stats(trace, s);
  }
  for (UnitAtRequest at : {UnitAtRequest::automatic, UnitAtRequest::end}) {
    std::vector<KindSummary> kinds = summarize_kinds(trace, at, QuantileMethod::inclusive);
    if (kinds.empty()) continue;
    // The units in one sweep (unit_rows) are what each unit's own walk gives.
    std::vector<UnitRow> rows = unit_rows(trace, index, kinds.front().kind, kinds.front().rule.at, 2);
    StatsOptions one;
    one.by = trace.jobque ? GroupBy::category : GroupBy::cat;
    one.distributions = false;
    one.lanes = false;
    for (std::size_t k = 0; k < rows.size() && k < 64; ++k)
      if (!same_stats(rows[k].stats, compute_stats(trace, index, rows[k].unit.range, one))) std::abort();
    check_unit_busy(trace, index, rows);
  }
  if (trace.jobque) {  // on one thread, and on two with the chains cut into runs of 2 chunks
    GapsReport one, two;
    std::string error;
    GapsOptions options;
    bool measured = compute_gaps(trace, whole, options, &one, &error);
    options.threads = 2;
    options.min_chunks_per_run = 2;
    if (compute_gaps(trace, whole, options, &two, &error) != measured || (measured && !same_gaps(one, two))) std::abort();
  }
  for (int width : {100, 1400}) {  // the timeline, and its SVG: no NUL whatever the names
    TimelineOptions options;
    options.by = trace.jobque ? GroupBy::category : GroupBy::name;
    options.plot_width_px = width;
    options.max_lanes = width == 100 ? 2 : options.max_lanes;  // the busiest-lanes pick, on small inputs
    options.max_svg_bytes = width == 100 ? 20000 : options.max_svg_bytes;  // several layout passes
    Timeline t = compute_timeline(trace, index, whole, options);
    if (t.lanes.size() != std::min<std::size_t>(trace.lanes.size(), options.max_lanes)) std::abort();
    std::string svg = result::render_timeline_svg(t, "t", {});
    if (svg.find('\0') != std::string::npos) std::abort();
    options.threads = 3;  // lanes laid out on threads: the same picture
    if (result::render_timeline_svg(compute_timeline(trace, index, whole, options), "t", {}) != svg) std::abort();
  }
}

/// What a window's CSV row takes from an event, its names as text.
std::string row_fields(const RawEvent& e, const Interner& names) {
  auto name = [&](uint32_t id) { return id == Interner::kNone ? std::string("-") : std::string(names.view(id)); };
  return name(e.name) + '|' + name(e.cat) + '|' + lane_label(e.pid, e.tid, names) + '|' + std::string(1, e.ph) + '|' +
         std::to_string(e.ts_ns) + '|' + std::to_string(e.dur_ns) + '|' + std::to_string(e.stage) + '|' +
         std::to_string(e.chain) + '|' + std::to_string(e.arg) + '|' + std::to_string(e.problems) + '|' +
         std::to_string(e.has_stage) + std::to_string(e.has_chain) + std::to_string(e.has_arg);
}

/// The chosen events' texts read back a batch at a time must give what each read alone
/// gives (the text is the file's: each reads back in place).
void check_read_back(const std::vector<std::string>& texts) {
  EventTexts batch;
  for (const std::string& t : texts) batch.add(t);
  std::size_t seen = 0;
  batch.read_back([&](std::size_t i, const RawEvent& e, const Interner& names) {
    if (i != seen++) std::abort();
    EventTexts alone;
    alone.add(texts[i]);
    std::size_t one = 0;
    alone.read_back([&](std::size_t, const RawEvent& a, const Interner& own) {
      ++one;
      if (row_fields(a, own) != row_fields(e, names)) std::abort();
    });
    if (one != 1) std::abort();
  });
  if (seen != texts.size()) std::abort();
}

/// The window of the middle third, each chosen event's ts rewritten as --rebase does.
void window(const uint8_t* data, std::size_t size) {
  Trace trace;
  EventIndex index;
  LoadOptions load;
  load.spans = false;
  load.tee = &index;
  auto source = Source::from_string(std::string(reinterpret_cast<const char*>(data), size));
  if (load_trace(*source, &trace, nullptr, load).status == ReadStatus::input_error) return;
  index.finish(trace.end_ns);
  Range whole = whole_trace(trace);
  bool plain = size < 2 || data[0] != 0x1f || data[1] != 0x8b;  // offsets are into the text
  std::vector<std::string> texts;
  for (const EventIndex::Entry& e : select_window(index, {whole.lo + whole.length() / 3, whole.hi}).entries(index)) {
    if (!plain || e.end_offset > size || e.offset > e.end_offset) continue;
    std::string text(reinterpret_cast<const char*>(data) + e.offset, e.end_offset - e.offset);
    texts.push_back(text);
    replace_top_level_number(text, "ts", "0");
  }
  check_read_back(texts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  {
    Trace trace;
    auto source = Source::from_string(bytes);
    ReadResult r = load_trace(*source, &trace, nullptr);
    if (r.status != ReadStatus::input_error) analyse(trace);
  }
  window(data, size);
  NullSink sink;
  auto source = Source::from_string(bytes);
  validate_trace(*source, sink);
  return 0;
}
