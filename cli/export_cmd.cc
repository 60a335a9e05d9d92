// jqtrace export FILE... -o out.sqlite: each trace loaded in turn → its run's rows → one
// SQLite database, put in place only when complete.
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "commands.h"
#include "common.h"
#include "content_hash.h"
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
  std::string append;  ///< --append DB: add the files' runs to this database
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

/// The runs of the inputs, written into the database at `path` (a new, empty one).
int export_runs(const ExportCommandOptions& o, const std::vector<std::shared_ptr<Input>>& inputs,
                const std::vector<std::size_t>& chosen, const std::vector<std::optional<std::string>>& hashes,
                const std::string& path, const std::string& shown_as) {
  std::string error;
  auto db = SqliteExport::create(path, &error);
  if (!db) {
    print_error(fmt::format("{}: {}", shown_as, error));
    return kInput;
  }
  for (std::size_t n = 0; n < chosen.size(); ++n) {
    std::size_t k = chosen[n];
    Trace trace;  // freed before the next run is read
    if (int load = load_for_analysis(inputs[k], o.common, &trace)) return load;
    std::string version = version_text();
    ExportRun run{display_name(o.files[k]), file_bytes(o.files[k]), version.substr(0, version.find('\n')),
                  unit_at_request(o.unit_at), hashes[k]};
    if (!db->add_run(trace, run, worker_threads(o.common), &error)) {
      print_error(fmt::format("{}: {}", shown_as, error));
      return kInput;
    }
    // The next run is read into memory the parser threads' arenas still hold: without giving
    // it back, a fleet of two 570 MB runs peaked 29 MB above one run (183 MB against 154).
    if (n + 1 < chosen.size()) {
      trace = Trace{};
      malloc_trim(0);
    }
  }
  if (!db->finish(&error)) {
    print_error(fmt::format("{}: {}", shown_as, error));
    return kInput;
  }
  return kOk;
}

/// The inputs opened (an output that names one of them is refused before anything is read).
bool open_inputs(const ExportCommandOptions& o, std::vector<std::shared_ptr<Input>>* inputs) {
  for (const std::string& file : o.files) {
    inputs->push_back(open_trace(file));
    if (!inputs->back()) return false;
  }
  return true;
}

/// The hash of each regular file's bytes (a whole read of each: done once the command is
/// known to go ahead).
std::vector<std::optional<std::string>> content_hashes(const std::vector<std::shared_ptr<Input>>& inputs) {
  std::vector<std::optional<std::string>> hashes;
  for (const auto& input : inputs) hashes.push_back(content_hash_of(*input));
  return hashes;
}

int run_export(const ExportCommandOptions& o) {
  if (o.common.output.empty() || o.common.output == "-") {
    print_error("export writes a SQLite database: give its path with -o (for example -o trace.sqlite), or "
                "--append DB to add runs to one");
    return kUsage;
  }
  std::vector<std::shared_ptr<Input>> inputs;
  if (!open_inputs(o, &inputs)) return kInput;
  int status = kInput;
  auto out = Output::open(o.common, &status, "-o", /*needs_temporary=*/true);  // touches nothing at -o
  if (!out) return status;
  if (!replaceable_by_database(o.common.output)) return kUsage;
  if (out->temporary_path().empty()) {
    print_error(fmt::format("{}: export writes a database file: -o must name a regular file", o.common.output));
    return kUsage;
  }
  guard_temporary(out->temporary_path());
  std::vector<std::optional<std::string>> hashes = content_hashes(inputs);
  std::vector<std::size_t> every(inputs.size());
  for (std::size_t k = 0; k < every.size(); ++k) every[k] = k;
  if (int written = export_runs(o, inputs, every, hashes, out->temporary_path(), o.common.output)) return written;
  if (!out->close()) return out->failure_status();
  g_temporary[0] = '\0';
  return kOk;
}

/// --append DB FILE...: the files not already in DB (by the hash of their bytes; a file
/// given twice counts once) are exported to a temporary database beside it, whose runs are
/// then added to DB in one SQLite transaction (complete or not at all).
int run_append(const ExportCommandOptions& o) {
  const std::string& path = o.append;
  if (!o.common.output.empty()) {
    print_error("--append DB adds to DB: give no -o with it");
    return kUsage;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || !replaceable_by_database(path)) {
    print_error(fmt::format("--append {}: not a database export wrote (make one with -o first)", path));
    return kUsage;
  }
  std::vector<std::pair<std::string, int64_t>> runs;
  std::string error;
  if (!SqliteExport::read_runs(path, &runs, &error)) {
    print_error(fmt::format("--append {}: {}", path, error));
    return kUsage;
  }
  std::vector<std::shared_ptr<Input>> inputs;
  if (!open_inputs(o, &inputs)) return kInput;
  std::vector<std::optional<std::string>> hashes = content_hashes(inputs);
  std::vector<std::size_t> chosen;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (hashes[k]) {
      auto in_db = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.first == *hashes[k]; });
      if (in_db != runs.end()) {
        print_warning(o.common, fmt::format("{}: skipped: its bytes are run {} of {} already", display_name(o.files[k]),
                                            in_db->second, path));
        continue;
      }
      auto earlier = std::find_if(chosen.begin(), chosen.end(), [&](std::size_t j) { return hashes[j] == hashes[k]; });
      if (earlier != chosen.end()) {
        print_warning(o.common, fmt::format("{}: skipped: the same bytes as {}, given before it", display_name(o.files[k]),
                                            display_name(o.files[*earlier])));
        continue;
      }
    }
    chosen.push_back(k);
  }
  if (chosen.empty()) return kOk;
  std::string temporary = path + ".jqtrace-append-XXXXXX";
  int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    print_error(fmt::format("--append {}: cannot make a temporary database beside it: {}", path, std::strerror(errno)));
    return kInput;
  }
  ::close(fd);
  guard_temporary(temporary);
  int written = export_runs(o, inputs, chosen, hashes, temporary, path);
  if (written == kOk && !SqliteExport::append(path, temporary, &error)) {
    print_error(fmt::format("--append {}: {} (the database is as it was)", path, error));
    written = kInput;
  }
  ::unlink(temporary.c_str());
  g_temporary[0] = '\0';
  return written;
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
  cmd->add_option("--append", opts->append,
                  "Add the files' runs to this database (one export wrote), numbered after its last; a file "
                  "whose bytes are already in it is skipped, saying so. Complete or not at all")
      ->option_text("DB");
  add_unit_at_option(*cmd, opts->unit_at);
  cmd->add_option("FILE", opts->files, "The traces: one run each")->required();
  cmd->footer(
      "Examples:\n  jqtrace export trace.json.gz -o trace.sqlite\n"
      "  jqtrace export run1.json run2.json run3.json -o fleet.sqlite\n"
      "  jqtrace export --append fleet.sqlite run4.json\n"
      "  sqlite3 trace.sqlite \"SELECT name, trace_busy_ns / 1000.0 AS busy_us FROM groups ORDER BY 2 DESC\"");
  cmd->callback([opts]() { throw CommandDone{opts->append.empty() ? run_export(*opts) : run_append(*opts)}; });
}

}  // namespace jqtrace::cli
