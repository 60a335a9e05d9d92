#include "validate.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "begin_end.h"
#include "event.h"
#include "flat_map.h"
#include "interner.h"
#include "jobque.h"
#include "lane_index.h"
#include "numbers.h"
#include "parts.h"
#include "stream_parts.h"
#include "profile.h"
#include "suggest.h"
#include "timings.h"

namespace jqtrace {
namespace {

constexpr std::string_view kKnownPhases = "XBEiICMbnestfSTpFNODPVvRc()";
constexpr std::string_view kMetadataNames[] = {"process_name", "process_labels", "process_sort_index",
                                               "thread_name", "thread_sort_index"};

/// What a chain needs until its publish (which jobque writes after the chunks) is seen.
/// What the chain rules need of one chain, in 12 bytes: each part's validator holds one for
/// every chain it sees, and a trace written lane after lane shows every chain to every part
/// (report -j 2 of the 8-lane 200 MB bench trace peaked at the join of two parts' 130,000
/// checks: 16 bytes each made it 0.25 of the file). Offsets past 2^48 and event counts past
/// 2^23 - 1 stay at the largest (the message says "or more").
class ChainCheck {
 public:
  static constexpr uint32_t kMaxEvents = (1u << 23) - 1;
  /// Offset of the first event carrying the highest stage so far.
  uint64_t max_stage_at() const { return at_low_ | uint64_t{at_high_} << 32; }
  int16_t max_stage() const { return max_stage_; }
  void raise_max_stage(int16_t stage, uint64_t at) {
    max_stage_ = stage;
    at = std::min<uint64_t>(at, (uint64_t{1} << 48) - 1);
    at_low_ = static_cast<uint32_t>(at);
    at_high_ = static_cast<uint16_t>(at >> 32);
  }
  /// Chunk and stage_wait events (at most kMaxEvents).
  uint32_t events() const { return bits_ & kMaxEvents; }
  void add_events(uint32_t n) {
    bits_ = (bits_ & ~kMaxEvents) | static_cast<uint32_t>(std::min<uint64_t>(uint64_t{events()} + n, kMaxEvents));
  }
  bool published() const { return bits_ >> 31; }
  uint8_t nstages() const { return static_cast<uint8_t>(bits_ >> 23); }
  void publish(uint8_t nstages) { bits_ = events() | uint32_t{nstages} << 23 | 1u << 31; }

 private:
  uint32_t at_low_ = 0;
  uint16_t at_high_ = 0;
  int16_t max_stage_ = -1;
  uint32_t bits_ = 0;  ///< events: 23 bits, nstages: 8, published: 1
};
static_assert(sizeof(ChainCheck) == 12);

/// "N" or, for a count that reached ChainCheck::kMaxEvents, "N or more".
std::string event_count(uint32_t events) {
  return std::to_string(events) + (events == ChainCheck::kMaxEvents ? " or more" : "");
}

/// An X span as the overlap check keeps it: where it lies and where it is in the file.
struct SpanAt {
  int64_t ts = 0, end = 0;
  uint64_t offset = 0;
};

/// 128 bytes, its label made when a message needs it (a trace of a million one-span lanes
/// kept a million labels, 32 bytes each and more for long string ids).
struct LaneCheck {
  ProcessId pid, tid;
  uint64_t first = 0;  ///< offset of the lane's first event
  int64_t last_end = 0;
  uint64_t spans = 0;
  /// The overlap check: the lane's first and last X span (in file order), and the spans
  /// that start inside the X span before them and end after it (count, first offset).
  SpanAt first_x;
  int64_t last_x_ts = 0, last_x_end = 0;
  uint64_t overlaps = 0, first_overlap = 0;
  bool has_x = false;
  bool timed = false;
  /// File offsets of the lane's B and E events: made at the first one (jobque traces have
  /// none), so that the lane stays small where every event touches it.
  std::unique_ptr<BeginEndPairing<uint64_t>> begin_ends;

  BeginEndPairing<uint64_t>& pairing() {
    if (!begin_ends) begin_ends = std::make_unique<BeginEndPairing<uint64_t>>();
    return *begin_ends;
  }
};
static_assert(sizeof(LaneCheck) <= 128);

struct FirstSeen {
  uint64_t first = 0;  ///< offset
  uint64_t count = 0;
};

std::string us(int64_t ns) { return us_text(ns); }

class Validator final : public EventSink, public DiagnosticSink {
 public:
  /// source: where positions are looked up (null: not yet, for a part of a parallel read).
  Validator(DiagnosticSink& out, ValidateResult& result, Interner& names, Source* source)
      : out_(&out), result_(&result), names_(&names), source_(source) {
    span_names_ = JobqueNames::interned(names);
  }

