// jqtrace export FILE... -o out.sqlite: each trace loaded in turn → its run's rows → one
// SQLite database, put in place only when complete.
#include <csignal>
#include <malloc.h>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "load.h"
#include "scope_options.h"
#include "sqlite_export.h"
#include "timings.h"
#include "version.h"

namespace jqtrace::cli {
namespace {

struct ExportCommandOptions {
  CommonOptions common;
  std::string unit_at = "auto";
  std::vector<std::string> files;
};

/// The temporary database, removed when the export is interrupted (SIGINT, SIGTERM,
/// SIGHUP): the -o path is never a partial database. (SIGKILL leaves the temporary file,
/// named .NAME.jqtrace-XXXXXX beside it, and the -o path as it was.)
char g_temporary[4096];

extern "C" void remove_temporary_and_die(int signal) {
  if (g_temporary[0]) ::unlink(g_temporary);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void guard_temporary(const std::string& path) {
  if (path.size() >= sizeof g_temporary) return;
  std::memcpy(g_temporary, path.c_str(), path.size() + 1);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, remove_temporary_and_die);
}

/// False (after saying why) when -o names an existing file that is not a SQLite database:
/// export replaces a database, or creates one where nothing is; an empty file holds nothing
/// to lose and is replaced too. Read through links, as the replacement would go.
bool replaceable_by_database(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return true;
  static constexpr char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  char head[sizeof kMagic] = {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  bool database = f && std::fread(head, 1, sizeof head, f) == sizeof head && std::memcmp(head, kMagic, sizeof head) == 0;
  if (f) std::fclose(f);
  if (database) return true;
  print_error(fmt::format("-o {}: that file is not a SQLite database; export replaces only a database (or creates "
                          "one where no file is): remove it or write elsewhere",
                          path));
  return false;
}

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return path != "-" && ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

int run_export(const ExportCommandOptions& o) {
  if (o.common.output.empty() || o.common.output == "-") {
    print_error("export writes a SQLite database: give its path with -o (for example -o trace.sqlite)");
    return kUsage;
  }
  // Every input first: an -o that names one of them is refused before anything is read.
  std::vector<std::shared_ptr<Input>> inputs;
  for (const std::string& file : o.files) {
    inputs.push_back(open_trace(file));
    if (!inputs.back()) return kInput;
  }
  int status = kInput;
  auto out = Output::open(o.common, &status, "-o", /*needs_temporary=*/true);  // touches nothing at -o
  if (!out) return status;
  if (!replaceable_by_database(o.common.output)) return kUsage;
  if (out->temporary_path().empty()) {
    print_error(fmt::format("{}: export writes a database file: -o must name a regular file", o.common.output));
    return kUsage;
  }
  guard_temporary(out->temporary_path());
  std::string error;
  auto db = SqliteExport::create(out->temporary_path(), &error);
  if (!db) {
    print_error(fmt::format("{}: {}", o.common.output, error));
    return kInput;
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Trace trace;  // freed before the next run is read
    if (int load = load_for_analysis(inputs[k], o.common, &trace)) return load;
    std::string version = version_text();
    ExportRun run{display_name(o.files[k]), file_bytes(o.files[k]), version.substr(0, version.find('\n')),
                  unit_at_request(o.unit_at)};
    if (!db->add_run(trace, run, worker_threads(o.common), &error)) {
      print_error(fmt::format("{}: {}", o.common.output, error));
      return kInput;
    }
    // The next run is read into memory the parser threads' arenas still hold: without giving
    // it back, a fleet of two 570 MB runs peaked 29 MB above one run (183 MB against 154).
    if (k + 1 < inputs.size()) {
      trace = Trace{};
      malloc_trim(0);
    }
  }
  if (!db->finish(&error)) {
    print_error(fmt::format("{}: {}", o.common.output, error));
    return kInput;
  }
  if (!out->close()) return out->failure_status();
  g_temporary[0] = '\0';
  return kOk;
}

}  // namespace

void setup_export(CLI::App& app) {
  auto opts = std::make_shared<ExportCommandOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Traces (or a fleet of runs) as one SQLite database, jobque's meaning resolved");
  cmd->add_option("-o,--output", opts->common.output, "The database to write (required; replaced only when complete)")
      ->option_text("PATH");
  cmd->add_option("-j,--threads", opts->common.threads, "Parser threads (default 0: all cores)")
      ->check(CLI::Range(0u, 1024u))
      ->option_text("N");
  cmd->add_flag("-q,--quiet", opts->common.quiet, "No progress bar and no warnings");
  cmd->add_flag_callback("--timings", [] { enable_timings(); },
                         "At the end, on stderr: wall and CPU time of each phase (parse, index, each table "
                         "written) and the serial share of the run");
  add_unit_at_option(*cmd, opts->unit_at);
  cmd->add_option("FILE", opts->files, "The traces: one run each")->required();
  cmd->footer(
      "Examples:\n  jqtrace export trace.json.gz -o trace.sqlite\n"
      "  jqtrace export run1.json run2.json run3.json -o fleet.sqlite\n"
      "  sqlite3 trace.sqlite \"SELECT g.name, sum(s.dur_us) FROM spans s JOIN groups g USING(run, grp) "
      "WHERE s.name = 'chunk' GROUP BY 1\"");
  cmd->callback([opts]() { throw CommandDone{run_export(*opts)}; });
}

}  // namespace jqtrace::cli
