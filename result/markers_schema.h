#pragma once
// The "jqtrace/markers/1" schema: every marker kind with its units' durations, and with
// --kind K one row per unit of K with its range stats and each category's share.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gate.h"
#include "markers.h"
#include "common_fields.h"
#include "model.h"

namespace jqtrace::result {

struct MarkersContext {
  std::string file;  ///< as shown
  QuantileMethod quantiles = QuantileMethod::inclusive;
  std::string kind;  ///< --kind; empty: the kinds only
  /// The order of the per-category share columns: the trace's categories (profile id
  /// order, then the legacy ones); empty for generic traces (then by name), so a
  /// spreadsheet's columns do not move from trace to trace.
  std::vector<std::string> categories;
  const std::vector<GateResult>* gates = nullptr;
  TraceFacts facts;  ///< attribution, truncation, lanes that stopped early
};

/// Tables and Markdown show the share columns of at most this many groups, the busiest (a
/// trace of 5,000 categories made a table 5,000 columns wide, and gigabytes of cells): the
/// 24 a picture colours and its "N others", so report's folded tables are never cut.
constexpr std::size_t kMaxTextShareColumns = 25;

/// Rows of the units [from, from + count), measured on demand: add(row) for each, in order.
using UnitBlocks =
    std::function<void(std::size_t from, std::size_t count, const std::function<void(const UnitRow&)>& add)>;

/// The units table of --kind, built a unit at a time (add: the rows held as numbers, ~100
/// bytes a unit) or streamed (stream: nothing held a unit; the rows measured a block at a
/// time, once to learn the share columns and again as they are written).
class UnitsTable {
 public:
  /// share_order: MarkersContext::categories.
  explicit UnitsTable(std::vector<std::string> share_order);
  void add(const UnitRow& u);
  /// The table's `count` rows come from blocks (in the caller's order), not from add():
  /// the memory of a table of ten million units is a block's (kStreamBlock units), not ten
  /// million rows'. Measures every block once now, for the share columns.
  void stream(std::size_t count, UnitBlocks blocks);
  static constexpr std::size_t kStreamBlock = 1024;
  /// The table: one share column per group some unit has, in share_order, then by name.
  Table finish() &&;

 private:
  std::size_t slot_of(const std::string& group);
  /// The share columns learn of u's groups (their names, busy time, guessed names).
  void account(const UnitRow& u);

  /// What a unit's row prints, in numbers: the table's rows are made from these as they
  /// are written (a row of cells took ~550 bytes a unit: 534 MB for a million units, 5.3 GB
  /// for ten million; this is 96 bytes and 16 a share that is not 0%).
  struct UnitNumbers {
    int64_t index, arg, lo, hi, busy_ns, wait_ns;
    uint64_t events, publishes;
    double idle_pct, parallelism;
    std::size_t shares_from;  ///< its shares are shares[shares_from, the next unit's)
  };
  struct Stored {
    std::vector<UnitNumbers> units;
    std::vector<std::pair<std::size_t, double>> shares;  ///< (slot, then column; share %)
    /// Unit r's shares are shares[units[r].shares_from, shares_end(r)).
    std::size_t shares_end(std::size_t r) const {
      return r + 1 < units.size() ? units[r + 1].shares_from : shares.size();
    }
    /// u's numbers and its shares by slot (slot_of: a group's slot, known already).
    void keep(const UnitRow& u, const std::map<std::string, std::size_t>& slot_of);
    /// Each share's slot made its column, each unit's shares in column order.
    void to_columns(const std::vector<std::size_t>& column_of);
    /// Row r of the table (columns wide).
    void make_row(std::size_t r, std::size_t columns, Row& row) const;
  };
  /// The streamed table's source and the block of it measured last.
  struct Streamed {
    std::size_t count = 0;
    UnitBlocks blocks;
    std::size_t from = SIZE_MAX;  ///< the block's first unit
    Stored block;
  };

  std::vector<std::string> share_order_;
  Table table_;
  std::shared_ptr<Stored> stored_ = std::make_shared<Stored>();
  std::shared_ptr<Streamed> streamed_;  ///< set by stream()
  std::vector<std::string> groups_;  ///< by slot: order of first appearance
  std::vector<int64_t> busy_ns_;     ///< by slot: the units' busy time in it (0: none spent any)
  std::vector<bool> guessed_;        ///< by slot: a category named by stage count (marked * for people)
  std::map<std::string, std::size_t> slot_;
};

/// The kinds' rows are made from `kinds` as the document is written: they must outlive it.
Document markers_document(const std::vector<KindSummary>& kinds, const std::vector<UnitRow>& units,
                          const MarkersContext& context);
/// The same document with the units added already.
Document markers_document(const std::vector<KindSummary>& kinds, UnitsTable&& units, const MarkersContext& context);

}  // namespace jqtrace::result
