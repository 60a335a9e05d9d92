// The renderers: each format's escaping, alignment, empty tables, missing values, widths,
// --columns and the JSON shape of grouped and nested columns.
#include <cmath>
#include <limits>
#include <random>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <rapidjson/document.h>

#include "formats.h"
#include "render.h"
#include "text_format.h"

namespace jqtrace::result {
namespace {

Distribution dist(uint64_t count, double v) {
  Distribution d;
  d.count = count;
  d.mean = d.p50 = d.p90 = d.p95 = d.p99 = d.max = v;
  return d;
}

/// A small document: a stats line and one table of every kind of column.
Document sample() {
  Document doc;
  doc.schema = "jqtrace/test/1";
  doc.heading = "file.json: a test";
  doc.add(Field("events", Kind::integer, int64_t{13}).labelled("events"));
  doc.add(Field("busy_us", Kind::us, int64_t{95000}).labelled("busy"));
  Table t("groups");
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("busy_us", Kind::us));
  t.add_column(Column("share_pct", Kind::percent).titled("share"));
  t.add_column(Column("dur_us", Kind::distribution));
  t.rows.push_back({std::string("a,b \"c\""), int64_t{56000}, 58.947, dist(3, 20000)});
  t.rows.push_back({std::string("x|y"), int64_t{0}, 0.0, dist(0, 0)});
  doc.add(std::move(t));
  return doc;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("csv: the header is each column's JSON path, fields are quoted per RFC 4180") {
  std::string csv = render_delimited(sample(), ',', {});
  auto rows = lines(csv);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == "name,busy_us,share_pct,dur_us.count,dur_us.mean,dur_us.p50,dur_us.p90,dur_us.p95,dur_us.p99,dur_us.max");
  CHECK(rows[1] == "\"a,b \"\"c\"\"\",56.000,58.947,3,20.000,20.000,20.000,20.000,20.000,20.000");
  CHECK(rows[2] == "x|y,0.000,0.000,0,,,,,,");  // an empty distribution: count 0, no values
  CHECK(lines(render_delimited(sample(), '\t', {}))[1].find("\"a,b \"\"c\"\"\"\t56.000") == 0);
}

TEST_CASE("csv and tsv: a name a spreadsheet would run as a formula gets a leading quote, numbers never") {
  CHECK(spreadsheet_text("=1+1") == "'=1+1");
  CHECK(spreadsheet_text("+cmd") == "'+cmd");
  CHECK(spreadsheet_text("-") == "'-");
  CHECK(spreadsheet_text("@SUM(A1)") == "'@SUM(A1)");
  CHECK(spreadsheet_text("\tx") == "'\tx");
  CHECK(spreadsheet_text("\rx") == "'\rx");
  CHECK(spreadsheet_text("attn chain") == "attn chain");
  CHECK(spreadsheet_text("a=b") == "a=b");
  CHECK(spreadsheet_text("") == "");
  Document doc;
  Table t("groups");
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("busy_us", Kind::us));
  t.add_column(Column("delta", Kind::ratio));
  t.rows.push_back({std::string("=HYPERLINK(\"http://x\",\"a,b\")"), int64_t{-5000}, -1.5});
  t.rows.push_back({std::string("-"), int64_t{0}, 0.0});
  t.rows.push_back({std::string("@x\ty"), int64_t{1}, 2.0});
  doc.add(std::move(t));
  std::vector<std::string> csv = lines(render_delimited(doc, ',', {}));
  CHECK(csv[1] == "\"'=HYPERLINK(\"\"http://x\"\",\"\"a,b\"\")\",-5.000,-1.500");  // quoted, then guarded
  CHECK(csv[2] == "'-,0.000,0.000");  // a name that is only '-'; the numbers stay numbers
  std::vector<std::string> tsv = lines(render_delimited(doc, '\t', {}));
  CHECK(tsv[3] == "\"'@x\ty\"\t0.001\t2.000");
  RenderOptions raw;
  raw.csv_raw = true;
  CHECK(lines(render_delimited(doc, ',', raw))[2] == "-,0.000,0.000");
}

TEST_CASE("markdown: heading, stats line as a list, escaped cells, aligned columns") {
  std::string md = render_markdown(sample(), {});
  auto rows = lines(md);
  CHECK(rows[0] == "### file.json: a test");
  CHECK(md.find("- **events** 13\n- **busy** 95.000 us\n") != std::string::npos);
  CHECK(md.find("| name | busy\\_us | share | count | mean\\_us |") != std::string::npos);
  CHECK(md.find("| :--- | ---: | ---: |") != std::string::npos);
  CHECK(md.find("| x\\|y | 0.000 | 0.0% | 0 | - |") != std::string::npos);
}

