#include "sqlite_export.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unistd.h>
#include <vector>

#include <sqlite3.h>

#include "flat_map.h"
#include "latency.h"
#include "markers.h"
#include "parallel.h"
#include "sqlite_pages.h"
#include "timings.h"

namespace jqtrace {
namespace {

/// A marker's arg in a record: NULL when the marker had none.
sqlite_file::Record& arg_field(sqlite_file::Record& r, int64_t arg) { return arg == kNoArg ? r.null() : r.i(arg); }

// Tables: one run a file; every other table's rows carry their run. jqtrace-export(1)
// says what every column holds. Every time is an INTEGER of ns of the file's clock (exact:
// REAL µs lost the sub-µs digits of epoch clocks); the views give µs for people. A column
// name means one thing of one type in every table (grp: a group's id), and the relations are
// declared (FOREIGN KEY: schema browsers show them, foreign_key_check passes). spans is
// stored in (run, lane, ts_ns, seq) order, the order the model holds them in: its rows are
// appended to its one B-tree, which is also the index of a lane's time (a table and a
// separate index of 5M spans took twice as long). lanes and groups are keyed by (run, lane)
// and (run, grp) alike: a join on them is a lookup.
constexpr const char* kSchema = R"SQL(
CREATE TABLE runs(run INTEGER PRIMARY KEY, file TEXT, bytes INTEGER, attribution TEXT, truncated INTEGER,
                  jqtrace_version TEXT, unit_rules TEXT, content_hash TEXT);
CREATE TABLE lanes(run INTEGER REFERENCES runs(run), lane INTEGER, pid TEXT, tid TEXT, name TEXT, busy_ns INTEGER,
                   stopped_ns INTEGER, PRIMARY KEY(run, lane)) WITHOUT ROWID;
CREATE TABLE groups(run INTEGER REFERENCES runs(run), grp INTEGER, name TEXT, color TEXT, guessed INTEGER,
                    tag INTEGER, trace_busy_ns INTEGER, trace_events INTEGER, PRIMARY KEY(run, grp)) WITHOUT ROWID;
CREATE TABLE spans(run INTEGER, lane INTEGER, ts_ns INTEGER, seq INTEGER, dur_ns INTEGER, end_ns INTEGER, name TEXT,
                   grp INTEGER, chain INTEGER, stage INTEGER, arg INTEGER, depth INTEGER,
                   PRIMARY KEY(run, lane, ts_ns, seq), FOREIGN KEY(run, lane) REFERENCES lanes(run, lane),
                   FOREIGN KEY(run, grp) REFERENCES groups(run, grp)) WITHOUT ROWID;
CREATE TABLE chains(run INTEGER, chain INTEGER, grp INTEGER, nstages INTEGER, chunks INTEGER, publish_ts_ns INTEGER,
                    publish_dur_ns INTEGER, wall_ns INTEGER, first_claim_ns INTEGER,
                    FOREIGN KEY(run, grp) REFERENCES groups(run, grp));
CREATE TABLE markers(run INTEGER REFERENCES runs(run), kind TEXT, idx INTEGER, arg INTEGER, ts_ns INTEGER,
                     lane INTEGER, FOREIGN KEY(run, lane) REFERENCES lanes(run, lane));
CREATE TABLE unit_rules(run INTEGER REFERENCES runs(run), kind TEXT, unit_at TEXT, automatic INTEGER,
                        ambiguous INTEGER, nested_in TEXT, rule TEXT);
CREATE TABLE units(run INTEGER REFERENCES runs(run), kind TEXT, idx INTEGER, arg INTEGER, start_ns INTEGER,
                   end_ns INTEGER, dur_ns INTEGER);
CREATE TABLE unit_groups(run INTEGER, kind TEXT, idx INTEGER, grp INTEGER, busy_ns INTEGER, events INTEGER,
                         PRIMARY KEY(run, kind, idx, grp), FOREIGN KEY(run, grp) REFERENCES groups(run, grp))
                         WITHOUT ROWID;
CREATE TABLE latency(run INTEGER, kind TEXT, idx INTEGER, grp INTEGER, class TEXT, ns INTEGER,
                     FOREIGN KEY(run, grp) REFERENCES groups(run, grp));
CREATE VIEW span_view AS
  SELECT s.run, s.lane, l.name AS lane_name, s.seq, s.ts_ns / 1000.0 AS ts_us, s.dur_ns / 1000.0 AS dur_us,
         s.end_ns / 1000.0 AS end_us, s.name, s.grp, g.name AS grp_name, s.chain, s.stage, s.arg, s.depth
  FROM spans s JOIN lanes l USING(run, lane) JOIN groups g USING(run, grp);
CREATE VIEW chain_view AS
  SELECT c.run, c.chain, c.grp, g.name AS grp_name, c.nstages, c.chunks, c.publish_ts_ns / 1000.0 AS publish_ts_us,
         c.publish_dur_ns / 1000.0 AS publish_dur_us, c.wall_ns / 1000.0 AS wall_us,
         c.first_claim_ns / 1000.0 AS first_claim_us
  FROM chains c LEFT JOIN groups g USING(run, grp);
CREATE VIEW unit_view AS
  SELECT run, kind, idx, arg, start_ns / 1000.0 AS start_us, end_ns / 1000.0 AS end_us, dur_ns / 1000.0 AS dur_us
  FROM units;
CREATE VIEW latency_view AS
  SELECT l.run, l.kind, l.idx, l.grp, g.name AS grp_name, l.class, l.ns / 1000.0 AS us
  FROM latency l JOIN groups g USING(run, grp);
)SQL";

constexpr const char* kIndexes = R"SQL(
CREATE INDEX spans_by_chain ON spans(run, chain);
CREATE INDEX chains_by_chain ON chains(run, chain);
CREATE INDEX chains_by_group ON chains(run, grp, wall_ns);
CREATE INDEX markers_by_kind ON markers(run, kind, idx);
CREATE INDEX units_by_kind ON units(run, kind, idx);
CREATE INDEX latency_by_unit ON latency(run, kind, idx);
)SQL";