  // DiagnosticSink: everything found passes through here to be counted and located.
  void report(Diagnostic d) override {
    if (source_ && d.offset != Diagnostic::kNoOffset) d.position = source_->locate(d.offset);
    (d.severity == Severity::error ? result_->errors : result_->warnings)++;
    ++result_->rule_counts[d.rule];
    out_->report(std::move(d));
  }

  /// From now on report to out (a parallel read reading the rest of the input into the
  /// first part's validator keeps those reports apart).
  void redirect(DiagnosticSink& out) { out_ = &out; }

  /// After a parallel read: from now on report to out, count into result, locate in source.
  void retarget(DiagnosticSink& out, ValidateResult& result, Source& source) {
    out_ = &out;
    result_ = &result;
    source_ = &source;
  }

  /// The names now live in `names` (the same ids: a loaded model's interner moved into
  /// place).
  void rebind(Interner& names) { names_ = &names; }

  /// Joins the state of the part read after this one (names: its ids to these). An E
  /// there that closed nothing but would have closed a B still open here is no longer
  /// unmatched: its offset goes to *withdrawn, for the caller to drop that report. False
  /// when the join cannot be exact: a rule would have judged that part's events
  /// differently had it seen this part first (a chain published here and again there, or
  /// with a stage out of range there). Only broken traces get there; they are read again
  /// in one pass.
  /// Nothing changes here when the join cannot be exact.
  bool absorb(Validator& later, const std::vector<uint32_t>& names, std::vector<uint64_t>* withdrawn) {
    bool exact = true;
    later.chains_.for_each([&](int64_t id, const ChainCheck& p) {
      const ChainCheck* c = std::as_const(chains_).find(id);
      if (c && c->published() && (p.published() || (p.events() && p.max_stage() >= c->nstages()))) exact = false;
    });
    if (!exact) return false;
    chains_.absorb_each(later.chains_, [&](int64_t id, const ChainCheck& p) {
      ChainCheck* here = chains_.find(id);
      if (!here) {
        chains_[id] = p;
        return;
      }
      ChainCheck& c = *here;
      c.add_events(p.events());
      if (p.max_stage() > c.max_stage()) c.raise_max_stage(p.max_stage(), p.max_stage_at());
      if (p.published()) c.publish(p.nstages());
    });
    absorb_lanes(later, names, withdrawn);
    for (const auto& [name, seen] : later.global_instants_) merge_first_seen(global_instants_[names[name]], seen);
    for (const auto& [tag, seen] : later.tags_) merge_first_seen(tags_[tag], seen);
    if (later.profile_.present) profile_ = later.profile_;
    for (uint64_t at : later.events_arrays_) note_first_two(events_arrays_, at);
    for (uint64_t at : later.profiles_) note_first_two(profiles_, at);
    window_ = window_ || later.window_;
    jobque_ = jobque_ || later.jobque_;
    if (later.have_time_) {
      trace_start_ = have_time_ ? std::min(trace_start_, later.trace_start_) : later.trace_start_;
      trace_end_ = have_time_ ? std::max(trace_end_, later.trace_end_) : later.trace_end_;
      have_time_ = true;
    }
    last_lane_.reset();
    return true;
  }

  void on_profile(const JobqueProfile& p) override { profile_ = p; }
  /// Where the first two traceEvents arrays and jobqueProfiles start (a second is warned of).
  void on_root_member(RootMember m, uint64_t offset) override {
    note_first_two(m == RootMember::events ? events_arrays_ : profiles_, offset);
  }
  static void note_first_two(std::vector<uint64_t>& seen, uint64_t offset) {
    if (seen.size() < 2) seen.push_back(offset);
  }
  /// A window jqtrace cut: its lanes end at the cut on purpose.
  void on_window_record(const WindowRecord& w) override { window_ = window_ || w.present; }

