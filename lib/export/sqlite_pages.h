#pragma once
// SQLite's file format, written straight: records, and table and index B-trees built
// bottom-up from rows handed over in key order, appended as pages to a database that SQLite
// itself created (its header, its schema and the empty root page of every tree).
//
// Why not INSERT: SQLite spends ~1 µs a row in its VM and B-tree balancing, and a 570 MB
// trace is 7M rows (5M spans): 10 s where the load takes 1.2. Rows that arrive sorted need
// none of that work — a page is filled, written, and its first key goes to its parent.
// The format is https://www.sqlite.org/fileformat2.html; the databases written here pass
// PRAGMA integrity_check (tests/scripts/export.sh and sqlite_pages_test run it).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace jqtrace::sqlite_file {

/// A record under construction: values appended in column order, each written at once
/// into the header of serial types and the body; encode() joins them. The appends are
/// inline and write into buffers that only grow: they run ~100M times for a 570 MB trace.
class Record {
 public:
  Record& i(int64_t v) {
    // 0 and 1 are serial types 8 and 9, no body bytes (schema format 4, PageFile checks).
    if (static_cast<uint64_t>(v) <= 1) return type(static_cast<uint8_t>(8 + v));
    std::size_t bytes = integer_bytes(v);
    type(kIntegerType[bytes]);
    // The low `bytes` bytes, big-endian: all 8 are stored, the body grows by `bytes`.
    put_big_endian(body(8), static_cast<uint64_t>(v) << (8 * (8 - bytes)));
    body_used_ -= 8 - bytes;
    return *this;
  }
  Record& d(double v) {
    if (v != v) return null();  // SQLite stores NaN as NULL
    type(7);
    uint64_t bits = 0;
    std::memcpy(&bits, &v, 8);
    put_big_endian(body(8), bits);
    return *this;
  }
  Record& t(std::string_view v);
  Record& null() { return type(0); }
  /// The record's bytes (valid until the next encode) and a fresh start for the next row.
  std::string_view encode();

 private:
  // Serial type of an integer by its byte count (1, 2, 3, 4, 6 or 8).
  static constexpr uint8_t kIntegerType[9] = {0, 1, 2, 3, 4, 0, 5, 0, 6};
  static std::size_t integer_bytes(int64_t v) {
    if (v >= -128 && v <= 127) return 1;
    if (v >= -32768 && v <= 32767) return 2;
    if (v >= -8388608 && v <= 8388607) return 3;
    if (v >= -2147483648LL && v <= 2147483647LL) return 4;
    if (v >= -140737488355328LL && v <= 140737488355327LL) return 6;
    return 8;
  }
  static void put_big_endian(uint8_t* out, uint64_t v) {
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "put_big_endian swaps the bytes of a little-endian value");
    uint64_t big = __builtin_bswap64(v);
    std::memcpy(out, &big, 8);
  }
  Record& type(uint8_t serial) {
    if (types_used_ == types_.size()) types_.resize(2 * types_.size() + 64);
    types_[types_used_++] = static_cast<char>(serial);
    return *this;
  }
  /// n more bytes of the body (it only grows: no allocation once warm).
  uint8_t* body(std::size_t n) {
    if (body_used_ + n > body_.size()) body_.resize(std::max(2 * body_.size(), body_used_ + n + 64));
    uint8_t* at = reinterpret_cast<uint8_t*>(body_.data()) + body_used_;
    body_used_ += n;
    return at;
  }
  std::string types_, body_, bytes_;  // types_ holds varints (a text's serial type may be long)
  std::size_t types_used_ = 0, body_used_ = 0;
};

/// -1, 0 or 1: SQLite's order of two records column by column (NULL before numbers before
/// text; numbers by value whatever their storage, text by bytes: the BINARY collation).
int compare_records(std::string_view a, std::string_view b);

