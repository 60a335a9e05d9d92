#include "validate_schema.h"

#include <fmt/core.h>

namespace jqtrace::result {
namespace {

Table files_table(const std::vector<ValidatedFile>& files) {
  Table t("files");
  t.add_column(Column("file", Kind::text));
  t.add_column(Column("valid", Kind::flag));
  t.add_column(Column("readable", Kind::flag).rank(2));
  t.add_column(Column("jobque", Kind::flag).rank(2));
  for (const char* key : {"events", "errors", "warnings"}) t.add_column(Column(key, Kind::integer));
  t.add_column(Column("omitted", Kind::integer).rank(1));
  for (const ValidatedFile& f : files)
    t.rows.push_back({f.file, f.valid, f.result.readable, f.result.jobque, count(f.result.events),
                      count(f.result.errors), count(f.result.warnings), count(f.omitted)});
  return t;
}

Table diagnostics_table(const std::vector<ValidatedFile>& files) {
  Table t("diagnostics");
  t.add_column(Column("file", Kind::text).rank(1));
  t.add_column(Column("line", Kind::integer));
  t.add_column(Column("column", Kind::integer));
  t.add_column(Column("severity", Kind::text));
  t.add_column(Column("rule", Kind::text));
  t.add_column(Column("message", Kind::text));
  for (const ValidatedFile& f : files)
    for (const Diagnostic& d : f.kept)
      t.rows.push_back({f.file, count(d.position.line), count(d.position.column),
                        std::string(d.severity == Severity::error ? "error" : "warning"), std::string(d.rule), d.message});
  return t;
}

}  // namespace

Document validate_document(const std::vector<ValidatedFile>& files, bool all_valid) {
  uint64_t events = 0, errors = 0, warnings = 0;
  std::map<std::string, uint64_t> rule_counts;
  for (const ValidatedFile& f : files) {
    events += f.result.events;
    errors += f.result.errors;
    warnings += f.result.warnings;
    for (const auto& [id, n] : f.result.rule_counts) rule_counts[std::string(id)] += n;
  }
  Document doc;
  doc.schema = "jqtrace/validate/1";
  doc.heading = fmt::format("{} file{}: {}", files.size(), files.size() == 1 ? "" : "s", all_valid ? "valid" : "invalid");
  doc.add(Field("valid", Kind::flag, all_valid));
  doc.add(Field("events", Kind::integer, count(events)).labelled("events"));
  doc.add(Field("errors", Kind::integer, count(errors)).labelled("errors"));
  doc.add(Field("warnings", Kind::integer, count(warnings)).labelled("warnings"));
  for (const auto& [id, n] : rule_counts) doc.add(Field(id, Kind::integer, count(n)).in("rules"));
  Table rules;  // the counts again, for people: rule, count, severity
  rules.key = "rules";
  rules.in_json = false;
  rules.add_column(Column("rule", Kind::text));
  rules.add_column(Column("count", Kind::integer));
  rules.add_column(Column("severity", Kind::text));
  for (const RuleInfo& rule : jqtrace::rules())
    if (auto it = rule_counts.find(std::string(rule.id)); it != rule_counts.end())
      rules.rows.push_back({std::string(rule.id), count(it->second),
                            std::string(rule.severity == Severity::error ? "error" : "warning")});
  doc.add(files_table(files));
  doc.add(diagnostics_table(files));
  doc.add(std::move(rules));
  doc.delimited_table = 1;  // CSV/TSV: one row a diagnostic
  return doc;
}

}  // namespace jqtrace::result