TEST_CASE("markdown: gates are a checklist, held checked") {
  Document doc;
  Table t("gates");
  t.checklist = true;
  t.add_column(Column("expr", Kind::text));
  t.add_column(Column("value", Kind::ratio));
  t.add_column(Column("ok", Kind::flag).data_only());
  t.rows.push_back({std::string("idle < 10"), 66.6, false});
  t.rows.push_back({std::string("share(a|b) > 5"), 1.0, true});
  doc.add(std::move(t));
  std::string md = render_markdown(doc, {});
  CHECK(md == "- [ ] idle &lt; 10 — 66.600\n- [x] share(a\\|b) &gt; 5 — 1.000\n");
}

TEST_CASE("table: text left, numbers right, every distribution part, missing values as -") {
  auto rows = lines(render_table(sample(), {}));
  CHECK(rows[0] == "file.json: a test");
  CHECK(rows[1] == "events 13  busy 95.000 us");
  CHECK(rows[3] == "name     busy_us  share  count  mean_us  p50_us  p90_us  p95_us  p99_us  max_us");
  CHECK(rows[4] == "a,b \"c\"   56.000  58.9%      3   20.000  20.000  20.000  20.000  20.000  20.000");
  CHECK(rows[5] == "x|y        0.000   0.0%      0        -       -       -       -       -       -");
}

TEST_CASE("empty tables: a header in every format, an empty array in JSON") {
  Document doc = sample();
  std::get<Table>(doc.items[2]).rows.clear();
  CHECK(lines(render_delimited(doc, ',', {})).size() == 1);
  CHECK(lines(render_table(doc, {})).back().find("name") == 0);
  CHECK(render_markdown(doc, {}).find("| :--- |") != std::string::npos);
  rapidjson::Document json;
  json.Parse(render_json(doc).c_str());
  REQUIRE(json.IsObject());
  CHECK(json["groups"].IsArray());
  CHECK(json["groups"].Empty());
}

TEST_CASE("no NaN or infinity reaches any format") {
  Document doc;
  Table t("rows");
  t.add_column(Column("ratio", Kind::ratio));
  t.add_column(Column("pct", Kind::percent));
  t.rows.push_back({std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()});
  doc.add(std::move(t));
  CHECK(lines(render_delimited(doc, ',', {}))[1] == ",");
  CHECK(lines(render_table(doc, {}))[1].find("-") != std::string::npos);
  CHECK(render_markdown(doc, {}).find("nan") == std::string::npos);
  std::string json = render_json(doc);
  CHECK(json.find("nan") == std::string::npos);
  CHECK(json.find("inf") == std::string::npos);
  rapidjson::Document parsed;
  parsed.Parse(json.c_str());
  REQUIRE_FALSE(parsed.HasParseError());
  CHECK(parsed["rows"][0]["ratio"].IsNull());
}

TEST_CASE("display width: wide characters count two, combining marks and color codes none") {
  CHECK(display_width("abc") == 3);
  CHECK(display_width("\xE6\x97\xA5\xE6\x9C\xAC") == 4);          // 日本
  CHECK(display_width("\xF0\x9F\x94\xA5") == 2);                  // 🔥
  CHECK(display_width("e\xCC\x81") == 1);                         // e + combining acute
  CHECK(display_width("\x1b[1;31mred\x1b[0m") == 3);
  CHECK(truncate_to_width("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 5) == "\xE6\x97\xA5\xE6\x9C\xAC\xE2\x80\xA6");
  CHECK(truncate_to_width("short", 8) == "short");
}

TEST_CASE("table: CJK names keep the columns aligned") {
  Document doc;
  Table t("rows");
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("n", Kind::integer));
  t.rows.push_back({std::string("\xE6\x97\xA5\xE6\x9C\xAC"), int64_t{1}});  // 日本: 4 columns
  t.rows.push_back({std::string("abcd"), int64_t{22}});
  doc.add(std::move(t));
  auto rows = lines(render_table(doc, {}));
  CHECK(display_width(rows[1]) == display_width(rows[2]));
}

TEST_CASE("table: fitting a narrow terminal drops the most droppable columns, then cuts names") {
  Document doc;
  Table t("rows");
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("busy_us", Kind::us));
  t.add_column(Column("extra_us", Kind::us).rank(2));
  t.add_column(Column("dur_us", Kind::distribution).rank(1));
  t.rows.push_back({std::string("a rather long category name"), int64_t{1000}, int64_t{2000}, dist(1, 5000)});
  doc.add(std::move(t));
  RenderOptions wide;
  std::string full = render_table(doc, wide);
  CHECK(full.find("extra_us") != std::string::npos);
  CHECK(full.find("hidden") == std::string::npos);
  RenderOptions narrow;
  narrow.width = 30;
  std::string fitted = render_table(doc, narrow);
  for (const std::string& line : lines(fitted)) CHECK(display_width(line) <= 30);  // the note under it too
  CHECK(fitted.find("extra_us") == std::string::npos);
  CHECK(fitted.find("p50_us") == std::string::npos);
  CHECK(fitted.find("\xE2\x80\xA6") != std::string::npos);  // the name was cut with …
  std::string note = fitted.substr(fitted.find("(distributions"));
  std::replace(note.begin(), note.end(), '\n', ' ');
  // mean, p95 and p99 went first (compacted), then extra_us and the rest of dur_us by rank
  CHECK(note.find("distributions show p50, p90 and max, 5 columns hidden to fit 30 columns") != std::string::npos);
}

