// The result documents of every command, built from the samples: CSV headers equal the
// keys of the JSON rows, and the stats schema reads back what it writes.
#include <set>
#include <sstream>
#include <stdexcept>

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "../lib/test_util.h"
#include "diff_schema.h"
#include "gaps_schema.h"
#include "latency_schema.h"
#include "formats.h"
#include "markers_schema.h"
#include "phases_schema.h"
#include "render.h"
#include "stats_schema.h"
#include "validate_schema.h"

namespace jqtrace::result {
namespace {

Scope whole(const Trace& trace) {
  Scope scope;
  std::string error;
  REQUIRE(resolve_scope(trace, ScopeRequest{}, &scope, &error));
  return scope;
}

RangeStats stats_of(const Trace& trace, GroupBy by, bool hist = false) {
  StatsOptions options;
  options.by = by;
  options.hist = hist;
  SpanIndex index(trace);
  return compute_stats(trace, index, whole_trace(trace), options);
}

void flatten(const rapidjson::Value& v, const std::string& prefix, std::set<std::string>* keys) {
  for (const auto& m : v.GetObject()) {
    std::string key = prefix + m.name.GetString();
    if (m.value.IsObject()) flatten(m.value, key + ".", keys);
    else if (!m.value.IsArray()) keys->insert(key);  // arrays are nested tables: rows of their own
  }
}

/// The first row of the CSV table in the JSON: its array, or for a nested table the first
/// non-empty array under a row of its parent.
const rapidjson::Value* first_json_row(const Document& doc, const rapidjson::Value& json) {
  const Table* main = doc.delimited();
  const rapidjson::Value* scope = &json;
  if (!main->group.empty()) scope = &json[main->group.c_str()];
  if (!main->nested) {
    const auto& rows = (*scope)[main->key.c_str()];
    return rows.Empty() ? nullptr : &rows[0];
  }
  const Table* parent = nullptr;
  for (const Table* t : doc.tables()) {
    if (t == main) break;
    if (!t->nested) parent = t;
  }
  for (const auto& row : (*scope)[parent->key.c_str()].GetArray())
    if (!row[main->key.c_str()].Empty()) return &row[main->key.c_str()][0];
  return nullptr;
}

/// CSV's header, as a set, equals the keys of the JSON rows it writes.
void check_header_is_json_keys(const Document& doc) {
  std::string csv = render_delimited(doc, ',', {});
  std::string header = csv.substr(0, csv.find('\n'));
  std::set<std::string> columns;
  std::size_t start = 0;
  while (start <= header.size()) {
    std::size_t comma = std::min(header.find(',', start), header.size());
    columns.insert(header.substr(start, comma - start));
    start = comma + 1;
  }
  rapidjson::Document json;
  json.Parse(render_json(doc).c_str());
  REQUIRE_FALSE(json.HasParseError());
  const rapidjson::Value* row = first_json_row(doc, json);
  REQUIRE(row);
  std::set<std::string> keys;
  flatten(*row, "", &keys);
  for (const std::string& c : columns) CHECK_MESSAGE(keys.count(c), "CSV column not in the JSON row: ", c);
  for (const std::string& k : keys) CHECK_MESSAGE(columns.count(k), "JSON key not in the CSV header: ", k);
}

}  // namespace

TEST_CASE("stats: CSV header = JSON keys, jobque and generic, by category, name and lane, with --hist") {
  const Trace& jobque = test::load_sample("decode-small.trace.json");
  const Trace& generic = test::load_sample("chrome-small.json");
  for (GroupBy by : {GroupBy::category, GroupBy::name, GroupBy::lane, GroupBy::kind}) {
    StatsContext c;
    c.trace = &jobque;
    c.scope = whole(jobque);
    check_header_is_json_keys(stats_document(stats_of(jobque, by), c));
  }
  StatsContext c;
  c.trace = &generic;
  c.scope = whole(generic);
  check_header_is_json_keys(stats_document(stats_of(generic, GroupBy::name), c));
  c.hist = true;
  check_header_is_json_keys(stats_document(stats_of(generic, GroupBy::cat, true), c));
}

TEST_CASE("stats JSON round trip: what stats writes, a baseline reads back equal") {
  const Trace& trace = test::load_sample("decode-small.trace.json");
  RangeStats s = stats_of(trace, GroupBy::category);
  StatsContext c;
  c.trace = &trace;
  c.file = "decode-small.trace.json";
  c.scope = whole(trace);
  std::string json = render_json(stats_document(s, c));
  CHECK(looks_like_stats_json(json));
  BaselineShares read;
  std::string error;
  REQUIRE(read_stats_json(json, &read, &error));
  BaselineShares written = baseline_shares(s);
  CHECK(read.by == "category");
  CHECK(read.scope == "whole trace");
  REQUIRE(read.groups.size() == written.groups.size());
  for (std::size_t i = 0; i < read.groups.size(); ++i) {
    CHECK(read.groups[i].name == written.groups[i].name);
    // Written in shortest round-trip form; RapidJSON reads it back within an ulp (without
    // kParseFullPrecisionFlag, which 1.1.0 cannot be trusted with).
    CHECK(read.groups[i].share_pct == doctest::Approx(written.groups[i].share_pct).epsilon(1e-15));
  }
}

TEST_CASE("saved stats JSON: recognised, and refused with a reason when it is not one") {
  std::string saved = R"({
  "schema": "jqtrace/stats/1",
  "by": "category",
  "groups": [{"name": "ffn chain", "share_pct": 30.5}, {"name": "gone", "share_pct": 1.5}]
})";
  CHECK(looks_like_stats_json(saved));
  CHECK_FALSE(looks_like_stats_json(R"({"traceEvents": [{"ph": "X"}], "schema": "x"})"));
  BaselineShares b;
  std::string error;
  REQUIRE(read_stats_json(saved, &b, &error));
  CHECK(b.by == "category");
  REQUIRE(b.groups.size() == 2);
  CHECK(b.groups[0].share_pct == 30.5);
  CHECK_FALSE(read_stats_json(R"({"schema": "jqtrace/gaps/1"})", &b, &error));
  CHECK(error.find("not a saved") != std::string::npos);
  CHECK_FALSE(read_stats_json("{", &b, &error));
  CHECK(error.find("not valid JSON") != std::string::npos);
  CHECK_FALSE(read_stats_json(R"({"schema": "jqtrace/stats/1", "by": "name", "groups": [{"name": 3}]})", &b, &error));
  std::string deep(1000000, '[');  // nested a million deep: refused, not a stack overflow
  CHECK_FALSE(read_stats_json(deep, &b, &error));
  CHECK(error.find("not valid JSON") == 0);
}

