#pragma once
// The result model: what a command found, as plain values in named, typed columns, before
// any of it is text. Commands build a Document (load → scope → analyse → document); the
// renderers (render.h) are the only code that turns its numbers into text, so table, CSV,
// TSV, JSON and Markdown cannot drift apart: a column declared once appears in all of them.
//
// Keys are the contract: a column's CSV header is its JSON path inside a row ("busy_us",
// "a.busy_us" for a column in group "a", "dur_us.p50" for a distribution's part), and
// --columns selects by the same keys.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "quantile.h"

namespace jqtrace::result {

/// What a value is, which decides how each format writes it.
enum class Kind {
  integer,       ///< a count (int64)
  us,            ///< a time: int64 ns (exact) or double ns, written as µs
  percent,       ///< double, 0..100: "58.9%" in tables, 58.947 in CSV
  ratio,         ///< double, a plain ratio (parallelism, B/A)
  probability,   ///< double, a p value: "0.012" or "3.1e-07" for people, 6 significant digits in CSV
  text,          ///< a string
  flag,          ///< a bool
  distribution,  ///< a Distribution: count mean p50 p90 p95 p99 max
};

/// A number that says what it is itself, for tables whose rows are different metrics
/// (diff's totals: a time, a percent, a count in one column).
struct Typed {
  Kind kind = Kind::ratio;
  double value = 0;  ///< ns for Kind::us
  int decimals = -1;
  bool sign = false;
};

/// A Distribution behind a shared pointer: inline, its 56 bytes made every cell of every
/// row that large (a unit row has ~30 cells, and a kind can have 100,000 units).
class BoxedDistribution {
 public:
  BoxedDistribution(const Distribution& d) : d_(std::make_shared<const Distribution>(d)) {}  // NOLINT: implicit, as a cell
  const Distribution& operator*() const { return *d_; }
  const Distribution* operator->() const { return d_.get(); }

 private:
  std::shared_ptr<const Distribution> d_;
};

/// Missing (empty CSV field, "-" in tables, null in JSON), or the value. 40 bytes.
using Value = std::variant<std::monostate, int64_t, double, std::string, bool, BoxedDistribution, Typed>;

/// Convenience constructors so rows read like the data they hold.
inline Value count(uint64_t n) { return static_cast<int64_t>(n); }
inline Value ns(int64_t v) { return v; }
inline Value text(std::string s) { return s; }

struct Column {
  std::string key;           ///< JSON key inside its group, CSV header part
  std::string header;        ///< table and Markdown header; empty: the key
  Kind kind = Kind::text;
  std::string group;         ///< JSON object the key sits in within a row ("a"), empty: none
  int decimals = -1;         ///< tables: digits after the point (-1: 3 for µs/ratio, 1 for %)
  bool sign = false;         ///< tables: always a sign ("+0.4"), and never "-0.0"
  bool plain = false;        ///< a distribution of plain numbers (not ns), its parts headed plainly
  /// With plain: the parts are times in ns after all, written as µs (exact decimals), under
  /// plain headers (gaps: its keys say _us themselves).
  bool ns_values = false;
  bool bar = false;          ///< tables: a share bar after this percent
  /// Fitting a narrow terminal: columns are dropped highest rank first; 0 is never dropped.
  int drop_rank = 0;
  bool in_json = true;       ///< JSON, CSV, TSV (false: a view for people, e.g. "FAILED")
  bool in_text = true;       ///< tables and Markdown (false: machine formats only)
  bool right = false;        ///< tables: align a text column right (numbers already are)
  /// Tables split to fit a terminal repeat it in every block, with the first column: a
  /// number that says what a row is (a stage) as a name does.
  bool identifies = false;

  Column() = default;
  Column(std::string k, Kind kd) : key(std::move(k)), kind(kd) {}
  // Chained setters, so a declaration reads as one line: Column("wait_us", Kind::us).rank(3)
  Column& titled(std::string h) { return header = std::move(h), *this; }
  Column& in(std::string g) { return group = std::move(g), *this; }
  Column& places(int d) { return decimals = d, *this; }
  Column& signed_() { return sign = true, *this; }
  Column& with_bar() { return bar = true, *this; }
  Column& rank(int r) { return drop_rank = r, *this; }
  Column& plain_numbers() { return plain = true, *this; }
  Column& plain_headed_ns() { return plain = ns_values = true, *this; }
  Column& people_only() { return in_json = false, *this; }
  Column& data_only() { return in_text = false, *this; }
  Column& right_aligned() { return right = true, *this; }
  Column& identifying() { return identifies = true, *this; }

