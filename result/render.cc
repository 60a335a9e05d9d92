#include "render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include <fmt/core.h>
#include <fmt/format.h>

#include "numbers.h"
#include "suggest.h"
#include "text_format.h"
#include "utf8.h"

namespace jqtrace::result {
namespace {

/// The machine formats hand their text to a TextSink in pieces of about this size.
constexpr std::size_t kPieceBytes = 1 << 20;

// ---------------------------------------------------------------------------------------
// Cells: one function per format family decides how a value reads.

enum class Style { people, delimited };

/// Text as every format must write it: valid UTF-8 (names are repaired when they are read;
/// this keeps any other string, from any caller, from making a JSON file invalid).
std::string valid_utf8(const std::string& s) { return clean_utf8(s) ? s : with_escapes(s); }

/// Control characters would move the cursor or end a row: tables show U+FFFD instead.
std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t copied = 0;  // s[copied, i) is printable and not yet in out: copied in runs
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x20 && u != 0x7f) continue;
    out.append(s.substr(copied, i - copied));
    out += "\uFFFD";
    copied = i + 1;
  }
  out.append(s.substr(copied));
  return out;
}

/// Text reads from the left; numbers, flags and a distribution's parts line up on the right.
bool left_aligned(const Column& c, const Leaf& leaf) { return c.kind == Kind::text && !c.right && leaf.part < 0; }

int decimals_for(const Column& c) {
  if (c.decimals >= 0) return c.decimals;
  return c.kind == Kind::percent ? 1 : 3;
}

std::string number_text(double v, const Column& c, Style style) {
  if (!std::isfinite(v)) return style == Style::people ? "-" : "";
  if (c.kind == Kind::us) return us_fixed(v);
  if (c.kind == Kind::probability) {  // small p values must not round to 0
    char buf[32];
    const char* format = style == Style::delimited ? "%.6g" : v != 0 && v < 0.001 ? "%.1e" : "%.3f";
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
  }
  if (style == Style::delimited) return fixed3(v);
  int decimals = decimals_for(c);
  if (c.sign && std::fabs(v) < 0.5 * std::pow(10.0, -decimals)) v = 0;  // +0.0, not -0.0
  std::string text = fixed(v, decimals, c.sign);
  return c.kind == Kind::percent ? text + "%" : text;
}

double part_value(const Distribution& d, int part) {
  const double values[] = {static_cast<double>(d.count), d.mean, d.p50, d.p90, d.p95, d.p99, d.max};
  return values[part];
}

std::string cell_text(const Value& v, const Column& c, int part, Style style) {
  const std::string missing = style == Style::people ? "-" : "";
  if (const auto* typed = std::get_if<Typed>(&v)) {
    Column own = c;
    own.kind = typed->kind;
    own.decimals = typed->decimals;
    own.sign = typed->sign;
    return number_text(typed->value, own, style);
  }
  if (const auto* boxed = std::get_if<BoxedDistribution>(&v)) {
    const Distribution& d = **boxed;
    if (part <= 0) return std::to_string(d.count);
    if (d.count == 0) return missing;
    Column part_column = c;
    part_column.kind = c.plain && !c.ns_values ? Kind::ratio : Kind::us;
    return number_text(part_value(d, part), part_column, style);
  }
  if (std::holds_alternative<std::monostate>(v)) return missing;
  if (const auto* i = std::get_if<int64_t>(&v)) return c.kind == Kind::us ? us_fixed(*i) : std::to_string(*i);
  if (const auto* x = std::get_if<double>(&v)) return number_text(*x, c, style);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  std::string s = valid_utf8(std::get<std::string>(v));
  return style == Style::people ? printable(s) : s;
}

std::string field_text(const Field& f) {
  Column c;
  c.kind = f.kind;
  c.decimals = f.decimals;
  std::string text = cell_text(f.value, c, -1, Style::people);
  if (f.kind == Kind::us && text != "-") text += " us";
  return text;
}

/// The stats line: "events 13  busy 95.000 us  idle 62.9%".
std::vector<std::pair<std::string, std::string>> summary(const Document& doc) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : doc.items)
    if (const Field* f = std::get_if<Field>(&item); f && !f->label.empty() && f->list.empty())
      out.emplace_back(printable(valid_utf8(f->label)), field_text(*f));
  return out;
}

std::string leaf_header(const Table& t, const Leaf& leaf) {
  const Column& c = t.columns[leaf.column];
  std::string name = printable(valid_utf8(c.header.empty() ? c.key : c.header));
  if (leaf.part < 0) return name;
  // "count mean_us p50_us ...", or with a header "unit n  mean_us ...": the header names
  // the distribution once, so that the parts stay narrow.
  if (leaf.part == 0) return c.header.empty() ? "count" : name + " n";
  return std::string(kDistributionParts[leaf.part]) + (c.plain ? "" : "_us");
}