TEST_CASE("saved latency JSON: its shares read back as the run wrote them, and a stats JSON is not one") {
  const Trace& trace = test::load_sample("decode-small.trace.json");
  SpanIndex index(trace);
  LatencyAnalysis analysis(trace, index, latency_lane(trace, ""), whole_trace(trace));
  LatencyParts parts = analysis.measure(whole_trace(trace), 10);
  LatencyContext c;
  c.trace = &trace;
  c.analysis = &analysis;
  c.file = "t.json";
  c.scope.label = "whole trace";
  std::string json = render_json(latency_document(parts, c));
  CHECK(looks_like_latency_json(json));
  CHECK_FALSE(looks_like_stats_json(json));
  BaselineShares b;
  std::string error;
  REQUIRE_MESSAGE(read_latency_json(json, &b, &error), error);
  CHECK(b.by == "latency");
  CHECK(b.scope == "whole trace");
  std::vector<GroupShare> now = latency_shares(parts, analysis);
  REQUIRE(b.groups.size() == now.size());
  for (std::size_t k = 0; k < now.size(); ++k) {
    CHECK(b.groups[k].name == now[k].name);
    CHECK(b.groups[k].share_pct == doctest::Approx(now[k].share_pct));
  }
  CHECK_FALSE(read_latency_json(R"({"schema": "jqtrace/stats/1", "by": "category", "groups": []})", &b, &error));
  CHECK(error == "not a saved 'jqtrace latency --format json' (no \"schema\": \"jqtrace/latency/1\")");
  CHECK_FALSE(read_latency_json(R"({"schema": "jqtrace/latency/1"})", &b, &error));
  CHECK(error == "a latency JSON without \"shares\"");
  CHECK_FALSE(read_latency_json(R"({"schema": "jqtrace/latency/1", "shares": [{"name": 1}]})", &b, &error));
  CHECK(error == "a share without a \"name\" string and a \"share_pct\" number");
}