  void on_event(const RawEvent& e, const Interner&) override {
    field_problems(e);
    if (e.ph == 0) return;
    if (kKnownPhases.find(e.ph) == std::string_view::npos) {
      problem("unknown-phase", std::string("unknown phase '") + e.ph + "'", e);
      return;
    }
    required_fields(e);
    LaneCheck* lane = e.ph == 'M' ? nullptr : lane_for(e);
    switch (e.ph) {
      case 'X': span(e, lane); break;
      case 'B':
      case 'E': begin_end(e, lane); break;
      case 'i':
      case 'I': instant(e); break;
      case 'C': counter(e); break;
      case 'M': metadata(e); break;
      default: break;
    }
    if (lane && e.has_ts) {
      int64_t end = e.ts_ns + (e.ph == 'X' && e.has_dur && e.dur_ns > 0 ? e.dur_ns : 0);
      lane->last_end = lane->timed ? std::max(lane->last_end, end) : end;
      lane->timed = true;
      trace_end_ = have_time_ ? std::max(trace_end_, end) : end;
      trace_start_ = have_time_ ? std::min(trace_start_, e.ts_ns) : e.ts_ns;
      have_time_ = true;
    }
  }

  /// Rules that need the whole file, reported together in file order.
  void finish(bool truncated) {
    truncated_ = truncated;
    for (LaneCheck& lane : lanes_)
      for (uint64_t b : lane.begin_ends ? lane.begin_ends->unclosed() : std::vector<uint64_t>{})
        defer(make_diagnostic("unclosed-begin", "B event on lane " + label(lane) + " is never closed", b));
    if (events_arrays_.size() > 1)
      defer(make_diagnostic("duplicate-root-key", "a second traceEvents array: its events are read as well", events_arrays_[1]));
    if (profiles_.size() > 1)
      defer(make_diagnostic("duplicate-root-key", "a second jobqueProfile: it replaces the first", profiles_[1]));
    result_->jobque = jobque_ || profile_.present;
    // Generic traces only: their self times depend on nesting. A jobque lane's spans follow
    // one another, and the tracer's clock lets one start a few ns before the last ends.
    if (!result_->jobque) check_overlaps();
    if (result_->jobque) {
      // A cut-off file loses publishes and lane ends to the cut, not to full rings.
      if (!truncated_) check_chains();
      check_markers();
      check_tags();
      check_lanes();
    }
    std::stable_sort(deferred_.begin(), deferred_.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.offset < b.offset; });
    for (Diagnostic& d : deferred_) report(std::move(d));
  }

 private:
  void defer(Diagnostic d) { deferred_.push_back(std::move(d)); }

  static void merge_first_seen(FirstSeen& into, const FirstSeen& later) {
    if (into.count == 0) into.first = later.first;
    into.count += later.count;
  }

  /// "pid:tid" as messages name a lane.
  std::string label(const LaneCheck& lane) const { return lane_label(lane.pid, lane.tid, *names_); }

  /// Lane i's key, for lane_index_.
  auto key_of() const {
    return [this](uint32_t lane) { return lane_key(lanes_[lane].pid, lanes_[lane].tid); };
  }

  void absorb_lanes(Validator& later, const std::vector<uint32_t>& names, std::vector<uint64_t>* withdrawn) {
    // Taken from the front and freed one by one: a million lanes are not held twice.
    for (; !later.lanes_.empty(); later.lanes_.pop_front()) {
      LaneCheck& p = later.lanes_.front();
      p.pid = reinterned(p.pid, names);
      p.tid = reinterned(p.tid, names);
      auto [at, added] = lane_index_.find_or_add(lane_key(p.pid, p.tid), static_cast<uint32_t>(lanes_.size()), key_of());
      if (added) {
        lanes_.push_back(std::move(p));
        continue;
      }
      LaneCheck& c = lanes_[at];
      // The later part's stack was empty at each of these Es; one pass would have had
      // this part's open Bs under it, and closed the innermost.
      if (p.begin_ends)
        c.pairing().absorb(std::move(*p.begin_ends), [&](uint64_t, uint64_t end) { withdrawn->push_back(end); });
      c.spans += p.spans;
      // The later part's first X span follows this part's last: one pass compared them.
      if (c.has_x && p.has_x && overlaps_without_nesting(c.last_x_ts, c.last_x_end, p.first_x))
        note_overlap(c, p.first_x.offset);
      if (p.overlaps) {
        if (c.overlaps == 0) c.first_overlap = p.first_overlap;
        c.overlaps += p.overlaps;
      }
      if (p.has_x) {
        if (!c.has_x) c.first_x = p.first_x;
        c.last_x_ts = p.last_x_ts;
        c.last_x_end = p.last_x_end;
        c.has_x = true;
      }
      if (p.timed) {
        c.last_end = c.timed ? std::max(c.last_end, p.last_end) : p.last_end;
        c.timed = true;
      }
    }
  }