/// The leaves a format shows: the --columns selection for the main table, else every leaf
/// the format carries.
std::vector<Leaf> shown_leaves(const Document& doc, const Table& t, const RenderOptions& options, bool people) {
  if (!options.columns.empty() && &t == doc.delimited()) {
    std::vector<Leaf> leaves;
    std::string ignored;
    if (select_leaves(t, options.columns, &leaves, &ignored)) return leaves;
  }
  std::vector<Leaf> out;
  for (const Leaf& l : all_leaves(t)) {
    const Column& c = t.columns[l.column];
    if (people ? c.in_text : c.in_json) out.push_back(l);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Aligned tables.

constexpr std::size_t kBarWidth = 20;

/// One printed column of a table: a leaf, or the share bar after a percent leaf.
struct GridColumn {
  std::string header;
  bool left = false;      ///< text columns align left
  int drop_rank = 0;
  bool bar = false;       ///< a share bar column (shrinks when fitting)
  std::size_t width = 0;  ///< display columns: the widest cell, the header's included
  std::size_t leaf = 0;   ///< index into Grid::leaves (a bar shares its number's)
  bool identity = false;  ///< says what a row is: repeated in every block of a split table
  bool named = false;     ///< a distribution's part whose header also names it ("wall_us p50")
};

/// How a table prints: its columns, those still shown after fitting the terminal (in
/// blocks of at most the terminal's width, each repeating the identity columns), and the
/// cut of a text column too wide for it. Cells are not kept: they are made from the rows
/// when measured and again when written (kept as text, a table of a million rows, a lane
/// each, took 120 bytes a row).
struct Grid {
  const Table* table = nullptr;
  std::vector<Leaf> leaves;
  std::vector<GridColumn> columns;  ///< every column, in order
  std::vector<std::size_t> shown;   ///< indices into columns, in order
  std::vector<std::vector<std::size_t>> blocks;  ///< shown, split to fit; one block when it fits
  std::size_t hidden = 0;           ///< columns dropped to fit the terminal
  bool compacted = false;           ///< distributions show p50, p90 and max only
  std::size_t cut = SIZE_MAX;       ///< a column whose longer cells are cut to `keep` columns
  std::size_t keep = 0;
};

std::string share_bar_text(double pct, std::size_t width, bool utf8) {
  double cells = std::clamp(std::isfinite(pct) ? pct : 0.0, 0.0, 100.0) / 100.0 * static_cast<double>(width);
  auto full = static_cast<std::size_t>(cells);
  if (!utf8) return std::string(full, '#');
  static const char* const kEighths[] = {"", "\u258F", "\u258E", "\u258D", "\u258C", "\u258B", "\u258A", "\u2589"};
  std::string bar;
  for (std::size_t i = 0; i < full; ++i) bar += "\u2588";
  if (full < width) bar += kEighths[static_cast<int>((cells - static_cast<double>(full)) * 8)];
  return bar;
}

std::string ansi_for(std::string_view hex) {
  if (hex.size() != 7 || hex[0] != '#') return "";
  char* end = nullptr;
  std::string digits(hex.substr(1));
  unsigned long rgb = std::strtoul(digits.c_str(), &end, 16);
  if (!end || *end) return "";
  return fmt::format("\x1b[38;2;{};{};{}m", (rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF);
}

Grid make_grid(const Document& doc, const Table& t, const RenderOptions& options) {
  Grid g;
  g.table = &t;
  g.leaves = shown_leaves(doc, t, options, true);
  for (std::size_t i = 0; i < g.leaves.size(); ++i) {
    const Leaf& l = g.leaves[i];
    const Column& c = t.columns[l.column];
    // The first column and the text (or identifying) columns right after it say what a row is.
    bool identity = i == 0 || (g.columns.back().identity && (left_aligned(c, l) || c.identifies));
    g.columns.push_back({leaf_header(t, l), left_aligned(c, l), c.drop_rank, false, 0, i, identity, false});
    if (c.bar && l.part < 0) g.columns.push_back({"", true, std::max(c.drop_rank, 1), true, 0, i, false, false});
  }
  for (std::size_t i = 0; i < g.columns.size(); ++i) g.shown.push_back(i);
  return g;
}

/// Row r's cells, one for each of g.columns (fitting does not change them).
void row_cells(const Grid& g, std::size_t r, const RenderOptions& options, Row& scratch, std::vector<std::string>& cells) {
  const Table& t = *g.table;
  const Row& row = t.row(r, scratch);
  cells.clear();
  for (const Leaf& l : g.leaves) {
    const Column& c = t.columns[l.column];
    const Value& v = row[l.column];
    cells.push_back(cell_text(v, c, l.part, Style::people));
    if (!(c.bar && l.part < 0)) continue;
    const double* pct = std::get_if<double>(&v);
    std::string bar = share_bar_text(pct ? *pct : 0, kBarWidth, options.utf8);
    std::string color = options.color && r < t.colors.size() ? ansi_for(t.colors[r]) : "";
    cells.push_back(color.empty() ? bar : color + bar + "\x1b[0m");
  }
}

/// Every column's width: its header's and its widest cell's (one pass over the rows).
void measure(Grid& g, const RenderOptions& options) {
  for (GridColumn& c : g.columns) c.width = c.bar ? kBarWidth : display_width(c.header);  // bars keep their scale
  Row scratch;
  std::vector<std::string> cells;
  for (std::size_t r = 0; r < g.table->row_count(); ++r) {
    row_cells(g, r, options, scratch, cells);
    for (std::size_t i = 0; i < cells.size(); ++i) g.columns[i].width = std::max(g.columns[i].width, display_width(cells[i]));
  }
}

std::size_t width_of(const Grid& g, const std::vector<std::size_t>& columns) {
  std::size_t sum = 0;
  for (std::size_t i : columns) sum += g.columns[i].width;
  return columns.empty() ? 0 : sum + 2 * (columns.size() - 1);
}

std::size_t total_width(const Grid& g) { return width_of(g, g.shown); }

/// Stops showing the k-th shown column.
void drop_column(Grid& g, std::size_t k) {
  if (!g.columns[g.shown[k]].bar) ++g.hidden;
  g.shown.erase(g.shown.begin() + static_cast<std::ptrdiff_t>(k));
}

void stop_showing(Grid& g, std::size_t column) { g.shown.erase(std::find(g.shown.begin(), g.shown.end(), column)); }

int part_of(const Grid& g, std::size_t column) { return g.leaves[g.columns[column].leaf].part; }
/// The table column a grid column shows (a distribution's parts share it, a bar its number's).
std::size_t source_of(const Grid& g, std::size_t column) { return g.leaves[g.columns[column].leaf].column; }
bool is_count(const Grid& g, std::size_t column) { return part_of(g, column) == 0; }
bool is_integer(const Grid& g, std::size_t column) {
  return part_of(g, column) < 0 && g.table->columns[source_of(g, column)].kind == Kind::integer;
}

/// What hides nothing a person could not read elsewhere in the row: a text column equal in
/// every row to a later one (a key that is its name), and a distribution's count equal in
/// every row to an earlier count (the classes' n, once). Not on an empty table.
void hide_repeats(Grid& g, const RenderOptions& options) {
  if (g.table->row_count() == 0) return;
  struct Pair {
    std::size_t hidden, kept;
    bool equal = true;
  };
  std::vector<Pair> pairs;
  for (std::size_t a = 0; a < g.shown.size(); ++a)
    for (std::size_t b = a + 1; b < g.shown.size(); ++b) {
      std::size_t i = g.shown[a], j = g.shown[b];
      bool texts = g.columns[i].left && !g.columns[i].bar && g.columns[j].left && !g.columns[j].bar;
      if (texts) pairs.push_back({i, j});
      if (is_count(g, j) && (is_count(g, i) || is_integer(g, i))) pairs.push_back({j, i});
    }
  if (pairs.empty()) return;
  Row scratch;
  std::vector<std::string> cells;
  for (std::size_t r = 0; r < g.table->row_count(); ++r) {
    row_cells(g, r, options, scratch, cells);
    for (Pair& p : pairs) p.equal = p.equal && cells[p.hidden] == cells[p.kept];
  }
  for (const Pair& p : pairs)
    if (p.equal && std::count(g.shown.begin(), g.shown.end(), p.hidden) && std::count(g.shown.begin(), g.shown.end(), p.kept))
      stop_showing(g, p.hidden);
}

/// Column i's header names its distribution too ("wall_us p50", not "p50"): the first part
/// shown of it, or the first in a block.
void name_the_part(Grid& g, std::size_t i) {
  if (g.columns[i].named) return;
  g.columns[i].named = true;
  const Column& c = g.table->columns[source_of(g, i)];
  g.columns[i].header = printable(valid_utf8(c.header.empty() ? c.key : c.header)) + " " + g.columns[i].header;
  g.columns[i].width = std::max(g.columns[i].width, display_width(g.columns[i].header));
}

/// Distributions keep the parts a person reads first: p50, p90 and max (and the count
/// hide_repeats left).
void compact_distributions(Grid& g) {
  std::vector<std::size_t> kept;
  for (std::size_t i : g.shown) {
    int part = part_of(g, i);
    if (part == 1 || part == 4 || part == 5) {
      g.compacted = true;
      continue;
    }
    kept.push_back(i);
  }
  g.shown = kept;
}

/// A distribution whose count is not shown names itself on the first part that is.
void name_first_parts(Grid& g) {
  for (std::size_t k = 0; k < g.shown.size(); ++k) {
    std::size_t i = g.shown[k];
    bool first_part = part_of(g, i) > 0 && (k == 0 || source_of(g, g.shown[k - 1]) != source_of(g, i));
    if (first_part) name_the_part(g, i);
  }
}

/// Cuts the widest text column of `among` that does not say what a row is (identity
/// columns are cut only when nothing else can be) with "…" by what `among` is too wide
/// (never below 8); its width is then measured again over the cut cells.
void cut_widest_text(Grid& g, const std::vector<std::size_t>& among, std::size_t width, const RenderOptions& options,
                     bool identity_too) {
  std::size_t total = width_of(g, among);
  if (total <= width) return;
  std::size_t widest = SIZE_MAX;
  for (std::size_t i : among) {
    const GridColumn& c = g.columns[i];
    if (c.left && !c.bar && (identity_too || !c.identity) && (widest == SIZE_MAX || c.width > g.columns[widest].width))
      widest = i;
  }
  if (widest == SIZE_MAX || g.columns[widest].width <= 8) return;
  GridColumn& c = g.columns[widest];
  g.cut = widest;
  g.keep = std::max<std::size_t>(8, c.width - std::min(c.width, total - width));
  c.header = truncate_to_width(c.header, g.keep);
  c.width = display_width(c.header);
  Row scratch;
  std::vector<std::string> cells;
  for (std::size_t r = 0; r < g.table->row_count(); ++r) {
    row_cells(g, r, options, scratch, cells);
    std::size_t w = display_width(cells[widest]);
    c.width = std::max(c.width, w <= g.keep ? w : display_width(truncate_to_width(cells[widest], g.keep)));
  }
}

/// The shown columns in blocks of at most width, each led by the identity columns; a
/// distribution's parts (and a share with its bar) stay in one block unless they alone
/// are too wide for one.
void split_into_blocks(Grid& g, std::size_t width) {
  std::vector<std::size_t> identity;
  for (std::size_t i : g.shown)
    if (g.columns[i].identity) identity.push_back(i);
  std::vector<std::vector<std::size_t>> groups;  // runs of shown columns of one table column
  for (std::size_t i : g.shown) {
    if (g.columns[i].identity) continue;
    if (groups.empty() || source_of(g, groups.back().back()) != source_of(g, i)) groups.emplace_back();
    groups.back().push_back(i);
  }
  std::vector<std::size_t> block = identity;
  auto add = [&](const std::vector<std::size_t>& group) {
    std::vector<std::size_t> wider = block;
    wider.insert(wider.end(), group.begin(), group.end());
    if (block.size() > identity.size() && width_of(g, wider) > width) {
      g.blocks.push_back(block);
      if (part_of(g, group.front()) > 0) name_the_part(g, group.front());
      wider = identity;
      wider.insert(wider.end(), group.begin(), group.end());
    }
    block = wider;
  };
  for (const auto& group : groups) {
    std::vector<std::size_t> alone = identity;
    alone.insert(alone.end(), group.begin(), group.end());
    if (width_of(g, alone) <= width) {
      add(group);
      continue;
    }
    for (std::size_t i : group) add({i});
  }
  g.blocks.push_back(block);
}

/// Fits a terminal of `width` columns, losing as little as it can: hides repeats, then
/// (unless --wide) shows distributions as p50, p90 and max, drops the most droppable
/// columns (highest rank, rightmost first) and cuts the widest name with "…"; what is
/// still too wide is split into blocks that each repeat what a row is.
void fit(Grid& g, std::size_t width, const RenderOptions& options) {
  auto too_wide = [&] { return width > 0 && total_width(g) > width; };
  if (!too_wide()) {
    g.blocks.push_back(g.shown);
    return;
  }
  hide_repeats(g, options);
  if (too_wide() && !options.wide) compact_distributions(g);
  name_first_parts(g);
  while (too_wide() && !options.wide) {
    std::size_t victim = SIZE_MAX;
    for (std::size_t k = 0; k < g.shown.size(); ++k) {
      int rank = g.columns[g.shown[k]].drop_rank;
      if (rank > 0 && (victim == SIZE_MAX || rank >= g.columns[g.shown[victim]].drop_rank)) victim = k;
    }
    if (victim == SIZE_MAX) break;
    drop_column(g, victim);
  }
  if (too_wide()) cut_widest_text(g, g.shown, width, options, false);
  if (!too_wide()) {
    g.blocks.push_back(g.shown);
    return;
  }
  split_into_blocks(g, width);
  // A block wider than the terminal with one group: its names are what is too long.
  std::size_t widest = 0;
  for (const auto& block : g.blocks) widest = std::max(widest, width_of(g, block));
  if (widest > width && g.cut == SIZE_MAX)
    for (auto block = g.blocks.rbegin(); block != g.blocks.rend(); ++block)  // the last of the widest
      if (width_of(g, *block) == widest) {
        cut_widest_text(g, *block, width, options, true);
        break;
      }
}

/// The table's lines (header, then a line a row) for one block of columns, handed to sink
/// a piece at a time.
void write_aligned(const Grid& g, const std::vector<std::size_t>& block, const RenderOptions& options, std::string& out,
                   const TextSink& sink) {
  // One line: cells padded to their column's width, no spaces at the end.
  auto line = [&](auto&& text_of) {
    std::size_t line_start = out.size();
    for (std::size_t k = 0; k < block.size(); ++k) {
      const GridColumn& c = g.columns[block[k]];
      std::string_view text = text_of(block[k]);
      std::size_t pad = c.width - std::min(c.width, display_width(text));
      if (k) out.append(2, ' ');
      if (!c.left) out.append(pad, ' ');
      out += text;
      if (c.left) out.append(pad, ' ');
    }
    while (out.size() > line_start && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  line([&](std::size_t i) -> std::string_view { return g.columns[i].header; });
  Row scratch;
  std::vector<std::string> cells;
  for (std::size_t r = 0; r < g.table->row_count(); ++r) {
    row_cells(g, r, options, scratch, cells);
    if (g.cut != SIZE_MAX && display_width(cells[g.cut]) > g.keep) cells[g.cut] = truncate_to_width(cells[g.cut], g.keep);
    line([&](std::size_t i) -> std::string_view { return cells[i]; });
    hand_over_past(out, kPieceBytes, sink);
  }
}

/// text's words (split at `separator`) in lines of at most width columns (0: one line).
std::string wrapped(const std::vector<std::string>& words, std::string_view separator, std::size_t width) {
  std::string out, line;
  for (const std::string& word : words) {
    std::string candidate = line.empty() ? word : line + std::string(separator) + word;
    if (width && !line.empty() && display_width(candidate) > width) {
      out += line + "\n";
      line = word;
    } else {
      line = candidate;
    }
  }
  return line.empty() ? out : out + line + "\n";
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

bool selected_only(const Document& doc, const RenderOptions& options) {
  return !options.columns.empty() && doc.delimited() != nullptr;
}

// ---------------------------------------------------------------------------------------
// JSON.

void json_value(JsonDocument& json, const Value& v, const Column& c) {
  auto& w = json.w();
  if (std::holds_alternative<std::monostate>(v)) {
    w.Null();
  } else if (const auto* i = std::get_if<int64_t>(&v)) {
    if (c.kind == Kind::us) {
      char buf[48];
      format_ns_as_us(*i, buf, sizeof buf);
      json.raw(buf);
    } else {
      w.Int64(*i);
    }
  } else if (const auto* x = std::get_if<double>(&v)) {
    if (!std::isfinite(*x)) w.Null();
    else if (c.kind == Kind::us) json.raw(us_decimal(*x));  // 7953.001, not 7953.00100000002
    else json.raw(fmt::format("{}", *x));
  } else if (const auto* b = std::get_if<bool>(&v)) {
    w.Bool(*b);
  } else if (const auto* typed = std::get_if<Typed>(&v)) {
    Column own;
    own.kind = typed->kind;
    json_value(json, typed->value, own);
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    json.string(valid_utf8(*s));
  } else {
    const Distribution& d = *std::get<BoxedDistribution>(v);
    w.StartObject();
    json.field("count", d.count);
    for (int part = 1; part < 7; ++part) {  // an empty distribution's values are null: same keys
      json.key(kDistributionParts[part]);
      Column inner;
      inner.kind = c.plain && !c.ns_values ? Kind::ratio : Kind::us;
      json_value(json, d.count ? Value{part_value(d, part)} : Value{}, inner);
    }
    w.EndObject();
  }
}

/// Writes keyed things in order, gathering those with the same group into one object at
/// the place of the group's first member.
template <typename Item, typename Write>
void json_grouped(JsonDocument& json, const std::vector<Item>& items, Write write) {
  std::vector<std::string> done;
  for (const Item& item : items) {
    const std::string& group = item.group;
    if (group.empty()) {
      write(item);
      continue;
    }
    if (std::find(done.begin(), done.end(), group) != done.end()) continue;
    done.push_back(group);
    json.key(group);
    json.w().StartObject();
    for (const Item& member : items)
      if (member.group == group) write(member);
    json.w().EndObject();
  }
}

/// Rows of each nested table by their parent row, made once per table: writing a parent
/// row looks up its children instead of scanning every child row (groups x buckets).
class NestedRows {
 public:
  explicit NestedRows(const Document& doc) : doc_(doc) {}
  const std::vector<std::size_t>& of(std::size_t table_index, std::size_t parent_row) {
    auto [it, added] = by_table_.try_emplace(table_index);
    if (added) {
      const auto& child = std::get<Table>(doc_.items[table_index]);
      for (std::size_t r = 0; r < child.row_count() && r < child.parent.size(); ++r) {
        if (it->second.size() <= child.parent[r]) it->second.resize(child.parent[r] + 1);
        it->second[child.parent[r]].push_back(r);
      }
    }
    static const std::vector<std::size_t> kNone;
    return parent_row < it->second.size() ? it->second[parent_row] : kNone;
  }

 private:
  const Document& doc_;
  std::map<std::size_t, std::vector<std::vector<std::size_t>>> by_table_;
};

void json_row(JsonDocument& json, const Document& doc, NestedRows& nested, std::size_t table_index, std::size_t row) {
  const auto& table = std::get<Table>(doc.items[table_index]);
  struct Cell {
    std::size_t index;
    std::string group;
  };
  std::vector<Cell> cells;
  for (std::size_t i = 0; i < table.columns.size(); ++i)
    if (table.columns[i].in_json) cells.push_back({i, table.columns[i].group});
  Row scratch;
  const Row& whole = table.row(row, scratch);
  json.w().StartObject();
  json_grouped(json, cells, [&](const Cell& cell) {
    const Column& c = table.columns[cell.index];
    json.key(valid_utf8(c.key));
    json_value(json, whole[cell.index], c);
  });
  // Nested tables directly after this one: their rows of this parent.
  for (std::size_t j = table_index + 1; j < doc.items.size(); ++j) {
    const Table* child = std::get_if<Table>(&doc.items[j]);
    if (!child || !child->nested) break;
    if (!child->in_json) continue;
    json.key(child->key);
    json.w().StartArray();
    for (std::size_t r : nested.of(j, row)) json_row(json, doc, nested, j, r);
    json.w().EndArray();
  }
  json.w().EndObject();
}

void json_rows(JsonDocument& json, const Document& doc, NestedRows& nested, std::size_t table_index, const TextSink& sink) {
  const auto& table = std::get<Table>(doc.items[table_index]);
  json.key(table.key);
  json.w().StartArray();
  for (std::size_t r = 0; r < table.row_count(); ++r) {
    json_row(json, doc, nested, table_index, r);
    json.hand_over_past(kPieceBytes, sink);
  }
  json.w().EndArray();
}

void json_field(JsonDocument& json, const Field& f) {
  Column c;
  c.kind = f.kind;
  c.plain = f.plain;
  c.ns_values = f.ns_values;
  json.key(valid_utf8(f.key));
  if (f.list.empty()) {
    json_value(json, f.value, c);
    return;
  }
  json.w().StartArray();
  for (const Value& v : f.list) json_value(json, v, c);
  json.w().EndArray();
}

// ---------------------------------------------------------------------------------------
// Markdown.

/// A cell's text with Markdown's inline syntax made literal: a table cell must not end at
/// a '|', start emphasis or code, or become HTML.
std::string md_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '|': case '\\': case '*': case '_': case '`': case '[': case ']': case '~': case '#':
        out += '\\';
        out += c;
        break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

/// Appends the table to out, handing out to sink a piece at a time.
void md_table(const Document& doc, const Table& t, const RenderOptions& options, std::string& out, const TextSink& sink) {
  std::vector<Leaf> leaves = shown_leaves(doc, t, options, true);
  if (!t.title.empty()) out += "**" + md_escape(valid_utf8(t.title)) + "**\n\n";
  std::string head = "|", rule = "|";
  for (const Leaf& l : leaves) {
    const Column& c = t.columns[l.column];
    head += fmt::format(" {} |", md_escape(leaf_header(t, l)));
    rule += left_aligned(c, l) ? " :--- |" : " ---: |";
  }
  out += head + "\n" + rule + "\n";
  Row scratch;
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const Row& row = t.row(r, scratch);
    std::string line = "|";
    for (const Leaf& l : leaves)
      line += fmt::format(" {} |", md_escape(cell_text(row[l.column], t.columns[l.column], l.part, Style::people)));
    out += line + "\n";
    hand_over_past(out, kPieceBytes, sink);
  }
  if (!t.note.empty()) out += "\n" + md_escape(valid_utf8(t.note)) + "\n";
}

/// A checklist table's items (gates): held or not (its flag column), and its text, "what —
/// then, the other cells" ("share(x) > 40 — ok, 41.8"), escaped by `escape`.
template <typename Escape>
std::vector<std::pair<bool, std::string>> checklist_items(const Table& t, Escape escape) {
  std::size_t flag = t.columns.size();
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].kind == Kind::flag) flag = i;
  std::vector<std::pair<bool, std::string>> items;
  Row scratch;
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const Row& row = t.row(r, scratch);
    bool held = flag < t.columns.size() && std::get_if<bool>(&row[flag]) && std::get<bool>(row[flag]);
    std::string line;
    std::size_t shown = 0;
    for (const Leaf& l : all_leaves(t)) {
      const Column& c = t.columns[l.column];
      if (!c.in_text) continue;
      std::string text = escape(cell_text(row[l.column], c, l.part, Style::people));
      line += shown == 0 ? text : shown == 1 ? " — " + text : ", " + text;
      ++shown;
    }
    items.emplace_back(held, std::move(line));
  }
  return items;
}

/// Gates: "- [x] share(x) > 40 — ok, 41.8" (held) or "- [ ] ..." (tripped).
std::string md_checklist(const Table& t) {
  std::string out;
  if (!t.title.empty()) out += "**" + md_escape(valid_utf8(t.title)) + "**\n\n";
  for (const auto& [held, text] : checklist_items(t, md_escape)) out += (held ? "- [x] " : "- [ ] ") + text + "\n";
  return out;
}

}  // namespace

std::vector<Leaf> all_leaves(const Table& t) {
  std::vector<Leaf> leaves;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].kind != Kind::distribution) {
      leaves.push_back({i, -1});
      continue;
    }
    for (int part = 0; part < 7; ++part) leaves.push_back({i, part});
  }
  return leaves;
}

