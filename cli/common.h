#pragma once
// What every subcommand shares: the common options of SPEC §3, exit codes, where output
// goes, error printing, colors and the progress bar. Library code never prints; this does.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "formats.h"
#include "model.h"
#include "source.h"

namespace jqtrace::cli {

/// SPEC §3 exit status.
enum Exit : int { kOk = 0, kCheckFailed = 1, kUsage = 2, kInput = 3 };

using result::Format;

struct CommonOptions {
  std::vector<Format> offered;   ///< the command's formats, the default first
  std::optional<Format> given;   ///< --format
  std::string columns;           ///< --columns KEY,...
  bool wide = false;             ///< --wide: a terminal's tables keep every column and part
  std::string table;             ///< --table NAME: the table CSV and TSV write (default: the main one)
  std::string output;        ///< -o PATH; empty: stdout
  unsigned threads = 0;      ///< -j N; 0: all cores
  std::string color = "auto";
  bool quiet = false;
  bool csv_raw = false;      ///< --csv-raw: CSV/TSV text cells as they are (no formula guard)
  bool write_index = false;  ///< --index: write the sidecar index from this command's pass
  /// The index command: an index that cannot be written is an error (exit 3), not a warning.
  bool index_required = false;
  bool no_index = false;     ///< --no-index: never read a sidecar index
  bool timings = false;      ///< --timings: each phase's wall and CPU time on stderr at the end

  /// --format, else the format -o's extension names (when the command offers it), else
  /// the command's default.
  Format format() const;
};

/// Adds --format (with the formats this command offers, the default first), -o, -j,
/// --color, -q, and --columns when it offers tables.
void add_common_options(CLI::App& cmd, CommonOptions& opts, const std::vector<Format>& formats);

/// --index (write the sidecar index as a side effect of the full pass) and, for a command
/// that can read one (`reads`), --no-index.
void add_index_options(CLI::App& cmd, CommonOptions& opts, bool reads);

/// False (after saying why) when -o's extension names a format the command does not
/// write and no --format overrides it: "-o x.svg" on stats is a mistake, not a table.
bool check_output_format(const CommonOptions& opts, std::string_view command);

/// Renders doc in the chosen format to stdout or -o, with --columns, colors and the
/// terminal's width when writing to one. kOk, kUsage (bad --columns) or kInput (cannot
/// write).
int write_document(const result::Document& doc, const CommonOptions& opts, std::string_view command);

/// FILE: the trace argument, optional: without it a command reads standard input when
/// that is not a terminal (as jq does), see default_to_stdin.
void add_trace_argument(CLI::App& cmd, std::string& file);
/// An empty file becomes "-" when standard input is not a terminal; with a terminal,
/// false after saying what is missing (the caller exits 2).
bool default_to_stdin(std::string& file, std::string_view command);
bool default_to_stdin(std::vector<std::string>& files, std::string_view command);

/// Whether to color output on fd: --color always|never, else (auto) not with NO_COLOR,
/// yes with CLICOLOR_FORCE (not "0"), not with TERM=dumb, else when fd is a terminal.
bool color_wanted(const std::string& mode, int fd);

/// "jqtrace: message" on stderr.
void print_error(std::string_view message);
/// A warning on stderr unless -q.
void print_warning(const CommonOptions& opts, std::string_view message);

/// Where the data goes: stdout or the -o file. A regular -o file is written under a
/// temporary name beside it and renamed over it by close(), so a failure never leaves a
/// half-written file, and a file that is one of the command's inputs is never written
/// (refused with kUsage). Closing reports write errors.
class Output {
 public:
  /// Opens -o PATH (or stdout); on failure prints the reason, sets *status (kUsage for an
  /// output that is an input, kInput when it cannot be written) and returns nullptr.
  /// `option` names the path in messages (--junit writes its file through one too).
  /// A file that may be written but whose folder may not (no temporary beside it) is
  /// opened without truncating it, the data spooled to a temporary file under TMPDIR and
  /// copied over it by close(); with `needs_temporary` (export, whose database SQLite
  /// writes by name) such a file is refused instead (kInput), untouched.
  static std::unique_ptr<Output> open(const CommonOptions& opts, int* status, std::string_view option = "-o",
                                      bool needs_temporary = false);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  std::FILE* file() const { return file_; }
  /// Writes text now (stdio's buffer flushed first, then write(2) until done), counting the
  /// bytes that reached the file; after the first failure (EPIPE, EFBIG, ENOSPC) nothing
  /// more is written and false is returned, so a caller stops producing.
  bool write(std::string_view text);
  /// True once a write failed: the caller stops writing.
  bool failed() const { return write_error_ != 0; }
  /// Bytes write() put into the file (what a reader got, for the summary line).
  uint64_t bytes_written() const { return bytes_written_; }
  /// True when the write that failed did so because the reader closed the pipe.
  bool reader_went_away() const { return write_error_ == EPIPE; }
  /// True when colors should be used on this output (--color, NO_COLOR, a TTY).
  bool color() const { return color_; }
  /// Flushes and closes, and puts the file in place; false (after printing why) when
  /// writing failed or the file is an input read since it was opened. Without it (an
  /// error on the way) the temporary file is removed and the -o path left as it was.
  bool close();
  /// The exit status for a failed close(): kUsage when the output is an input, else kInput.
  int failure_status() const { return failure_status_; }
  /// The temporary file close() renames into place ("" when the path is written directly:
  /// stdout, a device, a pipe). export has SQLite write it by name.
  const std::string& temporary_path() const { return temporary_; }