TEST_CASE("table: a terminal too narrow for every metric gets them all, as p50, p90 and max, in blocks") {
  Document doc;
  Table t("rows", "classes");
  t.add_column(Column("key", Kind::text));
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("stage", Kind::integer).identifying());
  t.add_column(Column("n", Kind::integer));
  for (const char* metric : {"wall_us", "publish_us", "first_claim_us"})
    t.add_column(Column(metric, Kind::distribution).titled(metric).plain_numbers());
  t.rows.push_back({std::string("attn"), std::string("attn"), int64_t{0}, int64_t{3}, dist(3, 1000), dist(3, 20),
                    dist(2, 7)});
  t.rows.push_back({std::string("ffn"), std::string("ffn"), int64_t{1}, int64_t{4}, dist(4, 2000), dist(4, 30),
                    dist(4, 9)});
  doc.add(std::move(t));
  RenderOptions options;
  options.width = 60;
  std::string fitted = render_table(doc, options);
  std::vector<std::string> out = lines(fitted);
  for (const std::string& line : out) CHECK(display_width(line) <= 60);
  // The key repeats the name in every row: shown once. The counts equal to n: not repeated;
  // first_claim's (2 and 4, not n's 3 and 4) stays. Every metric is there, under its name.
  CHECK(out[0] == "classes");
  CHECK(out[1].rfind("name  stage  n  wall_us p50", 0) == 0);
  CHECK(fitted.find("key") == std::string::npos);
  CHECK(fitted.find("wall_us n") == std::string::npos);
  CHECK(fitted.find("publish_us") != std::string::npos);
  CHECK(fitted.find("first_claim_us n") != std::string::npos);
  CHECK(fitted.find("mean") == std::string::npos);
  // The blocks after the first repeat what a row is: its name and stage.
  CHECK(fitted.find("classes (continued)\nname  stage  ") != std::string::npos);
  CHECK(fitted.find("columns hidden") == std::string::npos);
  // --wide: every part, still in blocks that fit.
  options.wide = true;
  std::string wide = render_table(doc, options);
  for (const std::string& line : lines(wide)) CHECK(display_width(line) <= 60);
  CHECK(wide.find("p95") != std::string::npos);
  CHECK(wide.find("distributions show") == std::string::npos);
  // The same key and name, or counts, are never hidden when the table fits.
  options.width = 0;
  CHECK(render_table(doc, options).find("key") != std::string::npos);
}

TEST_CASE("rows made as they are read render as stored rows do, in every format and when fitted") {
  Document stored = sample();
  Table& kept = std::get<Table>(stored.items.back());
  kept.add_column(Column("share_bar_pct", Kind::percent).with_bar().rank(1));
  kept.rows[0].push_back(40.0);
  kept.rows[1].push_back(60.0);
  kept.colors = {"#ff0000", "#00ff00"};
  Document made = stored;
  Table& lazy = std::get<Table>(made.items.back());
  std::vector<Row> source = lazy.rows;
  lazy.rows.clear();
  lazy.made_rows = source.size();
  int calls = 0;
  lazy.make_row = [&](std::size_t r, Row& row) {
    ++calls;
    row = source[r];
  };
  CHECK(lazy.row_count() == 2);
  for (std::size_t width : {std::size_t{0}, std::size_t{30}, std::size_t{60}}) {
    RenderOptions o;
    o.width = width;
    o.color = true;
    CHECK(render_table(made, o) == render_table(stored, o));
    CHECK(render_markdown(made, o) == render_markdown(stored, o));
  }
  CHECK(render_delimited(made, ',', {}) == render_delimited(stored, ',', {}));
  CHECK(render_delimited(made, '\t', {}) == render_delimited(stored, '\t', {}));
  CHECK(render_json(made) == render_json(stored));
  CHECK(render_html_fragment(made) == render_html_fragment(stored));
  CHECK(calls > 0);
}

