// libFuzzer target: the small text grammars jqtrace reads besides traces: gate
// expressions and gate files, phase log lines, saved baseline JSON (stats --format json),
// and the jqtraceWindow record; sidecar index files; and the renderers, given the bytes as names and keys:
// every format must come out valid (JSON parses as UTF-8, no NUL anywhere).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gate.h"
#include "gate_metrics.h"
#include "phases.h"
#include "formats.h"
#include "stats_schema.h"
#include "trace_index.h"

#include <rapidjson/document.h>

using namespace jqtrace;

namespace {

/// A document whose names, keys and heading are the bytes; every format of it must be valid.
void render_everything(const std::string& bytes) {
  result::Document doc;
  doc.schema = "jqtrace/fuzz/1";
  doc.heading = bytes;
  doc.add(result::Field("file", result::Kind::text, bytes).labelled(bytes));
  result::Table t("rows", bytes);
  t.add_column(result::Column("name", result::Kind::text));
  t.add_column(result::Column(bytes, result::Kind::percent).in("share_pct").with_bar());
  t.add_column(result::Column("dur_us", result::Kind::distribution));
  t.rows.push_back({bytes, 12.5, Distribution{}});
  t.colors.push_back(bytes);
  doc.add(std::move(t));
  result::Document made = doc;  // the same rows, made as they are written
  result::Table& lazy = std::get<result::Table>(made.items.back());
  std::vector<result::Row> rows = std::move(lazy.rows);
  lazy.rows.clear();
  lazy.made_rows = rows.size();
  lazy.make_row = [&rows](std::size_t r, result::Row& row) { row = rows[r]; };
  result::RenderOptions options;
  options.utf8 = options.color = true;
  options.width = bytes.size() % 120;
  for (result::Format f : result::kDocumentFormats) {
    std::string out = result::render(doc, f, options);
    if (out.find('\0') != std::string::npos) std::abort();
    if (result::render(made, f, options) != out) std::abort();
    if (f != result::Format::json) continue;
    rapidjson::Document parsed;
    parsed.Parse<rapidjson::kParseValidateEncodingFlag>(out.c_str());
    if (parsed.HasParseError()) std::abort();
  }
}

/// The bytes as the payload of an index file with a right header, deflated when that is
/// shorter (as for a gzip trace), with a right CRC (the fuzzer could never forge either:
/// this reaches the payload's decoder), for the identity of no file.
std::string as_index_payload(std::string_view payload) {
  return index_file_bytes(FileIdentity{}, std::string(payload), Compression::gzip);
}

/// Any bytes as a sidecar index: refused, or read into an index that writes back into
/// bytes that read again.
void check_index(std::string_view bytes) {
  TraceIndex index;
  std::string why;
  if (!parse_index(bytes, &index, &why)) return;
  TraceIndex again;
  if (!parse_index(serialize_index(index, index.skeleton), &again, &why)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Gate gate;
  GateError error;
  if (parse_gate(text, &gate, &error)) {
    for (double v : {0.0, -1.0, 1e300, 41.6954}) format_gate_value(v, gate);
  }
  std::vector<GateSource> gates;
  std::string why;
  parse_gate_file("g.txt", text, &gates, &why);
  PhaseLog log;
  PhaseLogError phase_error;
  std::size_t line_number = 0, start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    log.add_line(text.substr(start, end - start), ++line_number, &phase_error);
    start = end + 1;
  }
  log.summarize(QuantileMethod::inclusive);
  log.summarize(QuantileMethod::exclusive);
  BaselineShares shares;
  result::read_stats_json(text, &shares, &why);
  render_everything(std::string(text));
  check_index(text);
  check_index(as_index_payload(text));
  return 0;
}