TEST_CASE("markers: CSV header = JSON keys for the kinds and for one kind's units") {
  const Trace& trace = test::load_sample("decode-small.trace.json");
  auto kinds = summarize_kinds(trace, UnitAtRequest::automatic, QuantileMethod::inclusive);
  MarkersContext c;
  check_header_is_json_keys(markers_document(kinds, {}, c));
  SpanIndex index(trace);
  c.kind = "token";
  for (const Category& cat : trace.categories) c.categories.push_back(cat.name);
  auto units = unit_rows(trace, index, "token", UnitAt::end, 1);
  Document doc = markers_document(kinds, units, c);
  check_header_is_json_keys(doc);
  // Share columns come in the trace's category order whatever the shares are.
  std::string csv = render_delimited(doc, ',', {});
  CHECK(csv.find("share_pct.attn chain,share_pct.attn std,share_pct.ffn chain") != std::string::npos);
}

namespace {
UnitRow unit_with(int64_t index, std::vector<std::pair<std::string, int64_t>> busy) {
  UnitRow u;
  u.unit.index = index;
  u.unit.range = {10 * index, 10 * index + 10};
  int64_t total = 0;
  for (const auto& [name, ns] : busy) total += ns;
  for (const auto& [name, ns] : busy) {
    GroupStats g;
    g.name = name;
    g.busy_ns = ns;
    g.share_pct = total ? 100.0 * static_cast<double>(ns) / static_cast<double>(total) : 0;
    u.stats.groups.push_back(g);
  }
  return u;
}
}  // namespace

TEST_CASE("markers: units added one at a time, groups first met late, give the table of all at once") {
  // markers --kind adds a block of units at a time; a group a later unit first has gets
  // its column in the same place, and 0% in the units before it.
  std::vector<UnitRow> units = {unit_with(0, {{"b", 10}}), unit_with(1, {{"z", 0}, {"c", 5}}),
                                unit_with(2, {{"b", 3}, {"c", 1}, {"a", 0}})};
  UnitsTable table({"c", "b", "x"});  // x: in the order, in no unit
  for (const UnitRow& u : units) table.add(u);
  Table t = std::move(table).finish();
  std::vector<std::string> shares;
  std::vector<bool> shown;
  for (const Column& c : t.columns)
    if (c.group == "share_pct") {
      shares.push_back(c.key);
      shown.push_back(c.in_text);
    }
  CHECK(shares == std::vector<std::string>{"c", "b", "a", "z"});  // the order's, then by name
  CHECK(shown == std::vector<bool>{true, true, false, false});    // a and z: never busy
  REQUIRE(t.row_count() == 3);
  std::size_t first = t.columns.size() - 4;
  Row scratch;
  auto share = [&](std::size_t row, std::size_t k) { return std::get<double>(t.row(row, scratch)[first + k]); };
  CHECK(share(0, 0) == 0.0);
  CHECK(share(0, 1) == 100.0);
  CHECK(share(0, 2) == 0.0);
  CHECK(share(0, 3) == 0.0);
  CHECK(share(1, 0) == 100.0);
  CHECK(share(2, 0) == 25.0);
  CHECK(share(2, 1) == 75.0);
  for (std::size_t r = 0; r < t.row_count(); ++r) CHECK(t.row(r, scratch).size() == t.columns.size());
  // Rows are made as they are written, from numbers kept per unit (only the shares that
  // are not 0%: a row a column each took 5.4 GB for 20,000 units over 5,000 categories).
  CHECK(t.rows.empty());
  Document doc;
  doc.add(std::move(t));
  std::string csv = render_delimited(doc, ',', {});
  INFO(csv);
  std::istringstream lines(csv);
  std::vector<std::string> tails;
  for (std::string line; std::getline(lines, line);) {
    std::size_t cut = line.size();
    for (int commas = 0; commas < 4 && cut > 0;) if (line[--cut] == ',') ++commas;
    tails.push_back(line.substr(cut + 1));
  }
  CHECK(tails == std::vector<std::string>{"share_pct.c,share_pct.b,share_pct.a,share_pct.z", "0.000,100.000,0.000,0.000",
                                          "100.000,0.000,0.000,0.000", "25.000,75.000,0.000,0.000"});
}