std::string leaf_path(const Table& t, const Leaf& leaf) {
  std::string path = valid_utf8(t.columns[leaf.column].path());
  return leaf.part < 0 ? path : path + "." + kDistributionParts[leaf.part];
}

bool select_leaves(const Table& t, const std::vector<std::string>& keys, std::vector<Leaf>* leaves,
                   std::string* error) {
  std::vector<Leaf> all;
  for (const Leaf& l : all_leaves(t))
    if (t.columns[l.column].in_json) all.push_back(l);
  leaves->clear();
  for (const std::string& key : keys) {
    std::size_t before = leaves->size();
    for (const Leaf& l : all)
      if (leaf_path(t, l) == key || (l.part >= 0 && t.columns[l.column].path() == key)) leaves->push_back(l);
    if (leaves->size() > before) continue;
    // The word the table's header shows ("category" for stats' name, "share", "mean_us"),
    // when it names one column: a person copies it from the table.
    std::vector<Leaf> by_header;
    for (const Leaf& l : all)
      if (leaf_header(t, l) == key) by_header.push_back(l);
    if (by_header.size() == 1) {
      leaves->push_back(by_header.front());
      continue;
    }
    if (by_header.size() > 1) {
      std::vector<std::string> paths;
      for (const Leaf& l : by_header) paths.push_back(leaf_path(t, l));
      *error = fmt::format("column '{}' is the header of {}: give one of these keys", key, fmt::join(paths, ", "));
      return false;
    }
    std::vector<std::string> names;
    for (const Leaf& l : all) {
      names.push_back(leaf_path(t, l));
      if (l.part == 0) names.push_back(t.columns[l.column].path());
    }
    std::string near = closest_match(key, names);
    std::vector<std::string> paths;
    for (const Leaf& l : all) paths.push_back(leaf_path(t, l));
    std::string list = fmt::format("{}", fmt::join(paths, ","));
    *error = fmt::format("unknown column '{}'{}; the columns are {}", key,
                         near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near), list);
    return false;
  }
  return true;
}

