// jqtrace validate FILE...: open → validate (streaming) → render diagnostics and counts.
#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "text_format.h"
#include "validate.h"

namespace jqtrace::cli {
namespace {

struct ValidateOptions {
  CommonOptions common;
  std::vector<std::string> files;
  int64_t max_errors = 100;  ///< signed so that "-3" is refused, not wrapped
  bool strict = false;
};

struct FileReport {
  std::string file;
  ValidateResult result;
  std::vector<Diagnostic> kept;  ///< for JSON: what --max-errors lets through
  uint64_t omitted = 0;
  bool valid = false;
};

/// Prints each diagnostic as it is found (table/csv/tsv) or keeps it (json), up to
/// --max-errors per file.
class DiagnosticPrinter final : public DiagnosticSink {
 public:
  DiagnosticPrinter(const ValidateOptions& opts, Output& out, FileReport& report)
      : opts_(opts), out_(out), report_(report), palette_{out.color()} {}

  void report(Diagnostic d) override {
    // -q: the table lists errors only (warnings still count in the summary), unless
    // --strict makes warnings fail the file. Data formats stay complete.
    bool hidden_warning = opts_.common.quiet && !opts_.strict && d.severity == Severity::warning &&
                          opts_.common.format == Format::table;
    if (hidden_warning) return;
    if (opts_.max_errors > 0 && shown_ >= static_cast<uint64_t>(opts_.max_errors)) {
      ++report_.omitted;
      return;
    }
    ++shown_;
    switch (opts_.common.format) {
      case Format::json: report_.kept.push_back(std::move(d)); break;
      case Format::csv: row(d, ','); break;
      case Format::tsv: row(d, '\t'); break;
      case Format::table: line(d); break;
      case Format::trace:
      case Format::compact: break;  // not offered by this command
    }
  }

 private:
  void line(const Diagnostic& d) {
    bool error = d.severity == Severity::error;
    std::string where = d.position.line ? fmt::format("{}:{}:{}", report_.file, d.position.line, d.position.column)
                                        : report_.file;
    fmt::print(out_.file(), "{}{}:{} {}{}:{} {} [{}]\n", palette_.bold(), where, palette_.reset(),
               error ? palette_.red() : palette_.yellow(), error ? "error" : "warning", palette_.reset(), d.message,
               d.rule);
  }
  void row(const Diagnostic& d, char sep) {
    fmt::print(out_.file(), "{}{}{}{}{}{}{}{}{}{}{}\n", delimited_field(report_.file, sep), sep, d.position.line, sep,
               d.position.column, sep, d.severity == Severity::error ? "error" : "warning", sep, d.rule, sep,
               delimited_field(d.message, sep));
  }