std::string sqlite_error(sqlite3* db, const char* doing) {
  return std::string(doing) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

using sqlite_file::BTreeBuilder;
using sqlite_file::Record;

/// A rowid table and the next rowid to give (rows are numbered from 1 across runs).
struct RowidTable {
  BTreeBuilder tree;
  int64_t rows = 0;
  /// Encodes the record as the next row; its rowid, or 0 when the page could not be written.
  int64_t add(Record& record) {
    return tree.add_row(++rows, record.encode()) ? rows : 0;
  }
};

/// "token=end,layer=start in token,step=start (ambiguous)": the rules the run's units were
/// cut by, as one line (unit_rules has them as columns).
std::string rules_text(const std::vector<std::pair<std::string, UnitRule>>& rules) {
  std::string text;
  for (const auto& [kind, rule] : rules) {
    if (!text.empty()) text += ",";
    text += kind + "=" + unit_at_name(rule.at);
    if (!rule.nested_in.empty()) text += " in " + rule.nested_in;
    if (rule.ambiguous) text += " (ambiguous)";
  }
  return text;
}

/// A chains_by_group entry: the chain's group and wall (either may be NULL) and its rowid.
struct GroupWallKey {
  bool has_grp = false, has_wall = false;
  int64_t grp = 0, wall = 0, rowid = 0;
};

/// What one chain's row needs, gathered in one pass over the spans (as gaps reads them:
/// its last publish in lane order, the caller's stage_wait that ends last).
struct ChainFacts {
  int64_t pub_ts = 0, pub_dur = 0;
  int64_t wait_ts = 0, wait_dur = 0;
  int64_t first_worker_ns = 0;
  uint32_t chunks = 0;
  bool published = false, waited = false, claimed = false;
};

}  // namespace

/// Every tree of the database: one a table, one an index, each at the root SQLite gave it.
struct SqliteExport::Trees {
  explicit Trees(const std::map<std::string, uint32_t>& roots) : roots_(roots) {}
  sqlite_file::PageFile file;
  const std::map<std::string, uint32_t>& roots_;
  BTreeBuilder runs{tree("runs", BTreeBuilder::Kind::table)};
  RowidTable chains{tree("chains")}, markers{tree("markers")}, unit_rules{tree("unit_rules")}, units{tree("units")},
      latency{tree("latency")};
  // WITHOUT ROWID: keyed by their primary keys.
  BTreeBuilder lanes{tree("lanes", BTreeBuilder::Kind::index)}, groups{tree("groups", BTreeBuilder::Kind::index)},
      spans{tree("spans", BTreeBuilder::Kind::index)}, unit_groups{tree("unit_groups", BTreeBuilder::Kind::index)};
  BTreeBuilder spans_by_chain{tree("spans_by_chain", BTreeBuilder::Kind::index)},
      chains_by_chain{tree("chains_by_chain", BTreeBuilder::Kind::index)},
      chains_by_group{tree("chains_by_group", BTreeBuilder::Kind::index)},
      markers_by_kind{tree("markers_by_kind", BTreeBuilder::Kind::index)},
      units_by_kind{tree("units_by_kind", BTreeBuilder::Kind::index)},
      latency_by_unit{tree("latency_by_unit", BTreeBuilder::Kind::index)};

  std::vector<BTreeBuilder*> all() {
    return {&runs, &lanes, &groups, &spans, &unit_groups, &chains.tree, &markers.tree, &unit_rules.tree,
            &units.tree, &latency.tree, &spans_by_chain, &chains_by_chain, &chains_by_group, &markers_by_kind, &units_by_kind,
            &latency_by_unit};
  }
  /// What went wrong in the tree that failed.
  std::string error() {
    for (BTreeBuilder* t : all())
      if (!t->error().empty()) return t->error();
    return "cannot write the database";
  }