  void problem(std::string_view rule, std::string message, const RawEvent& e) {
    report(make_diagnostic(rule, std::move(message), e.offset));
  }

  void field_problems(const RawEvent& e) {
    if (e.problems == 0 && e.ts_ns >= 0 && e.dur_ns >= 0 && e.ph != 0) return;  // the usual case
    struct Bit {
      uint32_t bit;
      std::string_view rule, message;
    };
    static constexpr Bit kBits[] = {
        {kBadPh, "bad-field-type", "ph is not a one-character string"},
        {kNameNotString, "bad-field-type", "name is not a string"},
        {kCatNotString, "bad-field-type", "cat is not a string"},
        {kTsNotNumber, "bad-ts", "ts is not a number"},
        {kTsOutOfRange, "bad-ts", "ts is out of range"},
        {kDurNotNumber, "bad-dur", "dur is not a number"},
        {kDurOutOfRange, "bad-dur", "dur is out of range"},
        {kPidBad, "bad-field-type", "pid is not an integer or a string"},
        {kTidBad, "bad-field-type", "tid is not an integer or a string"},
        {kScopeBad, "bad-instant-scope", "s is not a one-character string"},
        {kArgsNotObject, "bad-field-type", "args is not an object"},
        {kDuplicateKey, "duplicate-key", "a field appears twice in the event; its last value counts"},
        {kBadString, "bad-string", "a string is not valid UTF-8 or holds a NUL; it is read with \\xHH escapes in place of its bad bytes"},
    };
    for (const Bit& b : kBits)
      if (e.problems & b.bit) problem(b.rule, std::string(b.message), e);
    if (e.has_ts && e.ts_ns < 0) problem("bad-ts", "ts is negative (" + us(e.ts_ns) + ")", e);
    if (e.has_dur && e.dur_ns < 0) problem("bad-dur", "dur is negative (" + us(e.dur_ns) + ")", e);
    if (e.ph == 0 && !(e.problems & kBadPh)) problem("missing-field", "event has no ph", e);
  }

  void required_fields(const RawEvent& e) {
    bool need_name = e.ph == 'X' || e.ph == 'B' || e.ph == 'i' || e.ph == 'I' || e.ph == 'C' || e.ph == 'M';
    bool need_ts = e.ph != 'M';
    auto missing = [&](const char* field) {
      problem("missing-field", std::string("'") + e.ph + "' event has no " + field, e);
    };
    if (need_name && e.name == Interner::kNone && !(e.problems & kNameNotString)) missing("name");
    if (need_ts && !e.has_ts && !(e.problems & (kTsNotNumber | kTsOutOfRange))) missing("ts");
    if (e.ph == 'X' && !e.has_dur && !(e.problems & (kDurNotNumber | kDurOutOfRange))) missing("dur");
    if (e.ph == 'C' && !e.has_args && !(e.problems & kArgsNotObject)) missing("args");
  }

  LaneCheck* lane_for(const RawEvent& e) {
    // Events come lane after lane: the previous event's lane is almost always this one.
    if (last_lane_ && e.pid == last_pid_ && e.tid == last_tid_) return &lanes_[*last_lane_];
    auto [at, added] = lane_index_.find_or_add(lane_key(e.pid, e.tid), static_cast<uint32_t>(lanes_.size()), key_of());
    last_lane_ = at;
    last_pid_ = e.pid;
    last_tid_ = e.tid;
    if (added) {
      LaneCheck lane;
      lane.pid = e.pid;
      lane.tid = e.tid;
      lane.first = e.offset;
      lanes_.push_back(std::move(lane));
    }
    return &lanes_[at];
  }

  /// Spans on one lane nest or follow each other; one that starts inside the span before it
  /// and ends after it does neither (self times then give the overlap to the later one).
  static bool overlaps_without_nesting(int64_t before_ts, int64_t before_end, const SpanAt& s) {
    return s.ts > before_ts && s.ts < before_end && s.end > before_end;
  }
  static void note_overlap(LaneCheck& lane, uint64_t offset) {
    if (lane.overlaps++ == 0) lane.first_overlap = offset;
  }

