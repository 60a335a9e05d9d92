// jqtrace validate FILE...: open → validate (streaming) → render diagnostics and counts.

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "load.h"
#include "validate_schema.h"
#include "validate.h"

namespace jqtrace::cli {
namespace {

struct ValidateOptions {
  CommonOptions common;
  std::vector<std::string> files;
  int64_t max_errors = 100;  ///< signed so that "-3" is refused, not wrapped
  bool strict = false;
};

using FileReport = result::ValidatedFile;

/// Prints each diagnostic as it is found (table) or keeps it for the result document
/// (the other formats), up to --max-errors per file.
class DiagnosticPrinter final : public DiagnosticSink {
 public:
  /// out: where the table goes (nullptr for the other formats).
  DiagnosticPrinter(const ValidateOptions& opts, Output* out, FileReport& report)
      : opts_(opts), out_(out), report_(report), palette_{out && out->color()} {}

  void report(Diagnostic d) override {
    // -q: the table lists errors only (warnings still count in the summary), unless
    // --strict makes warnings fail the file. Data formats stay complete.
    bool hidden_warning = opts_.common.quiet && !opts_.strict && d.severity == Severity::warning &&
                          opts_.common.format() == Format::table;
    if (hidden_warning) return;
    if (opts_.max_errors > 0 && shown_ >= static_cast<uint64_t>(opts_.max_errors)) {
      ++report_.omitted;
      return;
    }
    ++shown_;
    if (opts_.common.format() == Format::table) line(d);
    else report_.kept.push_back(std::move(d));
  }

 private:
  void line(const Diagnostic& d) {
    bool error = d.severity == Severity::error;
    std::string where = d.position.line ? fmt::format("{}:{}:{}", report_.file, d.position.line, d.position.column)
                                        : report_.file;
    fmt::print(out_->file(), "{}{}:{} {}{}:{} {} [{}]\n", palette_.bold(), where, palette_.reset(),
               error ? palette_.red() : palette_.yellow(), error ? "error" : "warning", palette_.reset(), d.message,
               d.rule);
  }