 private:
  BTreeBuilder tree(const char* name, BTreeBuilder::Kind kind = BTreeBuilder::Kind::table) {
    return BTreeBuilder(file, kind, roots_.at(name), name);
  }
};

/// The rows of one run.
struct SqliteExport::Writer {
  Trees& t;
  const Trace& trace;
  const SpanIndex& index;  ///< the run's one index: stats by lane and the units' latency use it
  int64_t run;
  unsigned threads;
  Record r;

  /// An index entry of a rowid table's row: its key columns (put in r by the caller) and
  /// its rowid (0: the row itself failed).
  bool index_entry(BTreeBuilder& index_tree, int64_t rowid) {
    if (!rowid) return false;
    return index_tree.add_key(r.i(rowid).encode());
  }

  bool runs_row(const ExportRun& info, const std::string& rules) {
    // run is INTEGER PRIMARY KEY: the rowid itself, NULL in the record.
    r.null().t(info.file).i(static_cast<int64_t>(info.bytes));
    r.t(attribution_name(trace.jobque ? trace.attribution : Attribution::none));
    r.i(trace.read.status == ReadStatus::truncated).t(info.jqtrace_version).t(rules);
    info.content_hash ? r.t(*info.content_hash) : r.null();
    return t.runs.add_row(run, r.encode());
  }