  void span(const RawEvent& e, LaneCheck* lane) {
    ++lane->spans;
    if (e.has_ts && e.has_dur && e.dur_ns >= 0) {
      SpanAt s{e.ts_ns, e.ts_ns + e.dur_ns, e.offset};
      if (!lane->has_x) lane->first_x = s;
      else if (overlaps_without_nesting(lane->last_x_ts, lane->last_x_end, s)) note_overlap(*lane, e.offset);
      lane->last_x_ts = s.ts;
      lane->last_x_end = s.end;
      lane->has_x = true;
    }
    bool jobque_name = span_names_.chained(e.name);
    if (!jobque_name) return;
    bool any = e.has_stage || e.has_arg || e.has_chain || (e.problems & (kStageBad | kArgBad | kChainBad));
    if (!any) return;  // a generic span that happens to share a jobque name
    if (e.name != span_names_.stage_wait && e.has_chain) jobque_ = true;
    if (!e.has_stage || !e.has_arg || !e.has_chain) {
      problem("jobque-args",
              std::string(names_->view(e.name)) + " lacks integer args.stage, args.arg and args.chain", e);
      return;
    }
    if (e.name == span_names_.publish) publish(e);
    else chain_member(e);
  }

  void publish(const RawEvent& e) {
    int64_t nstages = publish_nstages(e.stage), tag = publish_tag(e.stage);
    if (nstages < 1 || nstages > 6)
      problem("nstages-range",
              "publish of chain " + std::to_string(e.chain) + " declares " + std::to_string(nstages) +
                  " stages (expected 1..6)",
              e);
    if (tag != 0) {
      FirstSeen& t = tags_[tag];
      if (t.count++ == 0) t.first = e.offset;
    }
    ChainCheck& c = chains_[e.chain];
    if (c.published()) {
      problem("duplicate-publish", "chain " + std::to_string(e.chain) + " is published again", e);
      return;
    }
    c.publish(static_cast<uint8_t>(nstages));
  }

  void chain_member(const RawEvent& e) {
    ChainCheck& c = chains_[e.chain];
    c.add_events(1);
    if (e.stage < 0 || (c.published() && e.stage >= c.nstages())) {
      stage_problem(e.stage, e.chain, c.nstages(), e.offset, std::string(names_->view(e.name)));
      return;
    }
    int16_t stage = static_cast<int16_t>(std::min<int64_t>(e.stage, INT16_MAX));
    if (stage > c.max_stage()) c.raise_max_stage(stage, e.offset);
  }

  void stage_problem(int64_t stage, int64_t chain, int64_t nstages, uint64_t at, const std::string& what) {
    report(make_diagnostic("stage-range",
                           what + " of chain " + std::to_string(chain) + " has stage " + std::to_string(stage) +
                               " but the chain has " + std::to_string(nstages) + " stages",
                           at));
  }

  void begin_end(const RawEvent& e, LaneCheck* lane) {
    if (e.ph == 'B') lane->pairing().begin(e.offset);
    else if (!lane->pairing().end(e.offset))
      problem("unmatched-end", "E event on lane " + label(*lane) + " closes nothing", e);
  }

  void instant(const RawEvent& e) {
    char s = e.scope ? e.scope : 't';
    if (!(e.problems & kScopeBad) && s != 'g' && s != 'p' && s != 't')
      problem("bad-instant-scope", std::string("instant scope '") + s + "' is not g, p or t", e);
    if (s == 'g' && e.name != Interner::kNone) {
      FirstSeen& m = global_instants_[e.name];
      if (m.count++ == 0) m.first = e.offset;
    }
  }

  void counter(const RawEvent& e) {
    if (e.has_args && (e.args_numbers == 0 || e.args_non_numbers > 0))
      problem("bad-counter-args", "counter args must be one or more numbers", e);
  }

  void metadata(const RawEvent& e) {
    if (e.name == Interner::kNone) return;
    std::string_view name = names_->view(e.name);
    for (std::string_view known : kMetadataNames)
      if (name == known) {
        if (name == "thread_name" || name == "thread_sort_index") lane_for(e);
        return;
      }
    problem("unknown-metadata", "unknown metadata event '" + std::string(name) + "'", e);
  }

  void check_chains() {
    chains_.for_each([&](int64_t id, const ChainCheck& c) {
      if (c.events() == 0) return;
      if (!c.published())
        defer(make_diagnostic("orphan-chain",
                              "chain " + std::to_string(id) + " has " + event_count(c.events()) +
                                  " chunk/stage_wait events but no publish (a full ring?)",
                              c.max_stage_at()));
      else if (c.max_stage() >= c.nstages())
        defer(make_diagnostic("stage-range",
                              "an event of chain " + std::to_string(id) + " has stage " + std::to_string(c.max_stage()) +
                                  " but the chain has " + std::to_string(c.nstages()) + " stages",
                              c.max_stage_at()));
    });
  }