  const ValidateOptions& opts_;
  Output& out_;
  FileReport& report_;
  Palette palette_;
  uint64_t shown_ = 0;
};

FileReport finish_report(FileReport report, const ValidateOptions& opts, bool* unreadable) {
  if (!report.result.readable) *unreadable = true;
  report.valid = report.result.readable && report.result.errors == 0 && (!opts.strict || report.result.warnings == 0);
  return report;
}

FileReport validate_file(const std::string& path, const ValidateOptions& opts, Output& out, bool* unreadable) {
  FileReport report;
  report.file = path == "-" ? "<stdin>" : path;
  DiagnosticPrinter printer(opts, out, report);
  ParallelRead parallel = parallel_read(path, opts.common);
  if (parallel.threads && validate_trace_parallel(path, parallel.threads, printer, parallel.progress,
                                                  parallel.min_part_bytes, &report.result)) {
    end_progress();
    return finish_report(std::move(report), opts, unreadable);
  }
  std::string why;
  auto source = open_input(path, opts.common, &why);
  if (!source) {
    *unreadable = true;
    report.result.readable = false;
    // Said on stderr already; data formats also carry it as a diagnostic of the file.
    if (opts.common.format != Format::table) {
      report.result.errors = 1;
      report.result.rule_counts["unreadable"] = 1;
      printer.report(make_diagnostic("unreadable", "cannot open: " + why));
    }
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
  for (const RuleInfo& rule : rules()) {
    auto it = r.result.rule_counts.find(rule.id);
    if (it == r.result.rule_counts.end()) continue;
    fmt::print(out.file(), "  {:<24} {:>8} {}\n", rule.id, it->second,
               rule.severity == Severity::error ? "error" : "warning");
  }
}

void render_json(const std::vector<FileReport>& reports, bool all_valid, Output& out) {
  JsonDocument doc;
  auto& w = doc.w();
  uint64_t events = 0, errors = 0, warnings = 0;
  std::map<std::string_view, uint64_t> rule_counts;
  for (const FileReport& r : reports) {
    events += r.result.events;
    errors += r.result.errors;
    warnings += r.result.warnings;
    for (const auto& [id, n] : r.result.rule_counts) rule_counts[id] += n;
  }
  w.StartObject();
  doc.field("schema", "jqtrace/validate/1");
  doc.field("valid", all_valid);
  doc.field("events", events);
  doc.field("errors", errors);
  doc.field("warnings", warnings);
  doc.key("rules");
  w.StartObject();
  for (const auto& [id, n] : rule_counts) doc.field(id, n);
  w.EndObject();
  doc.key("files");
  w.StartArray();
  for (const FileReport& r : reports) {
    w.StartObject();
    doc.field("file", r.file);
    doc.field("valid", r.valid);
    doc.field("readable", r.result.readable);
    doc.field("jobque", r.result.jobque);
    doc.field("events", r.result.events);
    doc.field("errors", r.result.errors);
    doc.field("warnings", r.result.warnings);
    doc.field("omitted", r.omitted);
    w.EndObject();
  }
  w.EndArray();
  doc.key("diagnostics");
  w.StartArray();
  for (const FileReport& r : reports)
    for (const Diagnostic& d : r.kept) {
      w.StartObject();
      doc.field("file", r.file);
      doc.field("line", d.position.line);
      doc.field("column", d.position.column);
      doc.field("severity", d.severity == Severity::error ? "error" : "warning");
      doc.field("rule", d.rule);
      doc.field("message", d.message);
      w.EndObject();
    }
  w.EndArray();
  w.EndObject();
  fmt::print(out.file(), "{}", doc.str());
}

int run_validate(const ValidateOptions& opts) {
  auto out = Output::open(opts.common);
  if (!out) return kInput;  // cannot write: an input or output error
  Format f = opts.common.format;
  if (f == Format::csv || f == Format::tsv) {
    char sep = f == Format::csv ? ',' : '\t';
    fmt::print(out->file(), "file{0}line{0}column{0}severity{0}rule{0}message\n", sep);
  }
  std::vector<FileReport> reports;
  bool unreadable = false, all_valid = true;
  for (const std::string& path : opts.files) {
    reports.push_back(validate_file(path, opts, *out, &unreadable));
    all_valid = all_valid && reports.back().valid;
    if (f == Format::table) render_table_summary(reports.back(), *out);
  }
  if (f == Format::json) render_json(reports, all_valid, *out);
  if (!out->close()) return kInput;
  if (unreadable) return kInput;
  return all_valid ? kOk : kCheckFailed;
}

}  // namespace

void setup_validate(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "Check that trace files are well-formed: the JSON, every event, the jobque rules");
  add_common_options(*cmd, opts->common, {"table", "csv", "tsv", "json"});
  cmd->add_option("--max-errors", opts->max_errors, "Show at most N problems per file (0: all)")
      ->option_text("N")
      ->check(CLI::Validator(
          [](std::string& v) { return v.rfind('-', 0) == 0 ? std::string("must be 0 or more") : std::string(); },
          "N>=0"))
      ->capture_default_str();
  cmd->add_flag("--strict", opts->strict, "Warnings fail validation too");
  cmd->add_option("FILE", opts->files, "Trace files, plain or gzip (- or none: standard input)");
  cmd->footer("Examples:\n  jqtrace validate trace.json\n  jqtrace validate --strict --max-errors 0 *.trace.json.gz\n  zcat trace.json.gz | jqtrace validate");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->files, "validate")) throw CommandDone{kUsage};
    throw CommandDone{run_validate(*opts)};
  });
}

}  // namespace jqtrace::cli