/// The database file: its page size, and pages appended past the ones SQLite wrote. Trees
/// may be built on different threads (each tree on one).
class PageFile {
 public:
  /// Reads the header of the database at fd (SQLite closed it); false with a message when it
  /// is not one this writer can extend (reserved bytes, a journal in WAL mode, ...).
  bool open(int fd, std::string* error);
  uint32_t usable_size() const { return usable_; }
  /// The next free page number (never the lock-byte page, which SQLite keeps unused).
  uint32_t allocate();
  /// Writes a whole page; false (with error()) when the disk refuses.
  bool write(uint32_t page, const uint8_t* data);
  /// Puts the database's size and a new change counter in its header: the file is
  /// complete. false with error().
  bool finish();
  std::string error() const;

 private:
  int fd_ = -1;
  uint32_t page_size_ = 0, usable_ = 0;
  mutable std::mutex mutex_;  // trees are built on two threads: pages_ and error_ are shared
  uint32_t pages_ = 0;
  std::string error_;
};

/// One B-tree written bottom-up. Table trees (rowid tables) take rows by rising rowid;
/// index trees (indexes and WITHOUT ROWID tables) take keys in rising order, checked: a key
/// not above the last one fails the export (an index out of order would be a corrupt file).
class BTreeBuilder {
 public:
  enum class Kind : uint8_t { table, index };
  BTreeBuilder(PageFile& file, Kind kind, uint32_t root, std::string name);
  BTreeBuilder(const BTreeBuilder&) = delete;
  BTreeBuilder& operator=(const BTreeBuilder&) = delete;

  bool add_row(int64_t rowid, std::string_view record);
  /// How an index tree's keys are known to rise: compared here record against record, or
  /// by the caller on its own values (cheaper: the spans' 5M keys, twice). A tree's keys
  /// are all one or all the other.
  enum class Order : uint8_t { check, checked_by_caller };
  bool add_key(std::string_view record, Order order = Order::check);
  /// Writes what is left, the root last, at the page SQLite gave the tree.
  bool finish();
  /// What failed: this tree's order, or the file (empty when nothing did).
  std::string error() const { return error_.empty() ? file_.error() : error_; }
  const std::string& name() const { return name_; }

 private:
  /// Cells waiting to be a page: their bytes one after the other.
  struct Cells {
    std::string bytes;
    std::vector<uint32_t> ends;  // where each cell ends in bytes
    std::size_t count() const { return ends.size(); }
    std::string_view cell(std::size_t k) const;
    void add(std::string_view cell);
    void pop();
    void clear();
  };
  /// An interior level: its children so far, each with the separator that follows it.
  struct Level {
    Cells separators;  // a cell body without the child pointer
    std::vector<uint32_t> children;
    std::size_t bytes = 0;  // the page's size holding every child as a cell
  };

  std::string_view make_leaf_cell(int64_t rowid, std::string_view record);
  bool write_overflow(std::string_view rest, uint32_t* first);
  bool fits(const Cells& cells, std::size_t header, std::string_view one_more) const;
  bool write_page(uint32_t page, uint8_t type, const Cells& cells, std::size_t count, uint32_t right);
  bool write_leaf(const Cells& leaf, uint32_t* page);
  static void add_interior_cell(Cells* cells, uint32_t child, std::string_view separator);
  uint8_t interior_type() const;
  bool push_up(std::size_t level, uint32_t child, std::string_view separator);
  bool finish_level(std::size_t level, uint32_t last_child);

  PageFile& file_;
  Kind kind_;
  uint32_t root_;
  std::string name_;
  std::string error_;
  Cells leaf_;
  Cells full_leaf_;           // index: a full leaf held back while its successor is unknown
  std::string separator_;     // index: the key after full_leaf_, waiting for one more key
  bool holding_ = false;
  int64_t last_rowid_ = 0;
  std::string last_key_;      // index: the last key, to check the order
  bool any_key_ = false;
  std::vector<Level> levels_;  // levels_[0] is the level above the leaves
  std::string cell_;          // the cell being made
  std::vector<uint8_t> page_;
};

}  // namespace jqtrace::sqlite_file