  void check_markers() {
    if (!profile_.present) return;
    for (const auto& [name_id, seen] : global_instants_) {
      std::string name(names_->view(name_id));
      if (profile_.has_marker(name)) continue;
      std::vector<std::string> kinds;
      for (const ProfileMarker& m : profile_.markers) kinds.push_back(m.name);
      std::string hint = closest_match(name, kinds);
      defer(make_diagnostic("marker-unregistered",
                            "global instant '" + name + "' is not a marker of jobqueProfile (" +
                                std::to_string(seen.count) + " events)" +
                                (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                            seen.first));
    }
  }

  void check_tags() {
    if (!profile_.present) return;  // legacy traces name tags by the built-in table
    for (const auto& [tag, seen] : tags_) {
      if (profile_.category(tag)) continue;
      defer(make_diagnostic("unregistered-tag",
                             "tag " + std::to_string(tag) + " has no category in jobqueProfile (" +
                                 std::to_string(seen.count) + " publishes; shown as '" + legacy_tag_name(tag) + "')",
                             seen.first));
    }
  }

  void check_overlaps() {
    for (const LaneCheck& lane : lanes_)
      if (lane.overlaps)
        defer(make_diagnostic("overlapping-spans",
                              (lane.overlaps == 1 ? std::string("an X span on lane ") + label(lane) +
                                                        " starts inside the span before it and ends after it"
                                                  : std::to_string(lane.overlaps) + " X spans on lane " + label(lane) +
                                                        " start inside the span before them and end after it") +
                                  " (neither nested nor following: self times give the overlap to the later span)",
                              lane.first_overlap));
  }

  void check_lanes() {
    for (const LaneCheck& lane : lanes_) {
      if (profile_.lanes > 0 && !lane.tid.is_string && lane.tid.number >= profile_.lanes)
        defer(make_diagnostic("tid-range",
                               "lane " + label(lane) + " has tid " + std::to_string(lane.tid.number) +
                                   " but jobqueProfile.lanes is " + std::to_string(profile_.lanes),
                               lane.first));
      if (!truncated_ && !window_ && lane.spans > 0 && lane_stopped_early(lane.last_end, trace_start_, trace_end_))
        defer(make_diagnostic("lane-stopped-early",
                               "lane " + label(lane) + " stops recording at " + us(lane.last_end) + " us, " +
                                   us(trace_end_ - lane.last_end) + " us before the trace ends (ring full?)",
                               lane.first));
    }
  }

  DiagnosticSink* out_;
  ValidateResult* result_;
  Interner* names_;  ///< the interner the events' name ids are in
  Source* source_;
  std::vector<Diagnostic> deferred_;
  JobqueNames span_names_;
  JobqueProfile profile_;
  std::vector<uint64_t> events_arrays_, profiles_;  ///< where they start, the first two
  bool jobque_ = false;
  bool truncated_ = false;
  bool window_ = false;  ///< the file carries a jqtraceWindow record
  DenseFirstMap<ChainCheck> chains_;
  std::deque<LaneCheck> lanes_;  ///< not a vector: a million lanes were held twice as it grew
  LaneIndex lane_index_;
  std::optional<std::size_t> last_lane_;
  ProcessId last_pid_, last_tid_;
  std::map<uint32_t, FirstSeen> global_instants_;
  std::map<int64_t, FirstSeen> tags_;
  int64_t trace_start_ = 0, trace_end_ = 0;
  bool have_time_ = false;
};

}  // namespace

namespace {

/// What every read ends with: the input error or the cut, then the whole-file rules.
void conclude(Validator& validator, ValidateResult& result) {
  result.events = result.read.events;
  switch (result.read.status) {
    case ReadStatus::input_error:
      result.readable = false;
      validator.report(make_diagnostic(result.read.rule, result.read.message, result.read.offset));
      return;
    case ReadStatus::truncated:
      validator.report(make_diagnostic("truncated",
                                       "the trace is cut off at byte " + std::to_string(result.read.bytes) + " (" +
                                           std::to_string(result.read.events) + " complete events)" +
                                           (result.read.stream_cut
                                                ? std::string("; the ") + compression_name(result.read.compression) +
                                                      " stream ends early"
                                                : ""),
                                       result.read.offset));
      break;
    case ReadStatus::ok: break;
  }
  validator.finish(result.read.status == ReadStatus::truncated);
}

/// Reports the joined parts' findings (in file order) through the joined validator to out,
/// then what every read ends with.
ValidateResult conclude_found(Validator& joined, std::vector<Diagnostic>& found, DiagnosticSink& out,
                              Source& locator, const ReadResult& read) {
  ValidateResult result;
  joined.retarget(out, result, locator);
  for (Diagnostic& d : found) joined.report(std::move(d));
  found.clear();
  result.read = read;
  conclude(joined, result);
  return result;
}

/// Appends a joined part's findings to found, but for the unmatched-end reports an earlier
/// part's B answered (withdrawn: their offsets).
void keep_findings(std::vector<Diagnostic>& part, std::vector<uint64_t> withdrawn, std::vector<Diagnostic>* found) {
  std::sort(withdrawn.begin(), withdrawn.end());
  for (Diagnostic& d : part)
    if (!(d.rule == "unmatched-end" && std::binary_search(withdrawn.begin(), withdrawn.end(), d.offset)))
      found->push_back(std::move(d));
  part.clear();
}

/// One part of a parallel validation: its own names, findings and state.
struct ValidatePart {
  Interner names;
  CollectedDiagnostics found;
  ValidateResult scratch;  ///< the part's own counts (the join counts again)
  std::unique_ptr<Validator> validator;
};

/// How the parts of a parallel validation are read and joined (file parts and stream parts
/// alike): each part's findings are kept, in order, until the joined validator reports them.
class ValidateLoader {
 public:
  ReadResult read(std::size_t k, Source& src, const ReadOptions& read) {
    ValidatePart& part = fresh(k);
    part.validator = std::make_unique<Validator>(part.found, part.scratch, part.names, nullptr);
    return read_trace(src, *part.validator, part.names, part.validator.get(), read);
  }