  /// Each lane's busy time as `stats --by lane` gives it, and when it stopped recording.
  bool lanes() {
    StatsOptions options;
    options.by = GroupBy::lane;
    options.distributions = false;
    options.threads = threads;
    RangeStats stats = compute_stats(trace, index, whole_trace(trace), options);
    std::vector<int64_t> busy(trace.lanes.size(), 0);
    for (const LaneStats& l : stats.lanes_detail) busy[l.lane] = l.busy_ns;
    std::vector<int64_t> stopped(trace.lanes.size(), -1);
    for (const StoppedLane& s : lanes_stopped_early(trace)) stopped[s.lane] = s.stop_ns;
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
      std::string label = trace.lane_label(l);
      std::size_t colon = label.find(':');
      std::string pid = label.substr(0, colon), tid = label.substr(colon + 1);
      r.i(run).i(static_cast<int64_t>(l)).t(pid).t(tid).t(trace.thread_name(l)).i(busy[l]);
      stopped[l] >= 0 ? r.i(stopped[l]) : r.null();
      if (!t.lanes.add_key(r.encode())) return false;
    }
    return true;
  }

  /// jobque: the categories (grp = its index); generic: the cats spans have (grp = cat id + 1, 0 none).
  bool groups() {
    // Each group's busy time and events over the trace, as stats prints them.
    StatsOptions options;
    options.by = trace.jobque ? GroupBy::category : GroupBy::cat;
    options.distributions = false;
    options.threads = threads;
    RangeStats stats = compute_stats(trace, index, whole_trace(trace), options);
    std::unordered_map<int64_t, const GroupStats*> of_key;
    for (const GroupStats& g : stats.groups) of_key.emplace(g.key, &g);
    auto totals = [&](int64_t key) -> Record& {
      auto found = of_key.find(key);
      if (found == of_key.end()) return r.i(0).i(0);
      return r.i(found->second->busy_ns).i(static_cast<int64_t>(found->second->events));
    };
    // The latency parts outside any group's work come first (ids below every group's).
    for (auto [grp, name] : {std::pair{kNotRecordedGroupKey, kNotRecordedGroup}, std::pair{kOutsideGroupKey, kOutsideGroup}}) {
      r.i(run).i(grp).t(name).null().i(0).null().null().null();
      if (!t.groups.add_key(r.encode())) return false;
    }
    if (trace.jobque) {
      for (std::size_t g = 0; g < trace.categories.size(); ++g) {
        const Category& c = trace.categories[g];
        r.i(run).i(static_cast<int64_t>(g)).t(c.name).t(c.color).i(c.guessed);
        const ProfileCategory* tagged = nullptr;
        for (const ProfileCategory& p : trace.profile.categories)
          if (p.name == c.name) tagged = &p;
        tagged ? r.i(tagged->id) : r.null();
        totals(static_cast<int64_t>(g));
        if (!t.groups.add_key(r.encode())) return false;
      }
      return true;
    }
    std::vector<bool> used(trace.names.size() + 1, false);
    for (const Lane& lane : trace.lanes)
      for (std::size_t i = 0; i < lane.spans.size(); ++i) used[static_cast<std::size_t>(lane.spans.cat[i])] = true;
    for (std::size_t key = 0; key < used.size(); ++key) {
      if (!used[key]) continue;
      r.i(run).i(static_cast<int64_t>(key));
      key == 0 ? r.t("(no cat)") : r.t(trace.names.view(static_cast<uint32_t>(key - 1)));
      r.null().i(0).null();
      totals(static_cast<int64_t>(key));
      if (!t.groups.add_key(r.encode())) return false;
    }
    return true;
  }

  /// Every span, lane after lane in time order (the primary key's order), with its group
  /// and nesting depth. The key (run, lane, ts_us, seq) rises as long as each lane's spans
  /// are in time order: checked here on the nanoseconds (ns / 1000 keeps their order; seq
  /// breaks ties), not record against record. spans_by_chain relies on this check.
  bool spans() {
    std::vector<int64_t> open_ends;  // the ends of the spans enclosing the current one
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
      const SpanTable& s = trace.lanes[l].spans;
      open_ends.clear();
      for (std::size_t i = 0; i < s.size(); ++i) {
        int64_t ts = s.ts[i], end = s.end(i);
        if (i > 0 && ts < s.ts[i - 1]) {
          *failure = "internal error: the spans of lane " + std::to_string(l) + " are not in time order";
          return false;
        }
        while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
        r.i(run).i(static_cast<int64_t>(l)).i(ts).i(static_cast<int64_t>(i)).i(s.dur[i]).i(end);
        r.t(trace.names.view(static_cast<uint32_t>(s.name[i])));
        r.i(trace.jobque ? s.category[i] : s.cat[i]);
        if (trace.jobque) r.i(s.chain[i]).i(s.stage[i]).i(s.arg[i]);
        else r.null().null().null();
        r.i(static_cast<int64_t>(open_ends.size()));
        if (!t.spans.add_key(r.encode(), BTreeBuilder::Order::checked_by_caller)) return false;
        if (s.dur[i] > 0) open_ends.push_back(end);
      }
    }
    return true;
  }

  /// spans_by_chain: (run, chain, then the rest of the primary key: lane, ts_us, seq), by
  /// chain. The spans are counted per chain and placed by a counting sort: 4 bytes a span.
  bool spans_by_chain() {
    std::vector<std::size_t> first_of_lane{0};
    std::vector<const SpanTable*> tables;  // (the lanes are a deque: indexing it is not free)
    for (const Lane& lane : trace.lanes) {
      first_of_lane.push_back(first_of_lane.back() + lane.spans.size());
      tables.push_back(&lane.spans);
    }
    // The key (run, chain, lane, ts_us, seq) rises when (chain, lane, seq) does: within a
    // lane, ts_us follows seq (spans() checks each lane's time order, or the export fails).
    int64_t last_chain = 0;
    std::size_t last_lane = 0, last_i = 0;
    bool first = true;
    auto entry = [&](std::size_t lane, std::size_t i) {
      const SpanTable& s = *tables[lane];
      int64_t chain = trace.jobque ? s.chain[i] : 0;
      if (!first && std::tie(chain, lane, i) <= std::tie(last_chain, last_lane, last_i)) {
        *failure = "internal error: the keys of spans_by_chain are out of order";
        return false;
      }
      first = false;
      std::tie(last_chain, last_lane, last_i) = std::tie(chain, lane, i);
      r.i(run);
      trace.jobque ? r.i(chain) : r.null();
      return t.spans_by_chain.add_key(r.i(static_cast<int64_t>(lane)).i(s.ts[i]).i(static_cast<int64_t>(i)).encode(),
                                      BTreeBuilder::Order::checked_by_caller);
    };
    if (!trace.jobque) {  // every chain NULL: the spans' own order
      for (std::size_t l = 0; l < trace.lanes.size(); ++l)
        for (std::size_t i = 0; i < trace.lanes[l].spans.size(); ++i)
          if (!entry(l, i)) return false;
      return true;
    }
    if (first_of_lane.back() > UINT32_MAX) {
      *failure = "too many spans in one run to index by chain";
      return false;
    }
    DenseFirstMap<uint32_t> slot;  // chain -> spans of it, then -> its next place in order
    for (const Lane& lane : trace.lanes)
      for (std::size_t i = 0; i < lane.spans.size(); ++i) ++slot[lane.spans.chain[i]];
    std::vector<int64_t> chains;
    chains.reserve(slot.size());
    slot.for_each([&](int64_t chain, uint32_t) { chains.push_back(chain); });
    std::sort(chains.begin(), chains.end());
    uint32_t place = 0;
    for (int64_t chain : chains) {
      uint32_t* n = slot.find(chain);
      uint32_t count = *n;
      *n = place;
      place += count;
    }
    std::vector<uint32_t> by_chain(first_of_lane.back());
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
      const SpanTable& s = trace.lanes[l].spans;
      for (std::size_t i = 0; i < s.size(); ++i) by_chain[(*slot.find(s.chain[i]))++] = static_cast<uint32_t>(first_of_lane[l] + i);
    }
    for (uint32_t k : by_chain) {
      std::size_t lane = static_cast<std::size_t>(std::upper_bound(first_of_lane.begin(), first_of_lane.end(), k) - first_of_lane.begin()) - 1;
      if (!entry(lane, k - first_of_lane[lane])) return false;
    }
    return true;
  }

  /// One row a chain with a publish or a chunk, by rising chain id: its wall and first
  /// claim as gaps measures them (double µs, in the old scripts' order of operations).
  bool chains() {
    if (!trace.jobque) return true;
    JobqueNames names = JobqueNames::found(trace.names);
    std::size_t caller = caller_lane(trace);
    DenseFirstMap<ChainFacts> facts;  // pages by chain id (the tracer's are dense)
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
      const SpanTable& s = trace.lanes[l].spans;
      for (std::size_t i = 0; i < s.size(); ++i) {
        int64_t name = s.name[i];
        if (name == names.publish) {
          ChainFacts& c = facts[s.chain[i]];
          c.published = true;
          c.pub_ts = s.ts[i];
          c.pub_dur = s.dur[i];
        } else if (name == names.chunk) {
          ChainFacts& c = facts[s.chain[i]];
          ++c.chunks;
          if (l != caller) {
            c.first_worker_ns = c.claimed ? std::min(c.first_worker_ns, s.ts[i]) : s.ts[i];
            c.claimed = true;
          }
        } else if (name == names.stage_wait && l == caller) {
          ChainFacts& c = facts[s.chain[i]];
          if (!c.waited || s.end(i) > c.wait_ts + c.wait_dur) {
            c.waited = true;
            c.wait_ts = s.ts[i];
            c.wait_dur = s.dur[i];
          }
        }
      }
    }
    std::vector<int64_t> ids;  // in pages they come by rising id, but not once spread out
    ids.reserve(facts.size());
    facts.for_each([&](int64_t chain, const ChainFacts&) { ids.push_back(chain); });
    std::sort(ids.begin(), ids.end());
    std::vector<GroupWallKey> by_group;  // chains_by_group's entries, sorted once all are written
    for (int64_t chain : ids) {
      const ChainFacts& c = *facts.find(chain);
      if (!c.published && c.chunks == 0) continue;  // only waited on: nothing of it ran here
      const ChainInfo* info = trace.chains.find(chain);
      GroupWallKey key;
      r.i(run).i(chain);
      info ? r.i(key.grp = info->category) : r.null();
      key.has_grp = info != nullptr;
      info && info->nstages ? r.i(info->nstages) : r.null();
      r.i(c.chunks);
      if (c.published) {
        int64_t pub_end = c.pub_ts + c.pub_dur;
        key.wall = (c.waited ? c.wait_ts + c.wait_dur : pub_end) - c.pub_ts;
        key.has_wall = true;
        r.i(c.pub_ts).i(c.pub_dur).i(key.wall);
        c.claimed ? r.i(c.first_worker_ns - pub_end) : r.null();
      } else {
        r.null().null().null().null();
      }
      key.rowid = t.chains.add(r);
      r.i(run).i(chain);
      if (!index_entry(t.chains_by_chain, key.rowid)) return false;
      by_group.push_back(key);
    }
    // (run, grp, wall_ns, rowid) in SQLite's order: NULLs first.
    std::sort(by_group.begin(), by_group.end(), [](const GroupWallKey& x, const GroupWallKey& y) {
      return std::tuple(x.has_grp, x.grp, x.has_wall, x.wall, x.rowid) < std::tuple(y.has_grp, y.grp, y.has_wall, y.wall, y.rowid);
    });
    for (const GroupWallKey& k : by_group) {
      r.i(run);
      k.has_grp ? r.i(k.grp) : r.null();
      k.has_wall ? r.i(k.wall) : r.null();
      if (!index_entry(t.chains_by_group, k.rowid)) return false;
    }
    return true;
  }

  /// The trace's marker kinds in byte order (so that the indexes on (run, kind, idx) come
  /// in order), each once.
  std::vector<std::string> kinds_in_byte_order() const {
    std::vector<std::string> kinds = marker_kinds(trace);
    std::sort(kinds.begin(), kinds.end());
    kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
    return kinds;
  }

  /// Every marker of every kind.
  bool markers() {
    const std::vector<std::string> kinds = kinds_in_byte_order();
    bool ok = true;
    for_each_kind_markers(trace, kinds, [&](std::size_t k, const Markers& m) {
      for (std::size_t i = 0; i < m.size() && ok; ++i) {
        arg_field(r.i(run).t(kinds[k]).i(static_cast<int64_t>(i)), m.arg[i]);
        int64_t rowid = t.markers.add(r.i(m.ts[i]).i(m.lane[i]));
        r.i(run).t(kinds[k]).i(static_cast<int64_t>(i));
        ok = index_entry(t.markers_by_kind, rowid);
      }
    });
    return ok;
  }

  /// Calls each(kind, markers, plan) for every marker kind in byte order, its units planned
  /// by unit_at (the units and latency tasks plan alike: planning is deterministic and cheap).
  template <typename Each>
  void for_each_kind_plan(const UnitRequest& unit_at, Each&& each) {
    const std::vector<std::string> kinds = kinds_in_byte_order();
    UnitPlanner planner(trace, unit_at);
    for_each_kind_markers(trace, kinds, [&](std::size_t k, const Markers& m) {
      if (!m.ts.empty()) each(kinds[k], m, planner.plan(kinds[k], m));
    });
  }

  /// Every kind's rule and units; *rules: the rules as the runs row lists them.
  bool units(const UnitRequest& unit_at, std::string* rules) {
    std::vector<std::pair<std::string, UnitRule>> decided;
    bool ok = true;
    for_each_kind_plan(unit_at, [&](const std::string& kind, const Markers& m, const KindUnits& plan) {
      if (!ok) return;
      decided.emplace_back(kind, plan.rule);
      r.i(run).t(kind).t(unit_at_name(plan.rule.at)).i(plan.rule.automatic).i(plan.rule.ambiguous);
      plan.rule.nested_in.empty() ? r.null() : r.t(plan.rule.nested_in);
      std::string label = unit_rule_label(plan.rule);
      r.t(label);
      ok = t.unit_rules.add(r);
      for (const Unit& u : cut_units(m, plan)) {
        if (!ok) return;
        arg_field(r.i(run).t(kind).i(u.index), u.arg);
        int64_t rowid = t.units.add(r.i(u.range.lo).i(u.range.hi).i(u.range.length()));
        r.i(run).t(kind).i(u.index);
        ok = index_entry(t.units_by_kind, rowid);
      }
    });
    // The runs row lists the rules in the trace's order of kinds, as the other outputs do.
    const std::vector<std::string> trace_order = marker_kinds(trace);
    std::unordered_map<std::string_view, std::size_t> place;
    for (std::size_t k = 0; k < trace_order.size(); ++k) place.emplace(trace_order[k], k);
    std::sort(decided.begin(), decided.end(),
              [&](const auto& x, const auto& y) { return place[x.first] < place[y.first]; });
    *rules = rules_text(decided);
    return ok;
  }

  /// Each unit's busy time and events by group, as `markers --kind` measures them (the same
  /// code): a row for each group with either, by (kind, idx, grp).
  bool unit_groups(const UnitRequest& unit_at) {
    bool ok = true;
    std::vector<const GroupStats*> with_time;
    for_each_kind_plan(unit_at, [&](const std::string& kind, const Markers& m, const KindUnits& plan) {
      std::vector<Unit> units = cut_units(m, plan);
      for_each_unit_row(trace, index, units, 0, units.size(), threads, [&](const UnitRow& row) {
        with_time.clear();
        for (const GroupStats& g : row.stats.groups)
          if (g.busy_ns > 0 || g.events > 0) with_time.push_back(&g);
        std::sort(with_time.begin(), with_time.end(), [](const GroupStats* x, const GroupStats* y) { return x->key < y->key; });
        for (const GroupStats* g : with_time) {
          if (!ok) return;
          r.i(run).t(kind).i(row.unit.index).i(g->key).i(g->busy_ns).i(static_cast<int64_t>(g->events));
          ok = t.unit_groups.add_key(r.encode());
        }
      });
    });
    return ok;
  }

  /// Each unit's latency parts (the units of a kind whose marker lane runs jobque work).
  bool latency(const UnitRequest& unit_at) {
    LatencyByLane analyses(trace, index);
    bool ok = true;
    for_each_kind_plan(unit_at, [&](const std::string& kind, const Markers& m, const KindUnits& plan) {
      const LatencyAnalysis* analysis = analyses.of(latency_lane(m));
      if (!analysis) return;
      for (const Unit& u : cut_units(m, plan))
        if (ok) ok = latency_rows(*analysis, kind, u);
    });
    return ok;
  }

  bool latency_rows(const LatencyAnalysis& a, const std::string& kind, const Unit& u) {
    LatencyParts p = a.measure(u.range, 0);
    for (std::size_t slot = 0; slot < p.ns.size(); ++slot) {
      if (p.ns[slot] == 0) continue;
      const LatencyGroup& g = a.groups()[slot / kLatencyClasses];
      r.i(run).t(kind).i(u.index).i(g.key).t(latency_class_name(static_cast<LatencyClass>(slot % kLatencyClasses)));
      int64_t rowid = t.latency.add(r.i(p.ns[slot]));
      r.i(run).t(kind).i(u.index);
      if (!index_entry(t.latency_by_unit, rowid)) return false;
    }
    return true;
  }

  std::string* failure;  ///< set by the writer's own refusals (else a tree says what failed)
};

