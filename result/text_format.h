#pragma once
// Small writers shared by the renderers: RFC 4180 fields and a JSON document builder.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/prettywriter.h>

namespace jqtrace::result {

/// One CSV/TSV field, quoted per RFC 4180 when it holds the separator, a quote or a line end.
std::string delimited_field(std::string_view text, char separator);

/// Microseconds with exactly three decimals, from integer ns (exact) or fractional ns (rounded
/// to a whole ns, half away from zero).
std::string us_fixed(int64_t ns);
std::string us_fixed(double ns);
/// JSON's µs of a time held in ns as a double: its decimal to the thousandth of a ns, the
/// trailing zeros dropped ("7953.001", "-0.098", "12.0005"), not the nearest double's
/// shortest form of ns / 1000 after arithmetic ("7953.00100000002"); non-finite: "".
std::string us_decimal(double ns);
/// A number with three decimals (percentages, ratios).
std::string fixed3(double v);
/// A number with `decimals` decimals, correctly rounded ("{:.Nf}"); with sign, a '+' before
/// a number that is not negative ("{:+.Nf}").
std::string fixed(double v, int decimals, bool sign = false);
/// fixed(v, decimals) appended to out: no string of its own (the SVG charts write tens of
/// thousands of coordinates).
void append_fixed(std::string& out, double v, int decimals);

/// Columns a text takes on a terminal (render.cc).
std::size_t display_width(std::string_view text);

/// Rows of cells printed as aligned columns (first column left, the rest right-aligned).
class TextTable {
 public:
  /// The first `count` columns are text, aligned left; the rest are numbers, aligned right.
  explicit TextTable(std::size_t text_columns = 1) : text_columns_(text_columns) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string str() const;

 private:
  std::size_t text_columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// A text cell that a spreadsheet would run as a formula, with a leading ' (OWASP "CSV
/// Injection": a name from an unreviewed trace such as "=1+1" or "@SUM(...)" is imported
/// by Calc and Excel as a formula, and HYPERLINK or DDE payloads run the same way). Cells
/// that begin with '=', '+', '-', '@', a tab or a carriage return get it, and a spreadsheet
/// imports them as text (LibreOffice Calc 7.4 keeps the quote in the cell). Numbers never come here: a negative number stays a number.
std::string spreadsheet_text(std::string_view text);

/// Rows of cells as CSV or TSV (separator ',' or '\t'), quoted per RFC 4180.
std::string delimited_row(const std::vector<std::string>& cells, char separator);

/// RapidJSON's output stream concept over a std::string, which the document hands over
/// whole: a StringBuffer's text had to be copied out, a third copy of a large document.
struct StringOutput {
  using Ch = char;
  std::string text;
  void Put(char c) { text.push_back(c); }
  void Flush() {}
};

/// Hands text to sink and empties it once it passes `piece` bytes: output written a piece
/// at a time as it is made, not held whole.
template <typename Sink>
void hand_over_past(std::string& text, std::size_t piece, const Sink& sink) {
  if (text.size() < piece) return;
  sink(std::string_view(text));
  text.clear();
}

/// A JSON document built in memory (outputs are summaries: bounded in size).
class JsonDocument {
 public:
  JsonDocument() : writer_(out_) { writer_.SetIndent(' ', 2); }
  rapidjson::PrettyWriter<StringOutput>& w() { return writer_; }
  void key(std::string_view k) { writer_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
  void string(std::string_view v) { writer_.String(v.data(), static_cast<rapidjson::SizeType>(v.size())); }
  void field(std::string_view k, std::string_view v) { key(k), string(v); }
  void field(std::string_view k, const char* v) { key(k), string(v); }
  void field(std::string_view k, uint64_t v) { key(k), writer_.Uint64(v); }
  void field(std::string_view k, bool v) { key(k), writer_.Bool(v); }
  /// Exact microseconds from integer nanoseconds ("12.345").
  void us(std::string_view k, int64_t ns);
  /// Microseconds from fractional nanoseconds, shortest round-trip form.
  void us(std::string_view k, double ns);
  /// A double in its shortest round-trip form.
  void number(std::string_view k, double v);
  void raw(std::string_view text) { writer_.RawValue(text.data(), text.size(), rapidjson::kNumberType); }
  /// The text, ending in a newline; the document is empty afterwards.
  std::string take() {
    out_.text.push_back('\n');
    return std::move(out_.text);
  }
  /// The text so far, handed over and dropped once it passes `piece` bytes (a writer
  /// only appends, so the rest follows in the next piece).
  template <typename Sink>
  void hand_over_past(std::size_t piece, const Sink& sink) {
    jqtrace::result::hand_over_past(out_.text, piece, sink);
  }

 private:
  StringOutput out_;
  rapidjson::PrettyWriter<StringOutput> writer_;
};

}  // namespace jqtrace::result

// The commands format through these while they move to the result model.
namespace jqtrace::cli {
using namespace jqtrace::result;
}  // namespace jqtrace::cli