/// The line under fitted tables that says what the terminal's width left out.
std::string fitted_note(std::size_t hidden, bool compacted, std::size_t width) {
  if (!hidden && !compacted) return "";
  std::vector<std::string> what;
  if (compacted) what.push_back("distributions show p50, p90 and max");
  if (hidden) what.push_back(fmt::format("{} column{} hidden", hidden, hidden == 1 ? "" : "s"));
  std::string text = fmt::format("({} to fit {} columns; --wide, --columns or a pipe shows {})", fmt::join(what, ", "),
                                 width, hidden ? "them" : "every part");
  std::string note(1, '\n');
  note += wrapped(split_words(text), " ", width);
  return note;
}

std::string render_table(const Document& doc, const RenderOptions& options) {
  std::string out;
  render_table_to(doc, options, [&](std::string_view piece) { out += piece; });
  return out;
}

void render_table_to(const Document& doc, const RenderOptions& options, const TextSink& sink) {
  std::string out;
  std::string_view bold = options.color ? "\x1b[1m" : "", reset = options.color ? "\x1b[0m" : "";
  // The heading (it may have several lines) and the stats line wrap at spaces to fit.
  for (std::size_t start = 0; start < doc.heading.size();) {
    std::size_t end = std::min(doc.heading.find('\n', start), doc.heading.size());
    std::string text = printable(valid_utf8(doc.heading.substr(start, end - start)));
    std::string lines = wrapped(split_words(text), " ", options.width);
    out += fmt::format("{}{}{}", bold, lines.substr(0, lines.size() - 1), reset) + "\n";
    start = end + 1;
  }
  std::vector<std::string> items;
  for (const auto& [label, value] : summary(doc)) items.push_back(label + " " + value);
  out += wrapped(items, "  ", options.width);
  bool only_main = selected_only(doc, options);
  bool written = !out.empty();
  std::size_t hidden = 0;
  bool compacted = false;
  for (const Table* t : doc.tables()) {
    if (!t->in_text || (only_main && t != doc.delimited())) continue;
    Grid g = make_grid(doc, *t, options);
    measure(g, options);
    fit(g, options.width, options);
    hidden += g.hidden;
    compacted = compacted || g.compacted;
    for (std::size_t b = 0; b < g.blocks.size(); ++b) {
      if (written) out += "\n";
      if (!t->title.empty()) out += printable(valid_utf8(t->title)) + (b ? " (continued)\n" : "\n");
      write_aligned(g, g.blocks[b], options, out, sink);
      written = true;
    }
    // A note may have lines of its own ("\n"): each is made printable apart, and wrapped
    // to a terminal's width.
    for (std::size_t from = 0; from < t->note.size();) {
      std::size_t end = std::min(t->note.find('\n', from), t->note.size());
      std::string line = printable(valid_utf8(t->note.substr(from, end - from)));
      bool too_wide = options.width && line.size() > options.width;
      out += (too_wide ? wrapped(split_words(line), " ", options.width) : line) + "\n";
      from = end + 1;
    }
  }
  out += fitted_note(hidden, compacted, options.width);
  if (!out.empty()) sink(out);
}

