// jqtrace phases LOG...: read phase attribution lines → per tag and phase → render, gates.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "gates.h"
#include "load.h"
#include "phases.h"
#include "phases_schema.h"
#include "scope_options.h"
#include "suggest.h"

namespace jqtrace::cli {
namespace {

struct PhasesCommandOptions {
  CommonOptions common;
  std::string tag;
  std::string quantiles;
  GateOptions gates;
  std::vector<std::string> logs;
};

/// "a JSON trace" or "a compressed file" when a log's first line says it is one, else "".
std::string_view not_a_log(std::string_view first_line) {
  if (first_line.substr(0, 3) == "\xEF\xBB\xBF") first_line.remove_prefix(3);  // a UTF-8 byte order mark
  std::size_t start = first_line.find_first_not_of(" \t\r");
  if (start != std::string_view::npos && (first_line[start] == '{' || first_line[start] == '[')) return "a JSON trace";
  if (first_line.substr(0, 2) == "\x1F\x8B" || first_line.substr(0, 4) == "\x28\xB5\x2F\xFD") return "a compressed file";
  return "";
}

/// Feeds one log (or stdin) to log; kOk, or kInput after printing where it went wrong.
int read_log(const std::string& path, PhaseLog* log) {
  note_input_path(path, "the log being read");  // never an output of this run (-o, --junit)
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) {
      print_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
      return kInput;
    }
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string line;
  PhaseLogError error;
  uint64_t bursts_before = log->bursts();
  std::string_view looks_like;  // what the first line says the file is, when not a log
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (number == 1) looks_like = not_a_log(line);
    if (!log->add_line(line, number, &error)) {
      print_error(fmt::format("{}:{}:{}: {}", display_name(path), error.line, error.column, error.message));
      return kInput;
    }
  }
  if (in.bad()) {
    print_error(fmt::format("{}: read error: {}", display_name(path), std::strerror(errno)));
    return kInput;
  }
  if (log->bursts() == bursts_before && !looks_like.empty()) {
    print_error(fmt::format("{}: {}, not a phase log: phases reads the '[TAG] rounds=...' lines a program prints; "
                            "for a trace use jqtrace stats (or markers, gaps, latency)",
                            display_name(path), looks_like));
    return kInput;
  }
  return kOk;
}

int run_phases(const PhasesCommandOptions& o) {
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, o.common.output, &gates)) return kUsage;
  PhaseLog log;
  for (const std::string& path : o.logs)
    if (int status = read_log(path, &log)) return status;
  if (!o.tag.empty() && !log.has_tag(o.tag)) {
    std::string near = closest_match(o.tag, log.tags());
    print_error(fmt::format("no '[{}] rounds=' lines{}", o.tag, near.empty() ? "" : "; did you mean '" + near + "'?"));
    return kUsage;
  }
  std::vector<TagStats> tags = log.summarize(quantile_method(o.quantiles), o.tag);
  if (tags.empty()) print_warning(o.common, "no phase lines ('[TAG] rounds=...') in the input");
  std::vector<GateResult> results;
  if (!gates.empty() && !evaluate_gates(gates, phase_metrics(tags), &results)) return kUsage;
  const std::vector<GateResult>* gated = gates.empty() ? nullptr : &results;
  if (int status = write_junit(o.gates, "phases", gates, gated)) return status;
  if (int status = write_document(result::phases_document(tags, quantile_method(o.quantiles), gated), o.common,
                                  "phases"))
    return status;
  return any_tripped(results) ? kCheckFailed : kOk;
}

}  // namespace

void setup_phases(CLI::App& app) {
  auto opts = std::make_shared<PhasesCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("phases", "Per-phase totals, shares and per-round times from '[TAG] rounds=...' log lines");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  cmd->add_option("--tag", opts->tag, "Only lines with this tag")->option_text("TAG");
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  add_gate_options(*cmd, opts->gates, false);
  cmd->add_option("LOG", opts->logs, "Log files (- or none: standard input); other lines are ignored");
  cmd->footer("Examples:\n  jqtrace phases --tag glm5-phase run.log\n  jqtrace phases --fail-if 'share(verify) > 70' run.log");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->logs, "phases")) throw CommandDone{kUsage};
    throw CommandDone{run_phases(*opts)};
  });
}

}  // namespace jqtrace::cli
