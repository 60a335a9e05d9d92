// export's own checks of the order its keys come in: a model whose lane is out of time
// order (a loader bug) fails the export with a message, never a database whose index is
// out of order (spans and spans_by_chain are checked on the model's values, not records).
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "content_hash.h"
#include "sqlite_export.h"
#include "test_util.h"

namespace jqtrace {
namespace {

TEST_CASE("export: a lane out of time order fails the run, not the database's order") {
  for (bool out_of_order : {false, true}) {
    CAPTURE(out_of_order);
    Trace trace;
    REQUIRE(test::load_string(test::sample_bytes("decode-small.trace.json"), &trace).status == ReadStatus::ok);
    SpanTable& spans = trace.lanes[0].spans;
    REQUIRE(spans.size() >= 2);
    if (out_of_order) {
      int64_t first = spans.ts[0];
      spans.ts.set(0, spans.ts[1] + 1);  // the first span now starts after the second
      REQUIRE(spans.ts[0] > first);
    }
    test::TempFile at("");
    std::string error;
    auto db = SqliteExport::create(at.path, &error);
    REQUIRE(db);
    ExportRun run;
    run.file = "decode-small.trace.json";
    bool added = db->add_run(trace, run, 2, &error);
    CHECK(added == !out_of_order);
    if (out_of_order) CHECK(error == "internal error: the spans of lane 0 are not in time order");
    else CHECK(db->finish(&error));
  }
}

/// The bytes of the file at path ("" when there is none).
std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A database export wrote at path, a run per sample, each with its bytes' hash
/// (salted: the same sample in two databases can count as different files).
void export_samples(const std::string& path, const std::vector<std::string>& samples, const std::string& salt) {
  std::string error;
  auto db = SqliteExport::create(path, &error);
  REQUIRE_MESSAGE(db, error);
  for (const std::string& name : samples) {
    ExportRun run;
    run.file = name;
    ContentHash hash;
    std::string bytes = test::sample_bytes(name) + salt;
    hash.add(bytes.data(), bytes.size());
    run.content_hash = hash.hex();
    REQUIRE_MESSAGE(db->add_run(test::load_sample(name), run, 1, &error), error);
  }
  REQUIRE_MESSAGE(db->finish(&error), error);
}

/// SQLite's answer to a query of one value (opening the database rolls a hot journal back).
std::string one_value(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::string value;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    value = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return value;
}

TEST_CASE("export --append: a kill at any point of the transaction leaves the database as it was") {
  test::TempFile base(""), added(""), work("");
  export_samples(base.path, {"decode-small.trace.json"}, "");
  export_samples(added.path, {"legacy-small.trace.json", "ring-full.trace.json", "decode-small.trace.json"}, "2");
  const std::string before = bytes_of(base.path);
  int spilled = 0;  // kills that left the database file itself half-written
  for (int kill_at = 0;; ++kill_at) {
    CAPTURE(kill_at);
    { std::ofstream(work.path, std::ios::binary | std::ios::trunc) << before; }
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int probes = 0;
      std::string error;
      bool done = SqliteExport::append(work.path, added.path, &error, [&](sqlite3* db, const std::string&) {
        // A cache of a few pages: the transaction writes into the database file before its
        // commit (the journal hot), as a big append does.
        if (probes == 0) sqlite3_exec(db, "PRAGMA cache_size=10", nullptr, nullptr, nullptr);
        if (probes++ == kill_at) std::raise(SIGKILL);
      });
      _exit(done ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    if (WIFEXITED(status)) {  // killed after every table: the append completes
      CHECK(WEXITSTATUS(status) == 0);
      CHECK(one_value(work.path, "SELECT group_concat(run) FROM runs") == "1,2,3,4");
      CHECK(one_value(work.path, "SELECT file FROM runs WHERE run = 4") == "decode-small.trace.json");
      break;
    }
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    if (bytes_of(work.path) != before) ++spilled;
    CHECK(one_value(work.path, "PRAGMA integrity_check") == "ok");
    CHECK(bytes_of(work.path) == before);  // rolled back byte for byte
    // The journal is gone, or zeroed (not hot: SQLite deletes it at the next write).
    std::string journal = bytes_of(work.path + "-journal");
    CHECK((journal.empty() || journal[0] == 0));
    REQUIRE(kill_at < 100);
  }
  // Without a half-written file the test would not have tested the rollback.
  CHECK(spilled > 0);
  std::remove((work.path + "-journal").c_str());
}

TEST_CASE("export --append: a file another append added meanwhile is refused, the database unchanged") {
  test::TempFile base(""), added("");
  export_samples(base.path, {"decode-small.trace.json"}, "");
  export_samples(added.path, {"legacy-small.trace.json"}, "");
  std::string error;
  REQUIRE_MESSAGE(SqliteExport::append(base.path, added.path, &error), error);
  const std::string after_one = bytes_of(base.path);
  CHECK_FALSE(SqliteExport::append(base.path, added.path, &error));
  CHECK(error == "legacy-small.trace.json is run 2 already (another append added it meanwhile)");
  CHECK(bytes_of(base.path) == after_one);
  CHECK(one_value(base.path, "SELECT count(*) FROM runs") == "2");
}

TEST_CASE("export --append: a database of other tables is refused") {
  test::TempFile other("");
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(other.path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE runs(run INTEGER PRIMARY KEY)", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  std::vector<std::pair<std::string, int64_t>> runs;
  std::string error;
  CHECK_FALSE(SqliteExport::read_runs(other.path, &runs, &error));
  CHECK(error.find("not the ones this jqtrace writes") != std::string::npos);
}

TEST_CASE("export --append: a database that cannot be opened says SQLite's reason") {
  std::vector<std::pair<std::string, int64_t>> runs;
  std::string error;
  CHECK_FALSE(SqliteExport::read_runs("/nonexistent-folder/fleet.sqlite", &runs, &error));
  CHECK(error == "cannot read the database: unable to open database file");
  CHECK_FALSE(SqliteExport::append("/nonexistent-folder/fleet.sqlite", "/nonexistent-folder/added.sqlite", &error));
  CHECK(error == "cannot open the database: unable to open database file");
}

TEST_CASE("content hash: the same bytes in any pieces hash alike, any change differs") {
  std::string bytes = test::sample_bytes("decode-small.trace.json");
  ContentHash whole;
  whole.add(bytes.data(), bytes.size());
  for (std::size_t piece : {1u, 3u, 7u, 8u, 9u, 4096u}) {
    CAPTURE(piece);
    ContentHash pieces;
    for (std::size_t at = 0; at < bytes.size(); at += piece)
      pieces.add(bytes.data() + at, std::min(piece, bytes.size() - at));
    CHECK(pieces.hex() == whole.hex());
  }
  auto hex_of = [](const std::string& b) {
    ContentHash h;
    h.add(b.data(), b.size());
    return h.hex();
  };
  CHECK(hex_of("ab") != hex_of(std::string("ab\0", 3)));
  CHECK(hex_of("") != hex_of(std::string(1, '\0')));
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 1;
  CHECK(hex_of(flipped) != whole.hex());
  // A database's hashes outlive the binary that wrote them: the function may not change.
  CHECK(hex_of("") == "320c2b188efa0720");
  CHECK(hex_of("jqtrace export --append") == "1e6d71ed8907a59b");
}

}  // namespace
}  // namespace jqtrace