TEST_CASE("table and Markdown: a long table is handed over in pieces that add up to the whole text") {
  Document doc;
  doc.heading = "many rows";
  Table t("rows");
  t.add_column(Column("name", Kind::text));
  t.add_column(Column("busy_us", Kind::us));
  t.made_rows = 100000;
  t.make_row = [](std::size_t r, Row& row) { row = {fmt::format("lane {}", r), static_cast<int64_t>(r * 1000)}; };
  doc.add(std::move(t));
  RenderOptions narrow;
  narrow.width = 9;  // the name column is cut: every row measured twice, then written
  for (const RenderOptions& o : {RenderOptions{}, narrow}) {
    std::vector<std::size_t> pieces;
    std::string joined;
    render_table_to(doc, o, [&](std::string_view piece) {
      pieces.push_back(piece.size());
      joined += piece;
    });
    CHECK(pieces.size() > 1);
    CHECK(joined == render_table(doc, o));
    auto rows = lines(joined);  // the heading, a blank line, the header, the rows (and what was hidden)
    REQUIRE(rows.size() >= 100003);
    CHECK(rows[100002].rfind(o.width ? "lane 99\xE2\x80\xA6" : "lane 99999", 0) == 0);
  }
  std::size_t md_pieces = 0;
  std::string md;
  render_markdown_to(doc, {}, [&](std::string_view piece) {
    ++md_pieces;
    md += piece;
  });
  CHECK(md_pieces > 1);
  CHECK(md == render_markdown(doc, {}));
  CHECK(md.find("| lane 99999 | 99999.000 |") != std::string::npos);
}

TEST_CASE("--columns: those leaves in that order, a distribution key selects its parts, unknown keys suggest") {
  Document doc = sample();
  RenderOptions options;
  options.columns = {"share_pct", "name", "dur_us.p50"};
  CHECK(lines(render_delimited(doc, ',', options))[0] == "share_pct,name,dur_us.p50");
  options.columns = {"dur_us"};
  CHECK(lines(render_delimited(doc, ',', options))[0] ==
        "dur_us.count,dur_us.mean,dur_us.p50,dur_us.p90,dur_us.p95,dur_us.p99,dur_us.max");
  std::vector<Leaf> leaves;
  std::string error;
  CHECK_FALSE(select_leaves(*doc.delimited(), {"shar_pct"}, &leaves, &error));
  CHECK(error.find("unknown column 'shar_pct' (did you mean 'share_pct'?)") == 0);
  options.columns = {"name"};
  auto table = lines(render_table(doc, options));
  CHECK(table[3] == "name");  // heading, stats line, blank, then the one column
}

TEST_CASE("json: grouped columns become objects, nested tables arrays under their parent row") {
  Document doc;
  doc.schema = "jqtrace/test/1";
  doc.add(Field("by", Kind::text, std::string("category")));
  doc.add(Field("file", Kind::text, std::string("a.json")).in("a"));
  doc.add(Field("file", Kind::text, std::string("b.json")).in("b"));
  Field range("range_us", Kind::us, {});
  range.list = {int64_t{0}, int64_t{1500}};
  doc.add(std::move(range));
  Table parent("groups");
  parent.add_column(Column("name", Kind::text));
  parent.add_column(Column("busy_us", Kind::us).in("a"));
  parent.add_column(Column("busy_us", Kind::us).in("b"));
  parent.add_column(Column("shown", Kind::text).people_only());
  parent.rows.push_back({std::string("g"), int64_t{1234}, Value{}, std::string("people")});
  doc.add(std::move(parent));
  Table child("hist");
  child.nested = true;
  child.add_column(Column("count", Kind::integer));
  child.rows.push_back({int64_t{7}});
  child.parent.push_back(0);
  doc.add(std::move(child));
  rapidjson::Document json;
  json.Parse(render_json(doc).c_str());
  REQUIRE(json.IsObject());
  CHECK(std::string(json["schema"].GetString()) == "jqtrace/test/1");
  CHECK(std::string(json["a"]["file"].GetString()) == "a.json");
  CHECK(json["range_us"][1].GetDouble() == 1.5);
  const auto& g = json["groups"][0];
  CHECK(g["a"]["busy_us"].GetDouble() == 1.234);
  CHECK(g["b"]["busy_us"].IsNull());
  CHECK_FALSE(g.HasMember("shown"));
  CHECK(g["hist"][0]["count"].GetInt() == 7);
}

