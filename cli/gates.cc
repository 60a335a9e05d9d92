#include "gates.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "common.h"
#include "load.h"
#include "render.h"

namespace jqtrace::cli {

void add_gate_options(CLI::App& cmd, GateOptions& opts, bool on_traces) {
  cmd.add_option("--fail-if", opts.fail_if, "Exit 1 when EXPR holds, e.g. 'share(ffn chain) > 40' (repeatable)")
      ->option_text("EXPR")
      ->allow_extra_args(false);
  cmd.add_option("--gate-file", opts.gate_file, "Gates, one EXPR a line ('#' comments)")->option_text("FILE");
  cmd.add_option("--junit", opts.junit,
                 "Also write the gates as JUnit XML (a testcase a gate) for a CI's test view (- : standard output, "
                 "when -o takes the data)")
      ->option_text("FILE")
      ->check([](const std::string& path) { return path.empty() ? std::string("an empty path: name the XML file") : std::string(); });
  if (on_traces)
    cmd.add_flag("--allow-truncated", opts.allow_truncated,
               "Check gates and baselines on a truncated trace too (else they fail with exit 1)");
}

namespace {

/// What a cut-off trace lost: the profile jobque writes after the events, and every lane
/// after the last one read (the caller lane is written last).
std::string what_is_missing(const Trace& trace) {
  std::string missing;
  if (trace.jobque && !trace.profile.present)
    missing = "the jobqueProfile (categories fall back to the legacy names), ";
  if (!trace.lanes.empty()) {
    std::size_t last = trace.lanes.size() - 1;
    std::string name(trace.thread_name(last));
    missing += fmt::format("every lane written after lane {}{}", trace.lane_label(last),
                           name.empty() ? "" : " '" + name + "'");
    if (trace.jobque) missing += " (jobque writes the caller lane last)";
  } else {
    missing += "every event";
  }
  return missing;
}

}  // namespace

bool complete_enough_to_check(const Trace& trace, const std::string& path, const GateOptions& opts) {
  if (trace.read.status != ReadStatus::truncated) return true;
  std::string cut = fmt::format("{} after {} events; missing: {}", truncation_text(path, trace.read),
                                trace.read.events, what_is_missing(trace));
  if (opts.allow_truncated) {
    fmt::print(stderr, "warning: {}; gates checked anyway (--allow-truncated)\n", cut);
    return true;
  }
  print_error(fmt::format("{}; gates and baselines are not checked on a cut-off trace (exit 1; "
                          "--allow-truncated checks them anyway)",
                          cut));
  return false;
}

bool scope_checkable(const Scope& scope, const std::string& path) {
  // A window of units cut by a guess is that guess too (its record says so).
  if (scope.window && scope.kind == ScopeRequest::Kind::whole && scope.rule.ambiguous) {
    print_error(fmt::format("{}: a window of '{}' units: {}; gates and baselines are not checked in units cut by a "
                            "guess",
                            display_name(path), scope.marker_kind, ambiguous_units_text(scope.marker_kind, scope.rule)));
    return false;
  }
  if (scope.kind != ScopeRequest::Kind::marker) return true;
  if (scope.range.length() == 0) {
    print_error(fmt::format("{}: {} is an empty unit (0 us); gates and baselines are not checked on nothing",
                            display_name(path), scope.label_without_unit_at()));
    return false;
  }
  if (!scope.rule.ambiguous) return true;
  print_error(fmt::format("{}: {}; gates and baselines are not checked in units cut by a guess", display_name(path),
                          ambiguous_units_text(scope.marker_kind, scope.rule)));
  return false;
}

bool parse_gate_options(const GateOptions& opts, const std::string& data_output, std::vector<GateSource>* gates) {
  if (opts.junit == "-" && (data_output.empty() || data_output == "-")) {
    print_error("--junit -: standard output carries the data; write the XML to a file, or the data elsewhere with -o");
    return false;
  }
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
  note_input_path(opts.gate_file, "the gate file being read");  // never an output of this run (-o, --junit)
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

void add_inconclusive_option(CLI::App& cmd, GateOptions& opts) {
  cmd.add_option("--inconclusive", opts.inconclusive,
                 "What a gate whose interval straddles its threshold counts as: pass or fail (default: neither, "
                 "exit 2 saying so)")
      ->check(CLI::IsMember({"pass", "fail"}))
      ->option_text("pass|fail");
}

namespace {

/// What would let an undecided gate judge: the interval narrows with more units.
constexpr const char* kWhatHelps =
    "more runs a side (--vs) or a kind with more units would narrow it; --inconclusive pass|fail decides such gates";

}  // namespace

bool evaluate_gates(const std::vector<GateSource>& gates, const MetricSet& metrics, std::vector<GateResult>* results,
                    const GateOptions* opts) {
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
    const MetricInterval* interval = metrics.interval(g.gate);
    r.has_interval = interval != nullptr;
    if (interval) r.interval = *interval;
    r.verdict = judge(g.gate, r.value, interval);
    if (r.verdict == Verdict::cannot_judge && opts && !opts->inconclusive.empty()) {
      r.inconclusive = true;
      r.verdict = opts->inconclusive == "fail" ? Verdict::fail : Verdict::pass;
    }
    r.detail = metrics.explanation(g.gate);
    results->push_back(std::move(r));
  }
  for (const GateResult& r : *results) {
    std::string line = outcome_line(r);
    if (r.verdict == Verdict::cannot_judge) print_error("gate " + line + "; " + kWhatHelps);
    else if (r.tripped()) print_error(line);
    else if (!line.empty()) fmt::print(stderr, "warning: {}\n", line);  // passed by --inconclusive pass
  }
  return true;
}

int gates_status(const std::vector<GateResult>& results) {
  if (any_tripped(results)) return kCheckFailed;
  bool undecided = std::any_of(results.begin(), results.end(),
                               [](const GateResult& r) { return r.verdict == Verdict::cannot_judge; });
  return undecided ? kUsage : kOk;
}

bool any_tripped(const std::vector<GateResult>& results) {
  for (const GateResult& r : results)
    if (r.tripped()) return true;
  return false;
}

int write_junit(const GateOptions& opts, std::string_view command, const std::vector<GateSource>& gates,
                const std::vector<GateResult>* results) {
  if (opts.junit.empty() || gates.empty()) return kOk;
  using result::xml_escape;
  auto counted = [&](Verdict v) {
    return results ? std::count_if(results->begin(), results->end(), [v](const GateResult& r) { return r.verdict == v; })
                   : 0;
  };
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format(
      "<testsuites><testsuite name=\"jqtrace {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
      command, gates.size(), counted(Verdict::fail), results ? 0 : gates.size(), counted(Verdict::cannot_judge));
  for (std::size_t i = 0; i < gates.size(); ++i) {
    xml += fmt::format("<testcase classname=\"jqtrace.{}\" name=\"{}\"", command, xml_escape(gates[i].gate.text));
    if (!results) {  // complete_enough_to_check refused the trace
      xml += "><error message=\"not checked: the trace is cut off (--allow-truncated checks it anyway)\"/></testcase>\n";
      continue;
    }
    const GateResult& r = (*results)[i];
    std::string detail = r.detail.empty() ? "" : " (" + r.detail + ")";
    if (r.verdict == Verdict::cannot_judge) {  // neither passed nor failed: a skipped test, and why
      xml += fmt::format("><skipped message=\"{}\"/></testcase>\n", xml_escape(outcome_line(r)));
    } else if (r.tripped()) {
      xml += fmt::format("><failure message=\"{0}\">{0}</failure></testcase>\n", xml_escape(outcome_line(r)));
    } else {  // "idle = 66.6 < 10" would read as if it held: the value, then what would fail it
      std::string line = fmt::format("passed{}: {} = {} (fails when {}){}",
                                     r.inconclusive ? " (--inconclusive pass)" : "", r.gate.metric_label(),
                                     format_gate_value(r.value, r.gate), r.gate.text, detail);
      xml += fmt::format("><system-out>{}</system-out></testcase>\n", xml_escape(line));
    }
  }
  xml += "</testsuite></testsuites>\n";
  // Written as -o is: never over a trace being read, under a temporary name renamed into place.
  CommonOptions target;
  target.output = opts.junit;
  int status = kInput;
  auto out = Output::open(target, &status, "--junit");
  if (!out) return status;
  std::fwrite(xml.data(), 1, xml.size(), out->file());
  return out->close() ? kOk : out->failure_status();
}

}  // namespace jqtrace::cli