TEST_CASE("markers: a streamed units table (rows measured a block at a time) equals the table of rows added") {
  // markers --kind streams its rows (issue 66: ~107 bytes a unit held, 1.07 GB for ten
  // million): three blocks and a part, groups first met in a late block, rows read in every
  // format (a text table reads them twice, for its widths) and out of order.
  std::size_t n = 3 * UnitsTable::kStreamBlock + 17;
  auto unit = [](std::size_t i) {
    auto k = static_cast<int64_t>(i);
    std::vector<std::pair<std::string, int64_t>> busy = {{"b", 1 + k % 7}, {"c", k % 3}};
    if (i > 2 * UnitsTable::kStreamBlock + 5) busy.emplace_back("late", 2);
    return unit_with(k, busy);
  };
  UnitsTable held({"c", "b"});
  for (std::size_t i = 0; i < n; ++i) held.add(unit(i));
  std::size_t measured = 0;
  UnitsTable streamed({"c", "b"});
  streamed.stream(n, [&](std::size_t from, std::size_t count, const std::function<void(const UnitRow&)>& add) {
    for (std::size_t i = from; i < from + count; ++i, ++measured) add(unit(i));
  });
  CHECK(measured == n);  // once, for the share columns
  Document a, b;
  a.add(std::move(held).finish());
  b.add(std::move(streamed).finish());
  CHECK(b.delimited()->rows.empty());
  for (Format f : {Format::csv, Format::json, Format::table}) {
    RenderOptions options;
    std::string text_a, text_b;
    render_to(a, f, options, [&](std::string_view t) { text_a += t; });
    render_to(b, f, options, [&](std::string_view t) { text_b += t; });
    CHECK(text_a == text_b);
  }
  Row x, y;
  std::size_t last = a.delimited()->columns.size() - 1;  // the "late" share
  for (std::size_t r : {n - 1, std::size_t{0}, n / 2, std::size_t{5}}) {
    const Row& ra = a.delimited()->row(r, x);
    const Row& rb = b.delimited()->row(r, y);
    CHECK(std::get<int64_t>(ra[0]) == std::get<int64_t>(rb[0]));
    CHECK(std::get<double>(ra[last]) == std::get<double>(rb[last]));
  }
}

TEST_CASE("markers: groups of one name share a column and their shares add up") {
  // A generic trace's spans without a cat are "(no cat)", and a cat may have that name too:
  // two groups, one column (the column kept the last group's share: 37.5%, not 100%).
  UnitsTable table({});
  table.add(unit_with(0, {{"(no cat)", 5}, {"(no cat)", 3}, {"b", 0}}));
  Document doc;
  doc.add(std::move(table).finish());
  std::string csv = render_delimited(doc, ',', {});
  INFO(csv);
  CHECK(csv.find("share_pct.(no cat),share_pct.b\n") != std::string::npos);
  CHECK(csv.find(",100.000,0.000\n") != std::string::npos);
}

