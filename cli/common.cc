#include "common.h"

#include "parallel.h"
#include "paths.h"
#include "suggest.h"
#include "timings.h"
#include "trace.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/format.h>

namespace jqtrace::cli {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

/// Inputs smaller than this finish before a bar would be worth drawing.
constexpr uint64_t kProgressMinBytes = 32ull << 20;

struct ProgressState {
  std::string name;
  std::chrono::steady_clock::time_point started, last_draw;
  bool drawn = false;
};
ProgressState g_progress;

void draw_progress(uint64_t consumed, uint64_t total) {
  auto now = std::chrono::steady_clock::now();
  if (g_progress.drawn && now - g_progress.last_draw < std::chrono::milliseconds(100)) return;
  g_progress.last_draw = now;
  g_progress.drawn = true;
  double seconds = std::chrono::duration<double>(now - g_progress.started).count();
  double mb = static_cast<double>(consumed) / 1e6, total_mb = static_cast<double>(total) / 1e6;
  double rate = seconds > 0 ? mb / seconds : 0;
  double eta = rate > 0 ? (total_mb - mb) / rate : 0;
  fmt::print(stderr, "\rjqtrace: reading {} {:3.0f}% {:.0f}/{:.0f} MB {:.0f} MB/s ETA {:.0f}s\x1b[K",
             g_progress.name, total ? 100.0 * mb / total_mb : 0.0, mb, total_mb, rate, eta);
}

}  // namespace

namespace {

/// The -o extensions that choose one of formats: theirs, and ".json" for a trace.
std::string output_extensions(const std::vector<Format>& formats) {
  std::string list = result::extension_list(formats);
  bool trace = std::find(formats.begin(), formats.end(), Format::trace) != formats.end();
  bool json = std::find(formats.begin(), formats.end(), Format::json) != formats.end();
  return trace && !json ? (list.empty() ? ".json" : ".json " + list) : list;
}

}  // namespace