std::unique_ptr<SqliteExport> SqliteExport::create(const std::string& path, std::string* error) {
  // SQLite makes the file: its header, the schema, every tree's empty root. Then it is
  // closed, and the rows are written into pages appended to it (sqlite_pages.h).
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    *error = sqlite_error(db, "cannot create the database");
    sqlite3_close(db);
    return nullptr;
  }
  // The file is a temporary one until finish() (the caller renames it): no journal, no
  // syncs. 64 KiB pages: the fewest pages (and interior levels) for 5M rows.
  const char* setup = "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;";
  std::map<std::string, uint32_t> roots;
  sqlite3_stmt* list = nullptr;
  bool made = sqlite3_exec(db, setup, nullptr, nullptr, nullptr) == SQLITE_OK &&
              sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) == SQLITE_OK &&
              sqlite3_exec(db, kIndexes, nullptr, nullptr, nullptr) == SQLITE_OK &&
              sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr) == SQLITE_OK &&
              sqlite3_prepare_v2(db, "SELECT name, rootpage FROM sqlite_schema", -1, &list, nullptr) == SQLITE_OK;
  while (made && sqlite3_step(list) == SQLITE_ROW)
    roots[reinterpret_cast<const char*>(sqlite3_column_text(list, 0))] = static_cast<uint32_t>(sqlite3_column_int64(list, 1));
  if (!made) *error = sqlite_error(db, "cannot create the tables");
  sqlite3_finalize(list);
  if (sqlite3_close(db) != SQLITE_OK && made) {
    *error = "cannot close the database SQLite created";
    made = false;
  }
  if (!made) return nullptr;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = std::string("cannot open the database: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<SqliteExport> out(new SqliteExport(fd, std::move(roots)));
  return out->trees_->file.open(fd, error) ? std::move(out) : nullptr;
}