std::string render_delimited(const Document& doc, char separator, const RenderOptions& options) {
  std::string out;
  render_delimited_to(doc, separator, options, [&](std::string_view piece) { out += piece; });
  return out;
}

void render_delimited_to(const Document& doc, char separator, const RenderOptions& options, const TextSink& sink) {
  const Table* t = doc.delimited();
  if (!t) return;
  std::vector<Leaf> leaves = shown_leaves(doc, *t, options, false);
  // Text (names from the trace) is guarded against spreadsheets' formulas; numbers never are.
  auto guarded = [&](std::string text) { return options.csv_raw ? text : spreadsheet_text(text); };
  std::vector<std::string> header;
  for (const Leaf& l : leaves) header.push_back(guarded(leaf_path(*t, l)));
  std::string out = delimited_row(header, separator);
  Row scratch;
  std::vector<std::string> cells;
  for (std::size_t r = 0; r < t->row_count(); ++r) {
    const Row& row = t->row(r, scratch);
    cells.clear();
    for (const Leaf& l : leaves) {
      std::string cell = cell_text(row[l.column], t->columns[l.column], l.part, Style::delimited);
      cells.push_back(std::holds_alternative<std::string>(row[l.column]) ? guarded(std::move(cell)) : std::move(cell));
    }
    out += delimited_row(cells, separator);
    hand_over_past(out, kPieceBytes, sink);
  }
  if (!out.empty()) sink(out);
}

