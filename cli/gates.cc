#include "gates.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "common.h"

namespace jqtrace::cli {

void add_gate_options(CLI::App& cmd, GateOptions& opts) {
  cmd.add_option("--fail-if", opts.fail_if, "Exit 1 when EXPR holds, e.g. 'share(ffn chain) > 40' (repeatable)")
      ->option_text("EXPR")
      ->allow_extra_args(false);
  cmd.add_option("--gate-file", opts.gate_file, "Gates, one EXPR a line ('#' comments)")->option_text("FILE");
}

bool parse_gate_options(const GateOptions& opts, std::vector<GateSource>* gates) {
  for (const std::string& text : opts.fail_if) {
    GateSource g;
    GateError e;
    if (!parse_gate(text, &g.gate, &e)) {
      print_error(fmt::format("--fail-if '{}': column {}: {}", text, e.column, e.message));
      return false;
    }
    g.where = "--fail-if '" + text + "'";
    gates->push_back(std::move(g));
  }
  if (opts.gate_file.empty()) return true;
  std::ifstream in(opts.gate_file, std::ios::binary);
  if (!in) {
    print_error(fmt::format("{}: cannot open: {}", opts.gate_file, std::strerror(errno)));
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  if (!parse_gate_file(opts.gate_file, text.str(), gates, &error)) {
    print_error(error);
    return false;
  }
  return true;
}

bool evaluate_gates(const std::vector<GateSource>& gates, const MetricSet& metrics, std::vector<GateResult>* results) {
  for (const GateSource& g : gates) {
    GateResult r;
    r.gate = g.gate;
    GateError e;
    if (!metrics.lookup(g.gate, &r.value, &e)) {
      // A file gate is FILE:LINE:COL; a --fail-if one names the option and the column.
      if (g.line) print_error(fmt::format("{}:{}: {}", g.where, e.column, e.message));
      else print_error(fmt::format("{}: column {}: {}", g.where, e.column, e.message));
      return false;
    }
    r.tripped = holds(r.value, g.gate.op, g.gate.threshold);
    results->push_back(std::move(r));
  }
  for (const GateResult& r : *results)
    if (r.tripped) print_error("gate failed: " + describe(r));
  return true;
}

bool any_tripped(const std::vector<GateResult>& results) {
  for (const GateResult& r : results)
    if (r.tripped) return true;
  return false;
}

void json_gates(JsonDocument& doc, const std::vector<GateResult>& results) {
  doc.key("gates");
  doc.w().StartArray();
  for (const GateResult& r : results) {
    doc.w().StartObject();
    doc.field("expr", r.gate.text);
    doc.number("value", r.value);
    doc.field("ok", !r.tripped);
    doc.w().EndObject();
  }
  doc.w().EndArray();
}

std::string gates_table(const std::vector<GateResult>& results) {
  TextTable t(2);
  t.row({"gate", "status", "value"});
  for (const GateResult& r : results)
    t.row({r.gate.text, r.tripped ? "FAILED" : "ok", format_gate_value(r.value, r.gate)});
  return t.str();
}

}  // namespace jqtrace::cli