SqliteExport::SqliteExport(int fd, std::map<std::string, uint32_t> roots)
    : fd_(fd), roots_(std::move(roots)), trees_(std::make_unique<Trees>(roots_)) {}

SqliteExport::~SqliteExport() { ::close(fd_); }

bool SqliteExport::add_run(const Trace& trace, const ExportRun& run, unsigned threads, std::string* error) {
  SpanIndex index(trace, threads);
  ++runs_;
  // Each task writes its own trees (a tree is built on one thread); the threads take them
  // longest first (the 570 MB 8-lane bench trace at -j 1: spans by chain 0.6 s, the units'
  // latency parts 0.5 (1.6M rows), spans 0.45, chains 0.17, the rest less than 0.1).
  enum Task : std::size_t { spans_by_chain, latency, spans, unit_groups, chains, units, markers, lanes_and_groups, tasks };
  std::string refused[tasks];
  std::vector<Writer> writers;
  for (std::size_t k = 0; k < tasks; ++k) writers.push_back({*trees_, trace, index, runs_, threads, {}, &refused[k]});
  std::string rules;
  bool done[tasks] = {};
  {
    PhaseClock clock("write rows", PhaseKind::scales);
    run_parallel(tasks, threads, [&](std::size_t task) {
      Writer& w = writers[task];
      switch (static_cast<Task>(task)) {
        case spans: done[task] = w.spans(); break;
        case spans_by_chain: done[task] = w.spans_by_chain(); break;
        case latency: done[task] = w.latency(run.unit_at); break;
        case units: done[task] = w.units(run.unit_at, &rules); break;
        case unit_groups: done[task] = w.unit_groups(run.unit_at); break;
        case chains: done[task] = w.chains(); break;
        case markers: done[task] = w.markers(); break;
        case lanes_and_groups: done[task] = w.lanes() && w.groups(); break;
        case tasks: break;
      }
    });
  }
  if (std::all_of(std::begin(done), std::end(done), [](bool d) { return d; }) && writers[0].runs_row(run, rules))
    return true;
  for (const std::string& why : refused)
    if (!why.empty()) {
      *error = why;
      return false;
    }
  *error = trees_->error();
  return false;
}