std::string render_json(const Document& doc) {
  std::string out;
  render_json_to(doc, [&](std::string_view piece) { out += piece; });
  return out;
}

void render_json_to(const Document& doc, const TextSink& sink) {
  JsonDocument json;
  json.w().StartObject();
  json.field("schema", doc.schema);
  struct Item {
    std::size_t index;
    std::string group;
  };
  std::vector<Item> items;
  for (std::size_t i = 0; i < doc.items.size(); ++i) {
    if (const Table* t = std::get_if<Table>(&doc.items[i])) {
      if (t->in_json && !t->nested) items.push_back({i, t->group});
    } else {
      items.push_back({i, std::get<Field>(doc.items[i]).group});
    }
  }
  NestedRows nested(doc);
  json_grouped(json, items, [&](const Item& item) {
    if (std::holds_alternative<Table>(doc.items[item.index])) json_rows(json, doc, nested, item.index, sink);
    else json_field(json, std::get<Field>(doc.items[item.index]));
  });
  json.w().EndObject();
  sink(json.take());
}

std::string render_markdown(const Document& doc, const RenderOptions& options) {
  std::string out;
  render_markdown_to(doc, options, [&](std::string_view piece) { out += piece; });
  return out;
}

void render_markdown_to(const Document& doc, const RenderOptions& options, const TextSink& sink) {
  std::string out;
  if (!doc.heading.empty()) {
    std::string heading = doc.heading;
    for (std::size_t at; (at = heading.find('\n')) != std::string::npos;) heading.replace(at, 1, "; ");
    out += "### " + md_escape(valid_utf8(heading)) + "\n\n";
  }
  auto line = summary(doc);
  for (const auto& [label, value] : line) out += "- **" + md_escape(label) + "** " + md_escape(value) + "\n";
  if (!line.empty()) out += "\n";
  bool only_main = selected_only(doc, options);
  bool first = true;
  for (const Table* t : doc.tables()) {
    if (!t->in_text || (only_main && t != doc.delimited())) continue;
    if (!first) out += "\n";
    first = false;
    if (t->checklist) out += md_checklist(*t);
    else md_table(doc, *t, options, out, sink);
  }
  if (!out.empty()) sink(out);
}

