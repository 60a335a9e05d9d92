#include "sqlite_export.h"

#include <algorithm>
#include <vector>

#include <sqlite3.h>

#include "flat_map.h"
#include "latency.h"
#include "markers.h"

namespace jqtrace {
namespace {

// Tables: one run a file; every other table's rows carry their run. jqtrace-export(1)
// says what every column holds. spans is stored in (run, lane, ts_us, seq) order, the order
// the model holds them in: its rows are appended to its one B-tree, which is also the index
// of a lane's time (a table and a separate index of 5M spans took twice as long).
constexpr const char* kSchema = R"SQL(
CREATE TABLE runs(run INTEGER PRIMARY KEY, file TEXT, bytes INTEGER, attribution TEXT, truncated INTEGER,
                  jqtrace_version TEXT, unit_rules TEXT);
CREATE TABLE lanes(run INTEGER, lane INTEGER, pid TEXT, tid TEXT, name TEXT, busy_us REAL, stopped_us REAL);
CREATE TABLE groups(run INTEGER, grp INTEGER, name TEXT, color TEXT, guessed INTEGER, tag INTEGER);
CREATE TABLE spans(run INTEGER, lane INTEGER, ts_us REAL, seq INTEGER, dur_us REAL, name TEXT, grp INTEGER,
                   chain INTEGER, stage INTEGER, arg INTEGER, depth INTEGER,
                   PRIMARY KEY(run, lane, ts_us, seq)) WITHOUT ROWID;
CREATE TABLE chains(run INTEGER, chain INTEGER, grp INTEGER, nstages INTEGER, chunks INTEGER, publish_ts_us REAL,
                    publish_dur_us REAL, wall_us REAL, first_claim_us REAL);
CREATE TABLE markers(run INTEGER, kind TEXT, idx INTEGER, arg INTEGER, ts_us REAL, lane INTEGER);
CREATE TABLE unit_rules(run INTEGER, kind TEXT, unit_at TEXT, automatic INTEGER, ambiguous INTEGER, nested_in TEXT,
                        rule TEXT);
CREATE TABLE units(run INTEGER, kind TEXT, idx INTEGER, arg INTEGER, start_us REAL, end_us REAL, dur_us REAL);
CREATE TABLE latency(run INTEGER, kind TEXT, idx INTEGER, grp TEXT, class TEXT, us REAL);
)SQL";

constexpr const char* kIndexes = R"SQL(
CREATE INDEX spans_by_chain ON spans(run, chain);
CREATE INDEX chains_by_chain ON chains(run, chain);
CREATE INDEX markers_by_kind ON markers(run, kind, idx);
CREATE INDEX units_by_kind ON units(run, kind, idx);
CREATE INDEX latency_by_unit ON latency(run, kind, idx);
)SQL";

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string sqlite_error(sqlite3* db, const char* doing) {
  return std::string(doing) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

/// One prepared INSERT, bound column by column and run once a row.
class Insert {
 public:
  Insert(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Insert() { sqlite3_finalize(stmt_); }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;
  bool ok() const { return stmt_ != nullptr; }

  Insert& i(int64_t v) { return check(sqlite3_bind_int64(stmt_, ++col_, v)); }
  Insert& d(double v) { return check(sqlite3_bind_double(stmt_, ++col_, v)); }
  /// Text that outlives the row (the trace's names): bound without a copy.
  Insert& t(std::string_view v) {
    return check(sqlite3_bind_text(stmt_, ++col_, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
  }
  Insert& null() { return check(sqlite3_bind_null(stmt_, ++col_)); }
  /// Runs the row; false once any step of it failed.
  bool row() {
    col_ = 0;
    if (failed_) return false;
    bool done = sqlite3_step(stmt_) == SQLITE_DONE;
    sqlite3_reset(stmt_);
    failed_ = !done;
    return done;
  }
  std::string error(const char* doing) const { return sqlite_error(db_, doing); }

 private:
  Insert& check(int rc) {
    failed_ = failed_ || rc != SQLITE_OK;
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int col_ = 0;
  bool failed_ = false;
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

/// What one chain's row needs, gathered in one pass over the spans (as gaps reads them:
/// its last publish in lane order, the caller's stage_wait that ends last).
struct ChainFacts {
  int64_t pub_ts = 0, pub_dur = 0;
  int64_t wait_ts = 0, wait_dur = 0;
  double first_worker_us = 0;
  uint32_t chunks = 0;
  bool published = false, waited = false, claimed = false;
};

}  // namespace

/// The rows of one run.
struct SqliteExport::Writer {
  sqlite3* db;
  const Trace& trace;
  const SpanIndex& index;  ///< the run's one index: stats by lane and the units' latency use it
  int64_t run;
  unsigned threads;
  std::string* error;

  bool fail(const Insert& insert, const char* doing) {
    *error = insert.error(doing);
    return false;
  }

  bool runs_row(const ExportRun& r, const std::string& rules) {
    Insert q(db, "INSERT INTO runs VALUES(?,?,?,?,?,?,?)");
    q.i(run).t(r.file).i(static_cast<int64_t>(r.bytes)).t(attribution_name(trace.jobque ? trace.attribution : Attribution::none));
    q.i(trace.read.status == ReadStatus::truncated).t(r.jqtrace_version).t(rules);
    return q.row() || fail(q, "runs");
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
    Insert q(db, "INSERT INTO lanes VALUES(?,?,?,?,?,?,?)");
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
      std::string label = trace.lane_label(l);
      std::size_t colon = label.find(':');
      std::string pid = label.substr(0, colon), tid = label.substr(colon + 1);
      q.i(run).i(static_cast<int64_t>(l)).t(pid).t(tid).t(trace.thread_name(l)).d(us(busy[l]));
      stopped[l] >= 0 ? q.d(us(stopped[l])) : q.null();
      if (!q.row()) return fail(q, "lanes");
    }
    return true;
  }

  /// jobque: the categories (grp = its index); generic: the cats spans have (grp = cat id + 1, 0 none).
  bool groups() {
    Insert q(db, "INSERT INTO groups VALUES(?,?,?,?,?,?)");
    if (trace.jobque) {
      for (std::size_t g = 0; g < trace.categories.size(); ++g) {
        const Category& c = trace.categories[g];
        q.i(run).i(static_cast<int64_t>(g)).t(c.name).t(c.color).i(c.guessed);
        const ProfileCategory* tagged = nullptr;
        for (const ProfileCategory& p : trace.profile.categories)
          if (p.name == c.name) tagged = &p;
        tagged ? q.i(tagged->id) : q.null();
        if (!q.row()) return fail(q, "groups");
      }
      return true;
    }
    std::vector<bool> used(trace.names.size() + 1, false);
    for (const Lane& lane : trace.lanes)
      for (std::size_t i = 0; i < lane.spans.size(); ++i) used[static_cast<std::size_t>(lane.spans.cat[i])] = true;
    for (std::size_t key = 0; key < used.size(); ++key) {
      if (!used[key]) continue;
      q.i(run).i(static_cast<int64_t>(key));
      key == 0 ? q.t("(no cat)") : q.t(trace.names.view(static_cast<uint32_t>(key - 1)));
      q.null().i(0).null();
      if (!q.row()) return fail(q, "groups");
    }
    return true;
  }

  /// Every span, lane after lane in time order, with its group and nesting depth.
  bool spans() {
    Insert q(db, "INSERT INTO spans VALUES(?,?,?,?,?,?,?,?,?,?,?)");
    std::vector<int64_t> open_ends;  // the ends of the spans enclosing the current one
    for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
      const SpanTable& s = trace.lanes[l].spans;
      open_ends.clear();
      for (std::size_t i = 0; i < s.size(); ++i) {
        int64_t ts = s.ts[i], end = s.end(i);
        while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
        q.i(run).i(static_cast<int64_t>(l)).d(us(ts)).i(static_cast<int64_t>(i)).d(us(s.dur[i]));
        q.t(trace.names.view(static_cast<uint32_t>(s.name[i])));
        q.i(trace.jobque ? s.category[i] : s.cat[i]);
        if (trace.jobque) q.i(s.chain[i]).i(s.stage[i]).i(s.arg[i]);
        else q.null().null().null();
        q.i(static_cast<int64_t>(open_ends.size()));
        if (!q.row()) return fail(q, "spans");
        if (s.dur[i] > 0) open_ends.push_back(end);
      }
    }
    return true;
  }

  /// One row a chain with a publish or a chunk: its wall and first claim as gaps measures
  /// them (double µs, in the old scripts' order of operations).
  bool chains() {
    if (!trace.jobque) return true;
    JobqueNames names = JobqueNames::found(trace.names);
    std::size_t caller = caller_lane(trace);
    DenseFirstMap<ChainFacts> facts;  // pages by chain id (the tracer's are dense), rows by rising id
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
            double t0 = us(s.ts[i]);
            c.first_worker_us = c.claimed ? std::min(c.first_worker_us, t0) : t0;
            c.claimed = true;
          }
        } else if (name == names.stage_wait && l == caller) {
          ChainFacts& c = facts[s.chain[i]];
          if (!c.waited || us(s.ts[i]) + us(s.dur[i]) > us(c.wait_ts) + us(c.wait_dur)) {
            c.waited = true;
            c.wait_ts = s.ts[i];
            c.wait_dur = s.dur[i];
          }
        }
      }
    }
    Insert q(db, "INSERT INTO chains VALUES(?,?,?,?,?,?,?,?,?)");
    bool ok = true;
    facts.for_each([&](int64_t chain, const ChainFacts& c) {
      if (!ok || (!c.published && c.chunks == 0)) return;  // only waited on: nothing of it ran here
      const ChainInfo* info = trace.chains.find(chain);
      q.i(run).i(chain);
      info ? q.i(info->category) : q.null();
      info && info->nstages ? q.i(info->nstages) : q.null();
      q.i(c.chunks);
      if (c.published) {
        double pub_t0 = us(c.pub_ts), pub_end = pub_t0 + us(c.pub_dur);
        q.d(pub_t0).d(us(c.pub_dur)).d((c.waited ? us(c.wait_ts) + us(c.wait_dur) : pub_end) - pub_t0);
        c.claimed ? q.d(c.first_worker_us - pub_end) : q.null();
      } else {
        q.null().null().null().null();
      }
      ok = q.row() || fail(q, "chains");
    });
    return ok;
  }

  /// Every marker, every kind's rule and units, and each unit's latency parts.
  bool markers_and_units(const UnitRequest& unit_at, std::string* rules) {
    std::vector<std::string> kinds = marker_kinds(trace);
    UnitPlanner planner(trace, unit_at);
    LatencyByLane analyses(trace, index);
    Insert marker(db, "INSERT INTO markers VALUES(?,?,?,?,?,?)");
    Insert rule_row(db, "INSERT INTO unit_rules VALUES(?,?,?,?,?,?,?)");
    Insert unit(db, "INSERT INTO units VALUES(?,?,?,?,?,?,?)");
    Insert part(db, "INSERT INTO latency VALUES(?,?,?,?,?,?)");
    std::vector<std::pair<std::string, UnitRule>> decided;
    bool ok = true;
    for_each_kind_markers(trace, kinds, [&](std::size_t k, const Markers& m) {
      const std::string& kind = kinds[k];
      if (!ok || m.ts.empty()) return;
      for (std::size_t i = 0; i < m.size() && ok; ++i) {
        marker.i(run).t(kind).i(static_cast<int64_t>(i)).i(m.arg[i]).d(us(m.ts[i])).i(m.lane[i]);
        ok = marker.row() || fail(marker, "markers");
      }
      KindUnits plan = planner.plan(kind, m);
      decided.emplace_back(kind, plan.rule);
      rule_row.i(run).t(kind).t(unit_at_name(plan.rule.at)).i(plan.rule.automatic).i(plan.rule.ambiguous);
      plan.rule.nested_in.empty() ? rule_row.null() : rule_row.t(plan.rule.nested_in);
      std::string label = unit_rule_label(plan.rule);
      rule_row.t(label);
      ok = ok && (rule_row.row() || fail(rule_row, "unit_rules"));
      const LatencyAnalysis* analysis = analyses.of(latency_lane(m));
      for (const Unit& u : cut_units(m, plan)) {
        if (!ok) return;
        unit.i(run).t(kind).i(u.index).i(u.arg).d(us(u.range.lo)).d(us(u.range.hi)).d(us(u.range.length()));
        ok = unit.row() || fail(unit, "units");
        if (ok && analysis) ok = latency_rows(*analysis, kind, u, part);
      }
    });
    *rules = rules_text(decided);
    return ok;
  }

  bool latency_rows(const LatencyAnalysis& a, const std::string& kind, const Unit& u, Insert& part) {
    LatencyParts p = a.measure(u.range, 0);
    for (std::size_t slot = 0; slot < p.ns.size(); ++slot) {
      if (p.ns[slot] == 0) continue;
      const LatencyGroup& g = a.groups()[slot / kLatencyClasses];
      part.i(run).t(kind).i(u.index).t(g.name).t(latency_class_name(static_cast<LatencyClass>(slot % kLatencyClasses)));
      part.d(us(p.ns[slot]));
      if (!part.row()) return fail(part, "latency");
    }
    return true;
  }
};