bool SqliteExport::finish(std::string* error) {
  PhaseClock clock("finish trees", PhaseKind::serial);
  for (BTreeBuilder* tree : trees_->all()) {
    if (!tree->finish()) {
      *error = tree->error();
      return false;
    }
  }
  if (!trees_->file.finish()) {
    *error = trees_->file.error();
    return false;
  }
  return true;
}

namespace {

/// A SQLite connection closed when it goes (db nullptr: it failed to open, and why).
struct Connection {
  sqlite3* db = nullptr;
  std::string open_failure;
  Connection(const std::string& path, int flags) {
    if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
      open_failure = db ? sqlite3_errmsg(db) : "out of memory";
      sqlite3_close(db);
      db = nullptr;
    }
  }
  ~Connection() { sqlite3_close(db); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  /// What went wrong while doing `doing` (opening it, or the last call).
  std::string error(const char* doing) const {
    return db ? sqlite_error(db, doing) : std::string(doing) + ": " + open_failure;
  }
  bool exec(const std::string& sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK; }
  /// Every row of a query, its columns as text ("" for NULL); false on an error.
  bool rows(const std::string& sql, std::vector<std::vector<std::string>>* out) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return false;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::string>& row = out->emplace_back();
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        auto text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
        row.emplace_back(text ? text : "");
      }
    }
    sqlite3_finalize(st);
    return step == SQLITE_DONE;
  }
};