void add_common_options(CLI::App& cmd, CommonOptions& opts, const std::vector<Format>& formats) {
  opts.offered = formats;
  std::vector<std::string> names;
  for (Format f : formats) names.push_back(result::format_name(f));
  cmd.add_option_function<std::string>(
         "--format", [&opts](const std::string& name) { opts.given = result::parse_format(name); },
         fmt::format("Output format (default: {}, or the one -o's extension names: {})", names.front(),
                     output_extensions(formats)))
      ->check(CLI::IsMember(names))
      ->option_text(result::format_list(formats));
  cmd.add_option("-o,--output", opts.output, "Write the data to PATH instead of stdout")->option_text("PATH");
  if (std::find(formats.begin(), formats.end(), Format::table) != formats.end())
    cmd.add_option("--columns", opts.columns,
                   "Only these columns of the main table, in this order (keys as in the JSON and the CSV header)")
        ->option_text("KEY,...");
  if (std::find(formats.begin(), formats.end(), Format::csv) != formats.end())
    cmd.add_option("--table", opts.table,
                   "The table CSV and TSV write, by its JSON key (default: the command's main table; e.g. diff's "
                   "changes)")
        ->option_text("NAME");
  if (std::find(formats.begin(), formats.end(), Format::table) != formats.end())
    cmd.add_flag("--wide", opts.wide,
                 "On a terminal, keep every column and every part of a distribution (a table too wide is split "
                 "into blocks)");
  cmd.add_option("-j,--threads", opts.threads, "Parser threads (default 0: all cores)")
      ->check(CLI::Range(0u, 1024u))
      ->option_text("N");
  cmd.add_option("--color", opts.color,
                 "Colors: auto (a terminal, no NO_COLOR, TERM not dumb; CLICOLOR_FORCE forces them), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->option_text("auto|always|never");
  cmd.add_flag("-q,--quiet", opts.quiet, "No progress bar and no warnings");
  cmd.add_flag_callback(
      "--timings",
      [&opts] {
        opts.timings = true;
        enable_timings();
      },
      "At the end, on stderr: wall and CPU time of each phase (plan, parse, join, finish, index, analysis, "
      "render) and the serial share of the run");
  bool delimited =
      std::any_of(formats.begin(), formats.end(), [](Format f) { return f == Format::csv || f == Format::tsv; });
  if (delimited)
    cmd.add_flag("--csv-raw", opts.csv_raw,
                 "CSV and TSV: write names as they are, even those a spreadsheet would run as a formula "
                 "(=, +, -, @ first; by default such a cell gets a leading ')");
}

void add_index_options(CLI::App& cmd, CommonOptions& opts, bool reads) {
  cmd.add_flag("--index", opts.write_index, "Also write the sidecar index (TRACE.jqx, see jqtrace index) from this pass");
  if (reads)
    cmd.add_flag("--no-index", opts.no_index, "Read the whole trace even when a fresh sidecar index could answer");
}

namespace {

bool offers(const std::vector<Format>& offered, Format f) {
  return std::find(offered.begin(), offered.end(), f) != offered.end();
}

/// The format -o's extension names; ".json" is a trace for a command that writes traces.
std::optional<Format> format_of_output(const CommonOptions& opts) {
  auto by_name = result::format_of_path(opts.output);
  if (!by_name) return std::nullopt;  // first: comparing an empty optional read its unset value (valgrind)
  if (*by_name == Format::json && !offers(opts.offered, Format::json) && offers(opts.offered, Format::trace))
    return Format::trace;
  return by_name;
}

}  // namespace

Format CommonOptions::format() const {
  if (given) return *given;
  if (auto by_name = format_of_output(*this); by_name && offers(offered, *by_name)) return *by_name;
  return offered.empty() ? Format::table : offered.front();
}

bool check_output_format(const CommonOptions& opts, std::string_view command) {
  if (opts.given) return true;
  auto by_name = format_of_output(opts);
  std::string_view extension = result::extension_of(opts.output);
  if (!by_name && !extension.empty()) {  // "-o x.xlsx" would be a table under a spreadsheet's name
    print_error(fmt::format("-o {}: {} writes no {} file (its formats: {}; -o chooses one by {}); give --format to "
                            "write one into it anyway",
                            opts.output, command, extension, result::format_list(opts.offered),
                            output_extensions(opts.offered)));
    return false;
  }
  if (!by_name || offers(opts.offered, *by_name)) return true;
  print_error(fmt::format("-o {}: {} does not write {} (its formats: {}); give --format to write another into it",
                          opts.output, command, result::format_name(*by_name), result::format_list(opts.offered)));
  return false;
}

namespace {

std::vector<std::string> split_keys(const std::string& list) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) keys.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return keys;
}