std::unique_ptr<SqliteExport> SqliteExport::create(const std::string& path, std::string* error) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    *error = sqlite_error(db, "cannot create the database");
    sqlite3_close(db);
    return nullptr;
  }
  std::unique_ptr<SqliteExport> out(new SqliteExport(db));
  // The file is a temporary one until finish() (the caller renames it): no journal, no
  // syncs; one transaction. 64 KiB pages and a 16 MB cache: the 5M spans of a 570 MB
  // trace went in 10% faster than with the defaults.
  const char* setup = "PRAGMA page_size=65536; PRAGMA cache_size=-16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE; BEGIN;";
  if (sqlite3_exec(db, setup, nullptr, nullptr, nullptr) != SQLITE_OK ||
      sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    *error = sqlite_error(db, "cannot create the tables");
    return nullptr;
  }
  return out;
}

SqliteExport::~SqliteExport() { sqlite3_close(db_); }

bool SqliteExport::add_run(const Trace& trace, const ExportRun& run, unsigned threads, std::string* error) {
  SpanIndex index(trace, threads);
  Writer w{db_, trace, index, ++runs_, threads, error};
  std::string rules;
  return w.lanes() && w.groups() && w.spans() && w.chains() && w.markers_and_units(run.unit_at, &rules) &&
         w.runs_row(run, rules);
}

bool SqliteExport::finish(std::string* error) {
  if (sqlite3_exec(db_, kIndexes, nullptr, nullptr, nullptr) != SQLITE_OK ||
      sqlite3_exec(db_, "COMMIT;", nullptr, nullptr, nullptr) != SQLITE_OK) {
    *error = sqlite_error(db_, "cannot finish the database");
    return false;
  }
  int rc = sqlite3_close(db_);
  db_ = nullptr;
  if (rc != SQLITE_OK) {
    *error = "cannot close the database";
    return false;
  }
  return true;
}

}  // namespace jqtrace
