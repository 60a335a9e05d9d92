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
  // std::to_chars, not fmt: the same correctly rounded digits (checked on 53 million
  // values, ties included) for a tenth of the instructions; a column of a million
  // percentages took 1,500 a cell.
  char buf[512];
  char* at = buf;
  if (sign && !std::signbit(v)) *at++ = '+';
  auto [end, ec] = std::to_chars(at, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) return sign ? fmt::format("{:+.{}f}", v, decimals) : fmt::format("{:.{}f}", v, decimals);
  return std::string(buf, end);
}

std::string us_fixed(double ns) {
  // A whole number of ns below 2^50 is printed exactly as its integer: ns / 1000.0 is then
  // within 1/8 ns of the exact quotient, so "{:.3f}" rounds back to it (and -0.0 keeps
  // its sign on the general path).
  if (ns == std::trunc(ns) && std::fabs(ns) < 0x1p50 && !(ns == 0 && std::signbit(ns)))
    return us_fixed(static_cast<int64_t>(ns));
  return fixed(ns / 1000.0, 3);
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
