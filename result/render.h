#pragma once
// The renderers: the only code that turns a Document's numbers into text. Each writes the
// whole document as one string, and those whose tables can have a row per lane (table,
// CSV, TSV, JSON, Markdown) also a piece at a time.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model.h"

namespace jqtrace::result {

/// One printable column of a table: a column, or one part of a distribution column.
struct Leaf {
  std::size_t column = 0;
  int part = -1;  ///< index into kDistributionParts, -1 for a plain column
};

struct RenderOptions {
  bool color = false;       ///< ANSI colors (bold heading, colored share bars)
  bool utf8 = false;        ///< block-character bars instead of '#'
  std::size_t width = 0;    ///< fit tables into this many terminal columns; 0: never cut
  /// --wide: fitting keeps every column and every part of a distribution, and only splits
  /// a table into blocks that each fit.
  bool wide = false;
  /// --columns: only these leaves of the main table (Document::delimited), in this order;
  /// table and Markdown then show the heading, the stats line and that table alone.
  std::vector<std::string> columns;
  /// CSV and TSV: text cells as they are, formula characters and all (--csv-raw); else
  /// spreadsheet_text() guards them.
  bool csv_raw = false;
};

/// The leaves a table prints in every format, in declared order.
std::vector<Leaf> all_leaves(const Table& t);
/// A leaf's key: the column's path, and for a distribution part "path.p50".
std::string leaf_path(const Table& t, const Leaf& leaf);

/// The leaves named by keys (a distribution's path selects all its parts). False with the
/// message "unknown column 'x' (did you mean 'y'?); columns: ..." for a key it lacks.
bool select_leaves(const Table& t, const std::vector<std::string>& keys, std::vector<Leaf>* leaves,
                   std::string* error);

/// Where a renderer hands over its text a piece at a time, in order, instead of returning
/// it whole (the CSV of 20,000 units over 5,000 categories is 600 MB).
using TextSink = std::function<void(std::string_view)>;

/// Aligned text for people: heading, the stats line, each table under its title.
std::string render_table(const Document& doc, const RenderOptions& options);
/// The same, a piece of about a megabyte at a time (a table of a million lanes is 32 MB).
void render_table_to(const Document& doc, const RenderOptions& options, const TextSink& sink);
/// The main table as CSV (separator ',') or TSV ('\t'): one header row of leaf paths.
std::string render_delimited(const Document& doc, char separator, const RenderOptions& options);
/// The same, a piece of about a megabyte at a time.
void render_delimited_to(const Document& doc, char separator, const RenderOptions& options, const TextSink& sink);
/// The whole document as one JSON object with its "schema" key first.
std::string render_json(const Document& doc);
/// The same, a piece of about a megabyte at a time.
void render_json_to(const Document& doc, const TextSink& sink);
/// GitHub-flavoured Markdown: a heading, the stats line as a list, tables, gates as a checklist.
std::string render_markdown(const Document& doc, const RenderOptions& options);
/// The same, a piece of about a megabyte at a time.
void render_markdown_to(const Document& doc, const RenderOptions& options, const TextSink& sink);

/// The document's stats line and tables as HTML fragments (a <dl>, <table>s with sortable
/// headers, checklists as <ul class="gates">), for the report: the same cells as the table
/// format.
std::string render_html_fragment(const Document& doc);

/// text for XML, SVG and HTML text and attributes: the five special characters escaped,
/// valid UTF-8, and no control characters but tab and line ends (XML 1.0 allows no others).
std::string xml_escape(std::string_view text);

/// Terminal columns a UTF-8 text takes: wide (CJK, emoji) characters two, combining marks
/// and ANSI color sequences none.
std::size_t display_width(std::string_view text);
/// text cut to at most width display columns, ending in "…" when it was cut.
std::string truncate_to_width(std::string_view text, std::size_t width);

}  // namespace jqtrace::result
