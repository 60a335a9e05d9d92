#pragma once
// `export`: traces as one SQLite database with jobque's meaning resolved — each span's
// group (its chain's category), each chain's wall and first claim, each marker kind's
// units as the planner cut them, and each unit's latency parts — so that the questions no
// command foresaw are a SQL query (jqtrace-export(1) documents every table and column).
// The one place that includes SQLite.
//
// Times are INTEGER ns of the file's clock (exact); views give µs, as the other outputs print them.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "scope.h"
#include "stats.h"
#include "trace.h"

namespace jqtrace {

/// What a run's row says beside what its trace holds.
struct ExportRun {
  std::string file;             ///< as the user named it
  uint64_t bytes = 0;           ///< the file's size
  std::string jqtrace_version;
  UnitRequest unit_at;          ///< how its units are cut (auto: per kind)
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
