#pragma once
// `export`: traces as one SQLite database with jobque's meaning resolved — each span's
// group (its chain's category), each chain's wall and first claim, each marker kind's
// units as the planner cut them, and each unit's latency parts — so that the questions no
// command foresaw are a SQL query (jqtrace-export(1) documents every table and column).
// The one place that includes SQLite.
//
// Times are INTEGER ns of the file's clock (exact); views give µs, as the other outputs print them.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scope.h"
#include "stats.h"
#include "trace.h"

struct sqlite3;

namespace jqtrace {

/// What a run's row says beside what its trace holds.
struct ExportRun {
  std::string file;             ///< as the user named it
  uint64_t bytes = 0;           ///< the file's size
  std::string jqtrace_version;
  UnitRequest unit_at;          ///< how its units are cut (auto: per kind)
  /// The hash of the file's bytes (content_hash.h); nothing for standard input.
  std::optional<std::string> content_hash;
};

class SqliteExport {
 public:
  /// Creates the database at path with its tables and indexes, empty; nullptr with a
  /// message when SQLite cannot.
  static std::unique_ptr<SqliteExport> create(const std::string& path, std::string* error);
  ~SqliteExport();
  SqliteExport(const SqliteExport&) = delete;
  SqliteExport& operator=(const SqliteExport&) = delete;

  /// Adds one trace as the next run (numbered from 1); false with a message on a SQLite
  /// error. threads: for the analyses it runs (stats by lane).
  bool add_run(const Trace& trace, const ExportRun& run, unsigned threads, std::string* error);
  /// Writes the trees' last pages and the database's size: the file is complete (the
  /// caller puts it in place). false with a message.
  bool finish(std::string* error);

  /// --append: the runs of an existing database (each one's content hash, "" when it has
  /// none, and its number); false with a message when it cannot be read or its schema is
  /// not the one this export writes.
  static bool read_runs(const std::string& path, std::vector<std::pair<std::string, int64_t>>* hashes,
                        std::string* error);
  /// Adds every run of the database `from` (a finished export) to the database at path,
  /// numbered after its last run, through SQLite's INSERTs in one transaction: complete or
  /// not at all. false with a message.
  /// A probe tests give append: called inside its transaction, once before the first table
  /// ("") and after each table's rows are in (its name); a test kills the process there.
  using AppendProbe = std::function<void(sqlite3*, const std::string& table)>;
  static bool append(const std::string& path, const std::string& from, std::string* error,
                     const AppendProbe& probe = {});

 private:
  SqliteExport(int fd, std::map<std::string, uint32_t> roots);
  struct Trees;
  struct Writer;
  int fd_ = -1;
  std::map<std::string, uint32_t> roots_;  ///< each table's and index's root page
  std::unique_ptr<Trees> trees_;
  int64_t runs_ = 0;
};

}  // namespace jqtrace