  const ValidateOptions& opts_;
  Output* out_;
  FileReport& report_;
  Palette palette_;
  uint64_t shown_ = 0;
};

FileReport finish_report(FileReport report, const ValidateOptions& opts, bool* unreadable) {
  if (!report.result.readable) *unreadable = true;
  report.valid = report.result.readable && report.result.errors == 0 && (!opts.strict || report.result.warnings == 0);
  return report;
}

/// --index: validates along the pass that writes the index, as report validates along its
/// load; false when that pass cannot stand for a validation (the file is not read as a
/// trace, or a broken trace's parts cannot be joined exactly): the file is then validated
/// alone, the same problems either way.
bool validate_along_index(const std::shared_ptr<Input>& input, const ValidateOptions& opts,
                          DiagnosticPrinter& printer, FileReport* report) {
  Trace trace;
  ValidationTee validation;
  LoadOptions load;
  load.spans = false;  // what jqtrace index reads
  load.tee = &validation;
  ReadResult read;
  if (!index_pass_quietly(input, opts.common, &trace, load, &read) || !validation.exact()) return false;
  auto locator = Source::open(*input);  // positions of what was found
  report->result = validation.conclude(printer, *locator, read, trace.names);
  return true;
}

/// The file cannot be opened: said on stderr already; data formats also carry it as a
/// diagnostic of the file.
void mark_unreadable(FileReport& report, const std::string& why, const ValidateOptions& opts,
                     DiagnosticPrinter& printer, bool* unreadable) {
  *unreadable = true;
  report.result.readable = false;
  if (opts.common.format() != Format::table) {
    report.result.errors = 1;
    report.result.rule_counts["unreadable"] = 1;
    printer.report(make_diagnostic("unreadable", "cannot open: " + why));
  }
}

FileReport validate_file(const std::string& path, const ValidateOptions& opts, Output* out, bool* unreadable) {
  FileReport report;
  report.file = path == "-" ? "<stdin>" : path;
  DiagnosticPrinter printer(opts, out, report);
  std::string why;
  auto input = open_trace(path, &why);
  if (!input) {
    mark_unreadable(report, why, opts, printer, unreadable);
    return report;
  }
  if (will_index(opts.common, report.file) && input->regular() && validate_along_index(input, opts, printer, &report))
    return finish_report(std::move(report), opts, unreadable);
  ParallelRead parallel = parallel_read(*input, opts.common);
  if (parallel.threads && validate_trace_parallel(input, parallel.threads, printer, parallel.progress,
                                                  parallel.min_part_bytes, &report.result)) {
    end_progress();
    return finish_report(std::move(report), opts, unreadable);
  }
  auto source = open_input(*input, opts.common);
  if (!source) {
    mark_unreadable(report, "standard input is read once", opts, printer, unreadable);
    return report;
  }
  report.result = validate_trace(*source, printer);
  end_progress();
  return finish_report(std::move(report), opts, unreadable);
}

std::string plural(uint64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

void render_table_summary(const FileReport& r, Output& out) {
  Palette p{out.color()};
  if (r.omitted)
    fmt::print(out.file(), "{}: {} not shown (--max-errors 0 shows all)\n", r.file, plural(r.omitted, "more problem"));
  std::string kind = r.result.jobque ? "jobque trace" : "trace";
  if (!r.result.readable && r.result.rule_counts.empty()) return;  // could not open: already said on stderr
  std::string verdict = r.valid ? fmt::format("{}valid{}", p.bold(), p.reset())
                                : fmt::format("{}invalid{}", p.red(), p.reset());
  fmt::print(out.file(), "{}: {} {} ({}, {}, {})\n", r.file, verdict, kind, plural(r.result.events, "event"),
             plural(r.result.errors, "error"), plural(r.result.warnings, "warning"));
  if (r.result.read.view_events)
    fmt::print(out.file(), "note: {} that window --view added for the viewer (unit tracks, flows, stretches not "
                           "recorded) are not part of the trace and not counted\n",
               plural(r.result.read.view_events, "event"));
  for (const RuleInfo& rule : rules()) {
    auto it = r.result.rule_counts.find(rule.id);
    if (it == r.result.rule_counts.end()) continue;
    fmt::print(out.file(), "  {:<24} {:>8} {}\n", rule.id, it->second,
               rule.severity == Severity::error ? "error" : "warning");
  }
}

/// The table streams each problem as it is found (a broken file's first errors show at
/// once); the other formats render the result document at the end.
int run_validate(const ValidateOptions& opts) {
  Format f = opts.common.format();
  if (f == Format::table && !opts.common.columns.empty()) {
    print_error("--columns: validate's table is a list of problems; use it with csv, tsv or md");
    return kUsage;
  }
  if (!check_output_format(opts.common, "validate")) return kUsage;
  std::unique_ptr<Output> out;
  int open_status = kInput;
  if (f == Format::table && !(out = Output::open(opts.common, &open_status))) return open_status;  // cannot write
  std::vector<FileReport> reports;
  bool unreadable = false, all_valid = true;
  for (const std::string& path : opts.files) {
    reports.push_back(validate_file(path, opts, out.get(), &unreadable));
    all_valid = all_valid && reports.back().valid;
    if (out) render_table_summary(reports.back(), *out);
  }
  if (out && !out->close()) return out->failure_status();
  if (!out)
    if (int status = write_document(result::validate_document(reports, all_valid), opts.common, "validate"))
      return status;
  if (unreadable) return kInput;
  return all_valid ? kOk : kCheckFailed;
}

}  // namespace

void setup_validate(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "Check that trace files are well-formed: the JSON, every event, the jobque rules");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  cmd->add_option("--max-errors", opts->max_errors, "Show at most N problems per file (0: all)")
      ->option_text("N")
      ->check(CLI::Validator(
          [](std::string& v) { return v.rfind('-', 0) == 0 ? std::string("must be 0 or more") : std::string(); },
          "N>=0"))
      ->capture_default_str();
  cmd->add_flag("--strict", opts->strict, "Warnings fail validation too");
  add_index_options(*cmd, opts->common, false);
  cmd->add_option("FILE", opts->files, "Trace files, plain or gzip (- or none: standard input)");
  cmd->footer("Examples:\n  jqtrace validate trace.json\n  jqtrace validate --strict --max-errors 0 *.trace.json.gz\n  zcat trace.json.gz | jqtrace validate\n  jqtrace validate --index big.trace.json   # and write its sidecar index from the same pass");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->files, "validate")) throw CommandDone{kUsage};
    throw CommandDone{run_validate(*opts)};
  });
}

}  // namespace jqtrace::cli