/// The terminal's width when fd is one (COLUMNS first, as a resize-aware shell sets it,
/// then the tty's own size, then 80); 0 for files and pipes: never cut what a program reads.
std::size_t terminal_width(int fd) {
  if (!isatty(fd)) return 0;
  if (const char* columns = std::getenv("COLUMNS")) {
    long n = std::strtol(columns, nullptr, 10);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  struct winsize size {};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

namespace {

/// --table NAME: the index of the table CSV and TSV write instead of the main one; -1
/// after saying why not (another format, or no table of that key).
int chosen_table(const result::Document& doc, const CommonOptions& opts, Format format) {
  if (format != Format::csv && format != Format::tsv) {
    print_error(fmt::format("--table: CSV and TSV write one table; {} has them all", result::format_name(format)));
    return -1;
  }
  std::vector<const result::Table*> tables = doc.tables();
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (!tables[i]->in_json) continue;
    if (tables[i]->key == opts.table) return static_cast<int>(i);
    keys.push_back(tables[i]->key);
  }
  print_error(fmt::format("--table: no table '{}'{}; this result's tables are {}", opts.table,
                          did_you_mean(close_matches(opts.table, keys)), fmt::join(keys, ", ")));
  return -1;
}

}  // namespace

int write_document(const result::Document& doc, const CommonOptions& opts, std::string_view command) {
  if (!check_output_format(opts, command)) return kUsage;
  Format format = opts.format();
  if (!opts.table.empty()) {  // a copy that writes another table (rare, and small next to the trace)
    int index = chosen_table(doc, opts, format);
    if (index < 0) return kUsage;
    result::Document chosen = doc;
    chosen.delimited_table = index;
    CommonOptions rest = opts;
    rest.table.clear();
    return write_document(chosen, rest, command);
  }
  result::RenderOptions render;
  render.columns = split_keys(opts.columns);
  render.csv_raw = opts.csv_raw;
  if (!render.columns.empty()) {
    if (format == Format::json) {
      print_error("--columns: JSON always has every key (select with jq); use it with table, csv, tsv or md");
      return kUsage;
    }
    const result::Table* main = doc.delimited();
    std::vector<result::Leaf> leaves;
    std::string error;
    if (!main || !result::select_leaves(*main, render.columns, &leaves, &error)) {
      print_error(fmt::format("--columns: {}", main ? error : "this result has no table"));
      return kUsage;
    }
  }
  PhaseClock clock("render", PhaseKind::serial);
  int status = kInput;
  auto out = Output::open(opts, &status);
  if (!out) return status;  // cannot write, or -o names an input
  render.color = out->color();
  render.utf8 = utf8_locale();
  render.width = terminal_width(fileno(out->file()));
  render.wide = opts.wide;
  result::render_to(doc, format, render, [&](std::string_view text) { std::fwrite(text.data(), 1, text.size(), out->file()); });
  return out->close() ? kOk : out->failure_status();
}

bool utf8_locale() {
  for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(var);
    if (!v || !*v) continue;
    std::string s(v);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s.find("utf-8") != std::string::npos || s.find("utf8") != std::string::npos;
  }
  return false;
}

void print_error(std::string_view message) { fmt::print(stderr, "jqtrace: {}\n", message); }

void print_warning(const CommonOptions& opts, std::string_view message) {
  if (!opts.quiet) fmt::print(stderr, "warning: {}\n", message);
}

namespace {

/// (device, inode) of every regular file read as an input, with what it is ("the trace
/// being read", "a gate file being read", ...).
struct InputFile {
  dev_t dev;
  ino_t ino;
  std::string what;
};
std::vector<InputFile> g_input_files;

const InputFile* input_file(const struct stat& st) {
  for (const InputFile& f : g_input_files)
    if (f.dev == st.st_dev && f.ino == st.st_ino) return &f;
  return nullptr;
}

mode_t creation_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

void refuse_input_as_output(std::string_view option, const std::string& path, const struct stat& st) {
  const InputFile* f = input_file(st);
  print_error(fmt::format("{} {}: that is {}; refusing to overwrite it (write elsewhere)", option, path,
                          f ? f->what : "an input"));
}

}  // namespace

void note_input_file(const struct stat& st, std::string_view what) {
  if (!input_file(st)) g_input_files.push_back({st.st_dev, st.st_ino, std::string(what)});
}

void note_input_path(const std::string& path, std::string_view what) {
  struct stat st {};
  int got = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  if (got == 0 && S_ISREG(st.st_mode)) note_input_file(st, what);
}

bool is_input_file(const struct stat& st) { return input_file(st) != nullptr; }

namespace {

/// A temporary file under TMPDIR (else /tmp), already unlinked: where the data of a file
/// written in place waits until it is complete. -1 when none can be made.
int spool_file() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/jqtrace-output-XXXXXX";
  int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(path.c_str());
  return fd;
}

}  // namespace