  /// Joins part k to parts 0..k-1; false (nothing joined) when it cannot be exact.
  bool join(std::size_t k) {
    ValidatePart& part = at(k);
    std::vector<uint64_t> withdrawn;  // unmatched-end reports an earlier part's B answers
    if (k > 0) {
      std::vector<uint32_t> names = first().names.intern_all(part.names);
      if (!first().validator->absorb(*part.validator, names, &withdrawn)) return false;
    }
    keep_findings(part.found.items, std::move(withdrawn), &found_);
    if (k > 0) part.validator.reset();
    return true;
  }

  /// Reads the rest of the input, from a part's start, into the validator joined so far.
  ReadResult read_rest(std::size_t, Source& src) {
    ValidatePart& into = first();
    CollectedDiagnostics rest;
    into.validator->redirect(rest);
    ReadResult r = read_trace(src, *into.validator, into.names, into.validator.get(), ReadOptions{});
    for (Diagnostic& d : rest.items) found_.push_back(std::move(d));
    return r;
  }

  void drop(std::size_t k) { fresh(k); }

  /// Reports every finding through the joined validator, then the whole-file rules.
  void conclude_into(DiagnosticSink& out, Source& locator, const std::vector<PartRead>& reads, std::size_t count,
                     ValidateResult* result) {
    *result = conclude_found(*first().validator, found_, out, locator, joined_result(reads, count));
  }

 private:
  ValidatePart& at(std::size_t k) { return parts_.at(k); }
  ValidatePart& fresh(std::size_t k) {
    ValidatePart& part = at(k);
    part.validator.reset();
    part.found.items.clear();
    part.scratch = ValidateResult{};
    part.names = Interner{};
    return part;
  }
  ValidatePart& first() { return at(0); }