TEST_CASE("markers: tables show the share columns of the kMaxTextShareColumns busiest groups, CSV all of them") {
  // 30 groups, group gK busy K+1 ns in unit 0; g29 is busy in unit 1 too.
  std::vector<std::pair<std::string, int64_t>> busy;
  for (int k = 0; k < 30; ++k) busy.emplace_back(std::string("g").append(std::to_string(k)), k + 1);
  UnitsTable table({});
  table.add(unit_with(0, busy));
  table.add(unit_with(1, {{"g29", 5}, {"g0", 0}}));
  Document doc;
  doc.add(std::move(table).finish());
  const Table& t = *doc.delimited();
  std::vector<std::string> shown;
  std::size_t shares = 0;
  for (const Column& c : t.columns)
    if (c.group == "share_pct") {
      ++shares;
      if (c.in_text) shown.push_back(c.key);
    }
  CHECK(shares == 30);
  REQUIRE(shown.size() == kMaxTextShareColumns);
  CHECK(std::find(shown.begin(), shown.end(), "g0") == shown.end());   // the five least busy
  CHECK(std::find(shown.begin(), shown.end(), "g4") == shown.end());
  CHECK(std::find(shown.begin(), shown.end(), "g5") != shown.end());
  CHECK(std::find(shown.begin(), shown.end(), "g29") != shown.end());
  CHECK(t.title.find("25 busiest of 30") != std::string::npos);
  std::string csv = render_delimited(doc, ',', {});
  CHECK(csv.substr(0, csv.find('\n')).find("share_pct.g0,") != std::string::npos);
  std::string text = render_table(doc, {});
  CHECK(text.find("25 busiest of 30") != std::string::npos);
  CHECK(text.find(" g4 ") == std::string::npos);
  CHECK(text.find(" g5 ") != std::string::npos);
}

TEST_CASE("gaps, diff, phases, validate: CSV header = JSON keys") {
  const Trace& trace = test::load_sample("decode-small.trace.json");
  GapsReport report;
  std::string error;
  REQUIRE(compute_gaps(trace, whole_trace(trace), GapsOptions{}, &report, &error));
  check_header_is_json_keys(gaps_document(report, "t.json", whole(trace), QuantileMethod::exclusive, trace_facts(trace)));

  RangeStats a = stats_of(trace, GroupBy::category);
  RangeStats b = stats_of(test::load_sample("legacy-small.trace.json"), GroupBy::category);
  auto kinds = summarize_kinds(trace, UnitAtRequest::automatic, QuantileMethod::inclusive);
  TraceDiff d = diff_stats(a, b, kinds, {});
  check_header_is_json_keys(
      diff_document({{"a.json"}, whole(trace), &a, trace_facts(trace)}, {{"b.json"}, whole(trace), &b, trace_facts(trace)},
                    d, {}, {}));

  PhaseLog log;
  PhaseLogError phase_error;
  REQUIRE(log.add_line("[t] rounds=12 k=4 total=48.31ms | draft=9.02 verify=31.40 | per-round ms: draft=0.752 "
                       "verify=2.617 total=4.026",
                       1, &phase_error));
  auto tags = log.summarize(QuantileMethod::inclusive);
  REQUIRE_FALSE(tags.empty());
  check_header_is_json_keys(phases_document(tags, QuantileMethod::inclusive, nullptr));

  test::ValidateRun run = test::validate_string(R"({"traceEvents":[{"ph":"X","ts":1,"dur":-2,"pid":0,"tid":0}]})");
  ValidatedFile file{"broken.json", run.result, run.got.diagnostics, 0, false};
  REQUIRE_FALSE(file.kept.empty());
  check_header_is_json_keys(validate_document({file}, false));
}