std::unique_ptr<Output> Output::open(const CommonOptions& opts, int* status, std::string_view option,
                                     bool needs_temporary) {
  *status = kInput;
  auto out = std::unique_ptr<Output>(new Output());
  out->option_ = option;
  if (opts.output.empty() || opts.output == "-") {
    struct stat st {};
    if (::fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) && is_input_file(st)) {  // > trace.json
      refuse_input_as_output(option, "<stdout>", st);
      *status = kUsage;
      return nullptr;
    }
    out->file_ = stdout;
    out->color_ = color_wanted(opts.color, fileno(out->file_));
    return out;
  }
  out->path_ = opts.output;
  struct stat st {};
  bool exists = ::stat(opts.output.c_str(), &st) == 0;  // through links: what would be written
  if (exists && is_input_file(st)) {
    refuse_input_as_output(option, opts.output, st);
    *status = kUsage;
    return nullptr;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, a FIFO or a terminal: written as it is (a rename would replace the node).
    out->file_ = std::fopen(opts.output.c_str(), "w");
  } else {
    out->target_ = opts.output;
    if (exists)
      if (char* real = ::realpath(opts.output.c_str(), nullptr)) {  // replace the file a link names, not the link
        out->target_ = real;
        std::free(real);
      }
    std::string temporary = directory_of(out->target_) + "/." + base_name(out->target_) + ".jqtrace-XXXXXX";
    int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (fd >= 0) {
      ::fchmod(fd, exists ? (st.st_mode & 07777) : creation_mode());
      out->temporary_ = temporary;
      out->file_ = ::fdopen(fd, "w");
      if (!out->file_) ::close(fd);
    } else if (exists && (errno == EACCES || errno == EROFS || errno == EPERM)) {
      // A file we may write in a folder we may not. Nothing is touched until the data is
      // complete: the file is opened without truncating it (which decides that it can be
      // written), the data spooled elsewhere and copied over it by close().
      int folder_error = errno;
      if (needs_temporary) {
        print_error(fmt::format("{} {}: cannot make a temporary file beside it in {}: {} (the file is replaced only "
                                "by renaming a complete one over it; it was left as it was)",
                                option, opts.output, directory_of(out->target_), std::strerror(folder_error)));
        return nullptr;
      }
      out->in_place_fd_ = ::open(out->target_.c_str(), O_WRONLY | O_CLOEXEC);
      int spool = out->in_place_fd_ >= 0 ? spool_file() : -1;
      if (spool >= 0) out->file_ = ::fdopen(spool, "w+");
    }
  }
  if (!out->file_) {
    print_error(fmt::format("{}: cannot write: {}", opts.output, std::strerror(errno)));
    return nullptr;  // the destructor removes a temporary file
  }
  out->owned_ = true;
  out->color_ = color_wanted(opts.color, fileno(out->file_));
  return out;
}

bool Output::write(std::string_view text) {
  if (write_error_) return false;
  if (std::fflush(file_) != 0) {
    write_error_ = errno ? errno : EIO;
    return false;
  }
  int fd = fileno(file_);
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_error_ = n < 0 ? errno : EIO;
      return false;
    }
    bytes_written_ += static_cast<uint64_t>(n);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool color_wanted(const std::string& mode, int fd) {
  if (mode != "auto") return mode == "always";
  if (env_set("NO_COLOR")) return false;
  const char* force = std::getenv("CLICOLOR_FORCE");
  if (force && *force && std::strcmp(force, "0") != 0) return true;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd);
}

void add_trace_argument(CLI::App& cmd, std::string& file) {
  cmd.add_option("FILE", file, "Trace file, plain or gzip (- or none: standard input)");
}

namespace {
bool stdin_or_complain(std::string_view command) {
  if (!isatty(STDIN_FILENO)) return true;
  print_error(fmt::format("{}: no trace given: name a FILE (or - for standard input, which is a terminal here)",
                          command));
  fmt::print(stderr, "Run 'jqtrace {} --help' for usage.\n", command);
  return false;
}
}  // namespace

bool default_to_stdin(std::string& file, std::string_view command) {
  if (!file.empty()) return true;
  if (!stdin_or_complain(command)) return false;
  file = "-";
  return true;
}

bool default_to_stdin(std::vector<std::string>& files, std::string_view command) {
  if (!files.empty()) return true;
  if (!stdin_or_complain(command)) return false;
  files.push_back("-");
  return true;
}