  /// The CSV header and --columns key: group.key (a distribution adds ".count" and so on).
  std::string path() const { return group.empty() ? key : group + "." + key; }
};

/// The parts a distribution expands to, in every format, in this order.
extern const char* const kDistributionParts[7];  ///< count mean p50 p90 p95 p99 max

using Row = std::vector<Value>;

struct Table {
  std::string key;                 ///< JSON key of the array of rows
  std::string group;               ///< JSON object the array sits in ("baseline"), empty: top level
  std::string title;               ///< a heading line above it in tables and Markdown ("" none)
  std::string note;                ///< a line below it for people (a footnote), "" none
  std::vector<Column> columns;
  std::vector<Row> rows;
  std::vector<std::string> colors; ///< per row, "#RRGGBB" or "" (share bars on a TTY)
  /// A table whose rows belong to rows of the table before it (stats' histograms, gaps'
  /// stages): JSON nests them as an array under their parent row; other formats print
  /// them as a table of their own.
  bool nested = false;
  std::vector<std::size_t> parent;  ///< nested: each row's parent row index
  bool checklist = false;           ///< gates: Markdown writes "- [x] expr" lines
  bool in_json = true;              ///< false: a view for people only (its data is in fields)
  bool in_text = true;              ///< false: JSON only
  /// Rows made as they are read, for tables of a row per lane, kind or unit: held as
  /// cells, a million lanes' rows took 160 bytes each (and a unit's shares of 5,000
  /// categories, nearly all 0%, 5.4 GB for 20,000 units). When set, `rows` stays empty and the table has
  /// made_rows rows, row r made by make_row(r, row); what it reads must outlive the table.
  std::function<void(std::size_t r, Row& row)> make_row;
  std::size_t made_rows = 0;

  Table() = default;
  explicit Table(std::string k, std::string t = "") : key(std::move(k)), title(std::move(t)) {}

  std::size_t add_column(Column c) {
    columns.push_back(std::move(c));
    return columns.size() - 1;
  }
  std::size_t row_count() const { return make_row ? made_rows : rows.size(); }
  /// Row r with every column: rows[r] itself, or the row make_row makes in scratch.
  const Row& row(std::size_t r, Row& scratch) const;
};

/// A named scalar of the document (the stats line) or a list of them (range_us).
struct Field {
  std::string key;
  std::string label;        ///< the stats line's name; empty: JSON only
  Kind kind = Kind::text;
  Value value;
  std::vector<Value> list;  ///< non-empty: a JSON array of these instead of value
  std::string group;        ///< JSON object the field sits in ("a" in diff), empty: top level
  int decimals = -1;
  bool plain = false;       ///< a distribution of plain numbers (not ns)
  bool ns_values = false;   ///< as Column::ns_values

  Field() = default;
  Field(std::string k, Kind kd, Value v) : key(std::move(k)), kind(kd), value(std::move(v)) {}
  Field& labelled(std::string l) { return label = std::move(l), *this; }
  Field& in(std::string g) { return group = std::move(g), *this; }
  Field& places(int d) { return decimals = d, *this; }
  Field& plain_numbers() { return plain = true, *this; }
  Field& plain_headed_ns() { return plain = ns_values = true, *this; }
};

/// One result: scalars and tables in the order JSON writes them.
struct Document {
  std::string schema;                          ///< "jqtrace/stats/1"
  std::string heading;                         ///< the first line for people: file and scope
  std::vector<std::variant<Field, Table>> items;
  /// The table CSV and TSV write (they have one header row); -1: the first table in JSON.
  int delimited_table = -1;

  Field& add(Field f) { return std::get<Field>(items.emplace_back(std::move(f))); }
  Table& add(Table t) { return std::get<Table>(items.emplace_back(std::move(t))); }
  /// The table CSV/TSV write, or nullptr when there is none.
  const Table* delimited() const;
  /// Every table, in order.
  std::vector<const Table*> tables() const;
};

}  // namespace jqtrace::result
