#pragma once
// The "jqtrace/markers/1" schema: every marker kind with its units' durations, and with
// --kind K one row per unit of K with its range stats and each category's share.
#include <map>
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

/// The units table of --kind, built a unit at a time: a caller can measure a kind's
/// units a block at a time and drop each block's UnitRows (a RangeStats each, ~300 bytes a
/// category) once added, so they never all exist at once.
class UnitsTable {
 public:
  /// share_order: MarkersContext::categories.
  explicit UnitsTable(std::vector<std::string> share_order);
  void add(const UnitRow& u);
  /// The rows by duration, the longest first (ties: the earlier unit first): the unit that
  /// `--marker KIND slowest` cuts is the first row.
  void sort_slowest_first();
  /// The table: one share column per group some unit has, in share_order, then by name.
  Table finish() &&;

 private:
  std::size_t slot_of(const std::string& group);

  std::vector<std::string> share_order_;
  Table table_;
  std::size_t first_share_ = 0;      ///< where a row's shares start
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