 private:
  Output() = default;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  bool color_ = false;
  int failure_status_ = kInput;
  int write_error_ = 0;          ///< errno of write()'s first failure
  uint64_t bytes_written_ = 0;   ///< by write()
  int in_place_fd_ = -1;         ///< the target, opened untruncated, when the data is spooled
  std::string path_;       ///< the -o path as given (messages)
  std::string option_;     ///< the option that gave it ("-o", "--junit"), for messages
  std::string target_;     ///< the file the rename replaces: the path, its links resolved
  std::string temporary_;  ///< written until close(); empty when writing the path directly
};

/// Every regular file opened as an input is noted (with what it is, for the refusal), so
/// that no -o or --junit can overwrite one.
void note_input_file(const struct stat& st, std::string_view what);
/// Notes path (standard input for "-") as an input when it is a regular file: a log, a
/// gate file, a saved baseline. By identity (device and inode), so links and redirections
/// count.
void note_input_path(const std::string& path, std::string_view what);
/// True when st is (device and inode) a file opened as a trace.
bool is_input_file(const struct stat& st);

/// Opens FILE or "-" once: every read of it takes its bytes from the Input. On failure
/// prints "jqtrace: FILE: cannot open: reason", sets *why (when given) and returns nullptr.
std::shared_ptr<Input> open_trace(const std::string& path, std::string* why = nullptr);

/// The input's text from its start, with a progress bar on a TTY for large inputs;
/// nullptr (after printing why) for a stream read already.
/// hunt: a gzip file's access points, taken as it is decoded (may be null).
std::unique_ptr<Source> open_input(Input& input, const CommonOptions& opts, GzipPointHunt* hunt = nullptr);

/// The progress bar for reading path (size bytes): empty unless stderr is a TTY, the input
/// is large, and neither -q nor CI says otherwise.
ProgressFn progress_bar(const std::string& path, uint64_t size, const CommonOptions& opts);

/// A positive byte count from the environment variable `name` (the tests' knobs, such as
/// JQTRACE_MIN_PART_BYTES), else fallback.
uint64_t bytes_from_env(const char* name, uint64_t fallback);

/// The threads -j asks for: N, or every core for 0.
unsigned worker_threads(const CommonOptions& opts);

/// How to read the input in parallel: `threads` above 1 (from -j, 0 meaning every core) for
/// a regular file or standard input, else 0 (read it in one pass); its progress bar; and the smallest part
/// worth a thread (JQTRACE_MIN_PART_BYTES, else 4 MiB: the tests set it tiny so that their
/// small files are cut too).
struct ParallelRead {
  unsigned threads = 0;
  ProgressFn progress;
  uint64_t min_part_bytes = 0;
};
ParallelRead parallel_read(const Input& input, const CommonOptions& opts);

/// True when the locale's character set is UTF-8 (LC_ALL, LC_CTYPE, LANG in that order).
bool utf8_locale();

/// Clears the progress bar line if one was drawn.
void end_progress();

/// ANSI color helpers; empty strings when color is off.
struct Palette {
  bool on = false;
  std::string_view red() const { return on ? "\x1b[1;31m" : ""; }
  std::string_view yellow() const { return on ? "\x1b[1;33m" : ""; }
  std::string_view bold() const { return on ? "\x1b[1m" : ""; }
  std::string_view reset() const { return on ? "\x1b[0m" : ""; }
};

}  // namespace jqtrace::cli