namespace {

/// A number's value for sorting a column (data-v), whatever its text says.
std::string sort_key(const Value& v, int part) {
  if (const auto* d = std::get_if<BoxedDistribution>(&v)) return (*d)->count ? fmt::format("{}", part_value(**d, std::max(part, 0))) : "";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* x = std::get_if<double>(&v)) return std::isfinite(*x) ? fmt::format("{}", *x) : "";
  if (const auto* t = std::get_if<Typed>(&v)) return fmt::format("{}", t->value);
  return "";
}

std::string html_table(const Document& doc, const Table& t) {
  std::vector<Leaf> leaves = shown_leaves(doc, t, {}, true);
  std::string out = t.title.empty() ? "" : "<h3>" + xml_escape(t.title) + "</h3>\n";
  out += "<div class=\"wide\"><table class=\"sortable\"><thead><tr>";
  for (const Leaf& l : leaves) {
    out += fmt::format("<th{}>{}</th>", left_aligned(t.columns[l.column], l) ? "" : " class=\"num\"",
                       xml_escape(leaf_header(t, l)));
  }
  out += "</tr></thead><tbody>\n";
  Row scratch;
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const Row& row = t.row(r, scratch);
    out += "<tr>";
    // A row with a colour (a category's) shows it as a swatch before its first cell.
    std::string swatch = r < t.colors.size() && !t.colors[r].empty()
                             ? "<span class=\"sw\" style=\"background:" + xml_escape(t.colors[r]) + "\"></span>"
                             : "";
    for (const Leaf& l : leaves) {
      const Column& c = t.columns[l.column];
      std::string key = sort_key(row[l.column], l.part);
      out += fmt::format("<td{}{}>{}{}</td>", left_aligned(c, l) ? "" : " class=\"num\"", key.empty() ? "" : " data-v=\"" + key + "\"",
                         std::exchange(swatch, std::string()), xml_escape(cell_text(row[l.column], c, l.part, Style::people)));
    }
    out += "</tr>\n";
  }
  if (t.row_count() == 0) out += fmt::format("<tr><td colspan=\"{}\" class=\"none\">none</td></tr>\n", leaves.size());
  out += "</tbody></table></div>\n";
  if (!t.note.empty()) out += "<p class=\"note\">" + xml_escape(t.note) + "</p>\n";
  return out;
}

}  // namespace