TEST_CASE("stats by lane: pid, tid and thread come from the trace as the rows are written") {
  Trace trace;
  test::load_string(R"([
    {"ph":"X","pid":"gpu","tid":"stream 7","ts":0,"dur":5,"name":"k"},
    {"ph":"X","pid":3,"tid":"0012","ts":1,"dur":5,"name":"k"},
    {"ph":"M","pid":3,"tid":"0012","name":"thread_name","args":{"name":"main"}}])",
                    &trace);
  StatsContext c;
  c.trace = &trace;
  c.scope = whole(trace);
  RangeStats s = stats_of(trace, GroupBy::lane);
  Document doc = stats_document(s, c);
  std::string csv = render_delimited(doc, ',', {});
  CHECK(csv.find("\n3:0012,3,12,main,") != std::string::npos);  // a string of digits is a number
  CHECK(csv.find("\ngpu:stream 7,gpu,stream 7,,") != std::string::npos);
  for (const GroupStats& g : s.groups) CHECK(g.lane < trace.lanes.size());
  CHECK_THROWS_AS(stats_document(s, StatsContext{}), std::logic_error);
}

TEST_CASE("stats: the lanes' rows are made from the trace as they are written, a row a lane") {
  const Trace& trace = test::load_sample("decode-small.trace.json");
  RangeStats s = stats_of(trace, GroupBy::category);
  StatsContext c;
  c.trace = &trace;
  c.scope = whole(trace);
  Document doc = stats_document(s, c);
  const Table* lanes = nullptr;
  for (const Table* t : doc.tables())
    if (t->key == "lanes_detail") lanes = t;
  REQUIRE(lanes != nullptr);
  CHECK(lanes->rows.empty());  // nothing held a lane but the stats' own 24 bytes
  REQUIRE(lanes->row_count() == trace.lanes.size());
  Row scratch;
  for (std::size_t r = 0; r < lanes->row_count(); ++r) {
    const Row& row = lanes->row(r, scratch);
    CHECK(std::get<std::string>(row[0]) == trace.lane_label(s.lanes_detail[r].lane));
    CHECK(std::get<std::string>(row[1]) == trace.thread_name(s.lanes_detail[r].lane));
    CHECK(std::get<int64_t>(row[2]) == s.lanes_detail[r].busy_ns);
  }
  CHECK_THROWS_AS(stats_document(s, StatsContext{}), std::logic_error);  // lanes without their trace
}


TEST_CASE("diff changes: a side with no unit of a group has no median, not 0") {
  // fifo job ran in 19 of a corpus trace's 384 layers and in none of the other's: its B
  // median read 0.000 (a median of no values).
  KindSamples a, b;
  a.kind = b.kind = "layer";
  for (int u = 0; u < 40; ++u) {
    a.dur_ns.push_back(1000 + u);
    b.dur_ns.push_back(1000 + u);
    a.busy_ns["attn"].push_back(500 + u);
    b.busy_ns["attn"].push_back(500 + u);
    a.busy_ns["fifo"].push_back(u < 3 ? 90 : 0);
  }
  const Trace& trace = test::load_sample("decode-small.trace.json");
  RangeStats stats = stats_of(trace, GroupBy::category);
  TraceDiff d = diff_stats(stats, stats, {}, {});
  Document doc = diff_document({{"a.json"}, whole(trace), &stats, trace_facts(trace)},
                               {{"b.json"}, whole(trace), &stats, trace_facts(trace)}, d,
                               unit_changes({a}, {b}, 0.05), {});
  const Table* changes = nullptr;
  for (const Table* t : doc.tables())
    if (t->key == "changes") changes = t;
  REQUIRE(changes);
  auto column = [&](const std::string& key) {
    for (std::size_t c = 0; c < changes->columns.size(); ++c)
      if (changes->columns[c].key == key) return c;
    FAIL("no column " << key);
    return std::size_t{0};
  };
  bool found = false;
  for (const Row& row : changes->rows) {
    if (std::get<std::string>(row[column("group")]) != "fifo") continue;
    found = true;
    CHECK(std::get<double>(row[column("median_a_us")]) == doctest::Approx(90));
    CHECK(std::holds_alternative<std::monostate>(row[column("median_b_us")]));
    CHECK(std::get<int64_t>(row[column("n_b")]) == 0);
  }
  CHECK(found);
}

}  // namespace jqtrace::result