TEST_CASE("formats: names, and the format an output path's extension names") {
  CHECK(parse_format("md") == Format::md);
  CHECK_FALSE(parse_format("xml"));
  CHECK(format_of_path("out/x.json") == Format::json);
  CHECK(format_of_path("x.csv") == Format::csv);
  CHECK(format_of_path("x.md") == Format::md);
  CHECK(format_of_path("report.html") == Format::html);
  CHECK_FALSE(format_of_path("dir.d/file"));
  CHECK(format_of_path("x.txt") == Format::table);  // a table is text
  CHECK(format_of_path("x.png") == Format::png);
  CHECK_FALSE(format_of_path("x.xlsx"));
  CHECK_FALSE(format_of_path(".hidden"));
  CHECK(extension_of(".hidden").empty());  // a hidden file's dot is its name
  CHECK(extension_of("v1.2/out").empty());
  CHECK(extension_of("a/b.json.gz") == ".gz");
  CHECK(extension_list({Format::svg, Format::png}) == ".svg .png");
  CHECK(format_list(kDocumentFormats) == "table|csv|tsv|json|md");
}

}  // namespace jqtrace::result

namespace jqtrace::result {

TEST_CASE("any text, in any place of a document, comes out valid in every format (no NUL, JSON is UTF-8)") {
  const std::string bad = std::string("a\0b\xff\xfe|\n", 7);  // NUL, invalid bytes, a pipe, a line end
  Document doc;
  doc.schema = "jqtrace/test/1";
  doc.heading = bad;
  doc.add(Field("file", Kind::text, bad).labelled(bad));
  Table t("rows", bad);
  t.add_column(Column("name", Kind::text));
  t.add_column(Column(bad, Kind::percent).in("share_pct"));
  t.rows.push_back({bad, 1.0});
  doc.add(std::move(t));
  for (Format f : kDocumentFormats) {
    std::string out = render(doc, f, {});
    CHECK_MESSAGE(out.find('\0') == std::string::npos, format_name(f));
    CHECK_MESSAGE(out.find('\xff') == std::string::npos, format_name(f));
  }
  rapidjson::Document json;
  json.Parse<rapidjson::kParseValidateEncodingFlag>(render_json(doc).c_str());
  CHECK_FALSE(json.HasParseError());
}

}  // namespace jqtrace::result

TEST_CASE("numbers are written as fmt's {:.Nf} would, by hand") {
  // The table writer formats without fmt (a column of a million cells); the digits must
  // not move: ties (x.125, x.5), negatives, zeros, huge and tiny values, random doubles.
  std::vector<double> values = {0.0, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, 99.95, 99.949999, 1e300, -1e300,
                                5e-324, 1.7976931348623157e308, 123456789.987654321, -0.04, -0.06};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    values.push_back(std::uniform_real_distribution<double>(-200, 200)(rng));
    values.push_back(static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 8.0);
  }
  for (double v : values)
    for (int d : {0, 1, 3, 6}) {
      CAPTURE(v);
      CAPTURE(d);
      CHECK(jqtrace::result::fixed(v, d) == fmt::format("{:.{}f}", v, d));
      CHECK(jqtrace::result::fixed(v, d, true) == fmt::format("{:+.{}f}", v, d));
    }
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{999}, int64_t{-1000}, int64_t{123456789},
                     std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    CHECK(jqtrace::result::us_fixed(ns) == fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", mag / 1000, mag % 1000));
  }
  // Fractional ns below 2^50 rounded to a whole ns, half away from zero, then the integer
  // path; past 2^50 (and -0.0) "{:.3f}" of ns / 1000.
  std::vector<double> ns_values = {0.0, 0.5, 499.5, 1e15, -1e15, 0x1p50 - 1, 123.456};
  for (int i = 0; i < 5000; ++i) {
    ns_values.push_back(static_cast<double>(static_cast<int64_t>(rng() >> 14) - (int64_t{1} << 49)));
    ns_values.push_back(std::uniform_real_distribution<double>(-1e9, 1e9)(rng));
  }
  for (double ns : ns_values) {
    CAPTURE(ns);
    CHECK(jqtrace::result::us_fixed(ns) == jqtrace::result::us_fixed(static_cast<int64_t>(std::round(ns))));
  }
  for (double ns : {-0.0, 0x1p50, 0x1p53, 1e300}) {
    CAPTURE(ns);
    CHECK(jqtrace::result::us_fixed(ns) == fmt::format("{:.3f}", ns / 1000.0));
  }
}