  PartSlots<ValidatePart> parts_;
  std::vector<Diagnostic> found_;  ///< the joined parts' findings, in order
};

bool validate_stream_parallel(StreamInput& in, unsigned threads, DiagnosticSink& out, const ProgressFn& progress,
                              uint64_t part_bytes, ValidateResult* result) {
  ValidateLoader loader;
  StreamRead read = read_stream_parts(in, threads, part_bytes, progress, part_work(loader));
  if (read.reads.empty()) return false;  // not reached: the last part always counts
  Source locator(memory_input(""), in.input.name(), in.input.size(), std::move(read.lines));
  loader.conclude_into(out, locator, read.reads, read.reads.size(), result);
  return true;
}

}  // namespace

struct ValidationTee::State {
  CollectedDiagnostics found;  ///< in file order; the validator reports here until conclude
  ValidateResult scratch;      ///< counts while reading (conclude counts again)
  std::unique_ptr<Validator> validator;  ///< made at bind(); an unbound root adopts part 0's
  bool exact = true;
};

ValidationTee::ValidationTee() : state_(std::make_unique<State>()) {}
ValidationTee::~ValidationTee() = default;

std::unique_ptr<SplittableSink> ValidationTee::fork() const { return std::make_unique<ValidationTee>(); }

void ValidationTee::bind(Interner& names) {
  state_->validator = std::make_unique<Validator>(state_->found, state_->scratch, names, nullptr);
}

DiagnosticSink* ValidationTee::container_diagnostics() { return state_->validator.get(); }

void ValidationTee::on_event(const RawEvent& e, const Interner& names) { state_->validator->on_event(e, names); }
void ValidationTee::on_profile(const JobqueProfile& p) { state_->validator->on_profile(p); }
void ValidationTee::on_window_record(const WindowRecord& w) { state_->validator->on_window_record(w); }
void ValidationTee::on_root_member(RootMember m, uint64_t offset) { state_->validator->on_root_member(m, offset); }

void ValidationTee::absorb(SplittableSink& later_sink, const std::vector<uint32_t>& names) {
  State& later = *static_cast<ValidationTee&>(later_sink).state_;
  if (!state_->exact || !later.validator) return;
  if (!state_->validator) {  // the first part: its state is the joined state so far
    std::swap(state_, static_cast<ValidationTee&>(later_sink).state_);
    return;
  }
  std::vector<uint64_t> withdrawn;
  if (!state_->validator->absorb(*later.validator, names, &withdrawn)) {
    state_->exact = false;
    return;
  }
  keep_findings(later.found.items, std::move(withdrawn), &state_->found.items);
}

bool ValidationTee::exact() const { return state_ && state_->exact; }

ValidateResult ValidationTee::conclude(DiagnosticSink& out, Source& locator, const ReadResult& read,
                                       Interner& names) {
  if (!state_->validator) bind(names);  // nothing was read
  state_->validator->rebind(names);
  ValidateResult result = conclude_found(*state_->validator, state_->found.items, out, locator, read);
  state_.reset();  // the checks' state, freed before the analyses that follow take theirs
  return result;
}

ValidateResult validate_trace(Source& source, DiagnosticSink& out) {
  ValidateResult result;
  Interner names;
  Validator validator(out, result, names, &source);
  {
    PhaseClock clock("parse", PhaseKind::scales);  // one part: the path -j 1 takes
    result.read = read_trace(source, validator, names, &validator);
  }
  PhaseClock clock("finish", PhaseKind::serial);
  conclude(validator, result);
  return result;
}

namespace {

/// The parts of plan checked on `threads` threads and joined as they are read (see
/// validate_trace_parallel).
bool validate_planned(const PartOpener& open, const PartPlan& plan, unsigned threads, DiagnosticSink& out,
                      const ProgressFn& progress, ValidateResult* result) {
  if (plan.starts.size() < 2) return false;
  ValidateLoader loader;
  std::vector<PartRead> reads = read_parts(open, plan, threads, progress, part_work(loader));
  if (reads.empty()) return false;
  auto locator = open(0, "");  // positions of what the parts found
  if (!locator) return false;
  loader.conclude_into(out, *locator, reads, reads.size(), result);
  return true;
}

}  // namespace

bool validate_trace_parallel(const std::shared_ptr<Input>& input, unsigned threads, DiagnosticSink& out,
                             const ProgressFn& progress, uint64_t min_part_bytes, ValidateResult* result) {
  if (threads < 2) return false;
  if (auto stream = open_stream_input(*input))
    return validate_stream_parallel(*stream, threads, out, progress, min_part_bytes, result);
  return validate_planned(file_parts(input), plan_file(*input, threads, min_part_bytes), threads, out, progress,
                          result);
}

bool validate_text_parallel(std::shared_ptr<const std::string> text, unsigned parts, unsigned threads,
                            DiagnosticSink& out, uint64_t min_part_bytes, ValidateResult* result) {
  PartPlan plan = plan_parts(*text, parts, min_part_bytes);
  return validate_planned(text_parts(std::move(text)), plan, threads, out, {}, result);
}

}  // namespace jqtrace
