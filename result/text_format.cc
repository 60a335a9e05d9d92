#include "text_format.h"

#include <charconv>
#include <cmath>

#include <fmt/core.h>

#include "numbers.h"

namespace jqtrace::result {

std::string delimited_field(std::string_view text, char separator) {
  if (text.find_first_of(std::string{separator, '"', '\n', '\r'}) == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string spreadsheet_text(std::string_view text) {
  if (text.empty() || std::string_view("=+-@\t\r").find(text.front()) == std::string_view::npos) return std::string(text);
  std::string guarded(1, '\'');
  guarded.append(text);
  return guarded;
}

std::string us_fixed(int64_t ns) {
  // By hand: fmt's runtime format string cost ~1,000 instructions a cell (a table of a
  // million lanes).
  uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buf[32];
  char* at = buf;
  if (ns < 0) *at++ = '-';
  at = std::to_chars(at, buf + sizeof buf, mag / 1000).ptr;
  unsigned frac = static_cast<unsigned>(mag % 1000);
  *at++ = '.';
  *at++ = static_cast<char>('0' + frac / 100);
  *at++ = static_cast<char>('0' + frac / 10 % 10);
  *at++ = static_cast<char>('0' + frac % 10);
  return std::string(buf, at);
}

std::string fixed(double v, int decimals, bool sign) {
  std::string out;
  if (sign && !std::signbit(v)) out += '+';
  append_fixed(out, v, decimals);
  return out;
}

namespace {

/// v with 0-3 decimals by integer arithmetic, where that gives std::to_chars' digits (the
/// exact value correctly rounded): v not negative, v * 10^decimals below 2^32 and not within
/// 2^-20 of a half. Below 2^32 the product is off the exact one by 2^-21 at most, so away
/// from a half both round alike and neither is a tie. False elsewhere.
bool append_fixed_quickly(std::string& out, double v, int decimals) {
  static constexpr double kScale[] = {1, 10, 100, 1000};
  if (decimals < 0 || decimals > 3 || !(v >= 0) || std::signbit(v)) return false;
  double scaled = v * kScale[decimals];
  if (scaled >= 0x1p32) return false;
  double whole = std::floor(scaled);
  if (std::fabs(scaled - whole - 0.5) < 0x1p-20) return false;
  auto n = static_cast<uint64_t>(whole) + (scaled - whole > 0.5 ? 1 : 0);
  auto unit = static_cast<uint64_t>(kScale[decimals]);
  char digits[32];
  char* at = digits + sizeof digits;
  uint64_t fraction = n % unit, integer = n / unit;
  for (int d = 0; d < decimals; ++d, fraction /= 10) *--at = static_cast<char>('0' + fraction % 10);
  if (decimals > 0) *--at = '.';
  do *--at = static_cast<char>('0' + integer % 10);
  while ((integer /= 10) != 0);
  out.append(at, digits + sizeof digits);
  return true;
}

}  // namespace

void append_fixed(std::string& out, double v, int decimals) {
  if (append_fixed_quickly(out, v, decimals)) return;
  // std::to_chars, not fmt: the same correctly rounded digits (checked on 53 million
  // values, ties included) for a tenth of the instructions; a column of a million
  // percentages took 1,500 a cell.
  char buf[512];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (ec == std::errc()) out.append(buf, end);
  else out += fmt::format("{:.{}f}", v, decimals);
}

std::string us_fixed(double ns) {
  // Three decimals of µs are whole ns: the value is rounded to a whole ns, half away from
  // zero, and that integer printed exactly. Rounding ns / 1000.0 instead decided an exact
  // half (a median of two ns, 18776.5) by the quotient's binary error, either way. (-0.0
  // and values past 2^50 ns keep the general path.)
  if (std::fabs(ns) < 0x1p50 && !(ns == 0 && std::signbit(ns))) {
    double whole = std::round(ns);
    if (whole != 0 || !std::signbit(ns)) return us_fixed(static_cast<int64_t>(whole));
  }
  return fixed(ns / 1000.0, 3);
}

std::string us_decimal(double ns) {
  if (!std::isfinite(ns)) return "";
  std::string digits = fmt::format("{:.3f}", std::fabs(ns));  // ns to the thousandth: "7953001.000"
  std::size_t point = digits.find('.');
  std::string whole = digits.substr(0, point), thousandths = digits.substr(point + 1);
  if (whole.size() < 4) whole.insert(0, 4 - whole.size(), '0');  // at least one digit of µs
  std::string text = whole.substr(0, whole.size() - 3) + "." + whole.substr(whole.size() - 3) + thousandths;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  bool negative = ns < 0 && text != "0";
  return negative ? "-" + text : text;
}

std::string fixed3(double v) { return fixed(v, 3); }

std::string TextTable::str() const {
  std::vector<std::size_t> width;
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], display_width(r[i]));
    }
  std::string out;
  for (const auto& r : rows_) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string pad(width[i] - display_width(r[i]), ' ');
      if (i) line += "  ";
      line += i < text_columns_ ? r[i] + pad : pad + r[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string delimited_row(const std::vector<std::string>& cells, char separator) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += separator;
    line += delimited_field(cells[i], separator);
  }
  return line + "\n";
}

void JsonDocument::us(std::string_view k, int64_t ns) {
  char buf[48];
  format_ns_as_us(ns, buf, sizeof buf);
  key(k);
  raw(buf);
}

void JsonDocument::us(std::string_view k, double ns) { number(k, ns / 1000.0); }

void JsonDocument::number(std::string_view k, double v) {
  key(k);
  if (!std::isfinite(v)) {
    writer_.Null();
    return;
  }
  std::string text = fmt::format("{}", v);
  raw(text);
}

}  // namespace jqtrace::result