TEST_CASE("three decimals of us round an exact half of a ns away from zero") {
  // Whatever the binary error of ns / 1000: 16.0225 is just below in binary, and "{:.3f}"
  // of it gave 16.022.
  std::vector<std::pair<double, std::string>> cases = {
      {16022.5, "16.023"}, {-16022.5, "-16.023"}, {499.5, "0.500"}, {-0.4, "-0.000"}, {0.4, "0.000"}};
  for (const auto& [ns, text] : cases) {
    CAPTURE(ns);
    CHECK(jqtrace::result::us_fixed(ns) == text);
  }
}

TEST_CASE("JSON's us of a time held as a double is its exact decimal, not the double's shortest form") {
  using jqtrace::result::us_decimal;
  // Issue 65: 7953001 ns reached through arithmetic read 7953.00100000002 us.
  CHECK(us_decimal(7953001.0) == "7953.001");
  CHECK(us_decimal(7953001.00000002) == "7953.001");
  CHECK(us_decimal(-98.0) == "-0.098");
  CHECK(us_decimal(-97.9999999981374) == "-0.098");
  CHECK(us_decimal(12000.5) == "12.0005");
  CHECK(us_decimal(0.0) == "0");
  CHECK(us_decimal(-0.0) == "0");
  CHECK(us_decimal(-0.0001) == "0");
  CHECK(us_decimal(5.0) == "0.005");
  CHECK(us_decimal(1000.0) == "1");
  CHECK(us_decimal(1.0 / 3.0) == "0.000333");
  CHECK(us_decimal(std::nan("")).empty());
  // Every whole number of ns reads back as itself (through a JSON reader's double).
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    auto ns = static_cast<int64_t>(rng() >> 12) - (int64_t{1} << 51);
    std::string text = us_decimal(static_cast<double>(ns));
    uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    std::string exact = fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", mag / 1000, mag % 1000);
    while (exact.back() == '0') exact.pop_back();
    if (exact.back() == '.') exact.pop_back();
    CAPTURE(ns);
    CHECK(text == exact);
  }
}

TEST_CASE("fixed's integer path gives the same digits near halves and at its limits") {
  // Below 2^32 / 10^d, 0-3 decimals are written by integer arithmetic unless the scaled
  // value is within 2^-20 of a half; the digits must be std::to_chars' (and fmt's) on both
  // sides of every boundary: values next to k + 0.5 (in units of the last decimal), exact
  // binary ties (x.125 with 2 decimals), and the largest values the path takes.
  std::vector<double> values;
  std::mt19937_64 rng(11);
  for (int d = 0; d <= 3; ++d) {
    double unit = std::pow(10.0, -d);
    for (int i = 0; i < 3000; ++i) {
      double k = static_cast<double>(rng() % 5000000);
      double half = (k + 0.5) * unit;
      for (double v : {half, std::nextafter(half, 0.0), std::nextafter(half, 1e300), half * (1 + 1e-12), half * (1 - 1e-12)})
        values.push_back(v);
    }
    double limit = 0x1p32 * unit;
    for (double v : {limit, std::nextafter(limit, 0.0), limit * 0.999999, limit - 0.5 * unit}) values.push_back(v);
  }
  for (double v : {0.125, 0.375, 2.5, 1e-9, 4.9999999999, 5.0000000001, 1234.0005, 99.995}) values.push_back(v);
  for (int i = 0; i < 20000; ++i) values.push_back(std::uniform_real_distribution<double>(0, 2000)(rng));
  for (double v : values)
    for (int d : {0, 1, 2, 3}) {
      CAPTURE(v);
      CAPTURE(d);
      std::string appended = "x";
      jqtrace::result::append_fixed(appended, v, d);
      std::string expected = "x";
      expected += fmt::format("{:.{}f}", v, d);
      REQUIRE(appended == expected);
    }
}