Output::~Output() {
  if (owned_ && file_) std::fclose(file_);
  if (in_place_fd_ >= 0) ::close(in_place_fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

namespace {

/// Copies the spool (from its start) over fd's file and cuts that at the copy's end; errno
/// set on failure.
bool copy_over(std::FILE* spool, int fd) {
  if (std::fseek(spool, 0, SEEK_SET) != 0) return false;
  char buffer[1 << 16];
  off_t at = 0;
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, spool)) {
    for (std::size_t done = 0; done < got;) {
      ssize_t n = ::pwrite(fd, buffer + done, got - done, at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
      at += n;
    }
  }
  return !std::ferror(spool) && ::ftruncate(fd, at) == 0 && ::fsync(fd) == 0;
}

}  // namespace

bool Output::close() {
  int error = write_error_;
  bool ok = error == 0 && std::fflush(file_) == 0 && !std::ferror(file_);
  if (!ok && error == 0) error = errno;
  if (ok && in_place_fd_ >= 0) {
    ok = copy_over(file_, in_place_fd_);
    if (!ok) error = errno;
    ::close(in_place_fd_);
    in_place_fd_ = -1;
  }
  if (owned_) {
    bool closed = std::fclose(file_) == 0;
    if (ok && !closed) error = errno;
    ok = closed && ok;
    file_ = nullptr;
  }
  if (!ok && error == EPIPE && temporary_.empty()) return true;  // the reader closed the pipe: quietly, as ripgrep
  if (!ok) {
    print_error(fmt::format("{}: write failed: {}", path_.empty() ? "<stdout>" : path_, std::strerror(error)));
    return false;
  }
  if (temporary_.empty()) return true;
  // An input opened after the output (validate reads its files after opening it) is
  // checked here, before anything is replaced.
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && is_input_file(st)) {
    refuse_input_as_output(option_, path_, st);
    failure_status_ = kUsage;
    return false;
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    print_error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
    return false;
  }
  temporary_.clear();
  return true;
}

std::shared_ptr<Input> open_trace(const std::string& path, std::string* why) {
  std::string err;
  auto input = Input::open(path, &err);
  // Standard input redirected from a file is an input too (stats -o s.json < s.json).
  if (input && S_ISREG(input->status().st_mode)) note_input_file(input->status(), "the trace being read");
  if (!input) {
    print_error(fmt::format("{}: cannot open: {}", path, err));
    if (why) *why = err;
  }
  return input;
}

std::unique_ptr<Source> open_input(Input& input, const CommonOptions& opts, GzipPointHunt* hunt) {
  auto src = Source::open(input, hunt);
  if (!src) {
    print_error(fmt::format("{}: cannot read again: standard input is read once", input.name()));
    return nullptr;
  }
  if (ProgressFn bar = progress_bar(input.path(), src->total_size(), opts)) src->set_progress(std::move(bar));
  return src;
}

ProgressFn progress_bar(const std::string& path, uint64_t size, const CommonOptions& opts) {
  if (opts.quiet || env_set("CI") || !isatty(STDERR_FILENO) || size < kProgressMinBytes) return {};
  g_progress = ProgressState{path, std::chrono::steady_clock::now(), {}, false};
  return draw_progress;
}

namespace {

uint64_t min_part_bytes() { return bytes_from_env("JQTRACE_MIN_PART_BYTES", kDefaultMinPartBytes); }

}  // namespace

uint64_t bytes_from_env(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' && n > 0 ? n : fallback;
}

unsigned worker_threads(const CommonOptions& opts) {
  unsigned cores = std::thread::hardware_concurrency();
  unsigned threads = opts.threads ? opts.threads : cores ? cores : 1;
  note_timed_threads(threads);
  start_pool_threads(threads);  // while the input is opened and planned
  return threads;
}

ParallelRead parallel_read(const Input& input, const CommonOptions& opts) {
  unsigned threads = worker_threads(opts);
  if (threads > 1 && input.is_stdin()) return {threads, {}, min_part_bytes()};  // parts cut as the text comes
  uint64_t size = threads > 1 ? input.size() : 0;
  if (size == 0) return {};
  return {threads, progress_bar(input.path(), size, opts), min_part_bytes()};
}

void end_progress() {
  if (g_progress.drawn) fmt::print(stderr, "\r\x1b[K");
  g_progress.drawn = false;
}

}  // namespace jqtrace::cli