/// The schema's objects (type, name, sql) as a database holds them, in its order.
bool schema_of(Connection& c, std::vector<std::vector<std::string>>* objects) {
  return c.rows("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY rowid", objects);
}

}  // namespace

bool SqliteExport::read_runs(const std::string& path, std::vector<std::pair<std::string, int64_t>>* hashes,
                             std::string* error) {
  Connection db(path, SQLITE_OPEN_READONLY);
  Connection ours(":memory:", SQLITE_OPEN_READWRITE);
  std::vector<std::vector<std::string>> theirs_schema, our_schema, runs;
  if (!db.db || !schema_of(db, &theirs_schema)) {
    *error = db.error("cannot read the database");
    return false;
  }
  if (!ours.db || !ours.exec(kSchema) || !ours.exec(kIndexes) || !schema_of(ours, &our_schema)) {
    *error = ours.error("cannot make the schema to compare");
    return false;
  }
  if (theirs_schema != our_schema) {
    *error = "its tables are not the ones this jqtrace writes (an older export, or not an export): export the "
             "fleet again with -o";
    return false;
  }
  if (!db.rows("SELECT coalesce(content_hash, ''), run FROM runs ORDER BY run", &runs)) {
    *error = db.error("cannot read its runs");
    return false;
  }
  for (const auto& row : runs) hashes->emplace_back(row[0], std::stoll(row[1]));
  return true;
}

bool SqliteExport::append(const std::string& path, const std::string& from, std::string* error,
                          const AppendProbe& probe) {
  // SQLite's own INSERTs, in one transaction in its rollback journal: a failure or a kill
  // at any point leaves the database as it was (the next open rolls a hot journal back).
  Connection db(path, SQLITE_OPEN_READWRITE);
  if (!db.db) {
    *error = db.error("cannot open the database");
    return false;
  }
  auto fail = [&](const std::string& why) {  // the transaction rolled back: the database as it was
    *error = why;
    db.exec("ROLLBACK");
    return false;
  };
  std::string attach = "ATTACH DATABASE '";
  for (char ch : from) attach += ch == '\'' ? std::string("''") : std::string(1, ch);
  attach += "' AS added";
  std::vector<std::vector<std::string>> tables, columns, offset, again;
  // Another append holding the database is waited for (a minute), not failed at once.
  sqlite3_busy_timeout(db.db, 60000);
  if (!db.exec("PRAGMA journal_mode=DELETE") || !db.exec(attach) || !db.exec("BEGIN IMMEDIATE") ||
      !db.rows("SELECT coalesce(max(run), 0) FROM main.runs", &offset) ||
      !db.rows("SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
               &tables))
    return fail(db.error("cannot start the append"));
  // The duplicates were skipped before the runs were read; an append that ran meanwhile may
  // have added one of these files: checked again under the write lock.
  if (!db.rows("SELECT a.file, m.run FROM added.runs a JOIN main.runs m ON a.content_hash = m.content_hash", &again))
    return fail(db.error("cannot compare the runs"));
  if (!again.empty())
    return fail(again[0][0] + " is run " + again[0][1] + " already (another append added it meanwhile)");
  if (probe) probe(db.db, "");
  for (const auto& table : tables) {
    // Every column as it is, but run: the added runs are numbered after the last one.
    columns.clear();
    if (!db.rows("SELECT name FROM pragma_table_info('" + table[0] + "', 'added')", &columns) || columns.empty())
      return fail(db.error(("cannot read the columns of " + table[0]).c_str()));
    std::string list, values;
    for (const auto& column : columns) {
      if (!list.empty()) list += ", ";
      if (!values.empty()) values += ", ";
      list += column[0];
      values += column[0] == "run" ? "run + " + offset[0][0] : column[0];
    }
    if (!db.exec("INSERT INTO main." + table[0] + "(" + list + ") SELECT " + values + " FROM added." + table[0]))
      return fail(db.error(("cannot add the rows of " + table[0]).c_str()));
    if (probe) probe(db.db, table[0]);
  }
  if (!db.exec("COMMIT")) return fail(db.error("cannot commit the append"));
  db.exec("DETACH DATABASE added");  // committed: a failure to detach loses nothing
  return true;
}

}  // namespace jqtrace