std::string render_html_fragment(const Document& doc) {
  std::string out;
  auto line = summary(doc);
  if (!line.empty()) {
    out += "<dl class=\"stats\">";
    for (const auto& [label, value] : line)
      out += "<div><dt>" + xml_escape(label) + "</dt><dd>" + xml_escape(value) + "</dd></div>";
    out += "</dl>\n";
  }
  for (const Table* t : doc.tables()) {
    if (!t->in_text) continue;
    if (!t->checklist) {
      out += html_table(doc, *t);
      continue;
    }
    out += "<ul class=\"gates\">\n";  // gates: ticked when held, crossed when tripped
    for (const auto& [held, text] : checklist_items(*t, [](const std::string& s) { return xml_escape(s); }))
      out += fmt::format("<li class=\"{}\">{}</li>\n", held ? "held" : "tripped", text);
    out += "</ul>\n";
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : valid_utf8(std::string(text))) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': case '\t': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += "\uFFFD";
        else out += c;
    }
  }
  return out;
}

std::size_t display_width(std::string_view text) {
  // Most cells are plain ASCII with no escape: a column a byte.
  if (std::all_of(text.begin(), text.end(), [](char c) { return c != 0x1b && static_cast<unsigned char>(c) < 0x80; }))
    return text.size();
  std::size_t width = 0;
  bool escape = false;
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (escape) {
      escape = c != 'm';
      ++i;
      continue;
    }
    if (c == 0x1b) {
      escape = true;
      ++i;
      continue;
    }
    std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = c < 0x80 ? c : c < 0xE0 ? c & 0x1F : c < 0xF0 ? c & 0x0F : c & 0x07;
    for (std::size_t k = 1; k < len && i + k < text.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    i += len;
    bool zero = (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x20D0 && cp <= 0x20FF) ||
                (cp >= 0xFE00 && cp <= 0xFE0F);
    bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0x33FF) ||
                (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
                (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
                (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
                (cp >= 0x1F680 && cp <= 0x1F6FF) || (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
    width += zero ? 0 : wide ? 2 : 1;
  }
  return width;
}

std::string truncate_to_width(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::string out;
  std::size_t used = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    std::string_view ch = text.substr(i, len);
    std::size_t w = display_width(ch);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
    i += len;
  }
  return out + "\u2026";
}

}  // namespace jqtrace::result
