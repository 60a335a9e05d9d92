#pragma once
// The "jqtrace/latency/1" schema: the marker lane's time in the scope by group and class
// (rows), the per-class totals (classes), the longest imbalance waits with the chunk that
// ended last (waits), and with --per-unit one row a unit (units).
#include <string>
#include <string_view>
#include <vector>

#include "common_fields.h"
#include "latency.h"
#include "model.h"
#include "scope.h"

namespace jqtrace::result {

struct LatencyContext {
  const Trace* trace = nullptr;
  const LatencyAnalysis* analysis = nullptr;  ///< per-unit rows are measured as they are written
  std::string file;
  Scope scope;
  TraceFacts facts;
  /// Why this lane: "the marker lane", "the caller: no markers", "--lane".
  std::string lane_reason = "the marker lane";
  std::string per_unit;             ///< the kind of the unit rows ("" none)
  UnitRule per_unit_rule;
  std::vector<Unit> units;          ///< the units of per_unit in the scope, in the order to write them
  const std::vector<GateResult>* gates = nullptr;
  /// --baseline: each share's move (and the file and limit), or nullptr.
  const std::vector<ShareDelta>* baseline = nullptr;
  std::string baseline_file;
  double max_share_delta_pp = 0;
};

inline constexpr std::string_view kLatencySchema = "jqtrace/latency/1";

Document latency_document(const LatencyParts& scope_parts, const LatencyContext& c);

/// Each class's colour in charts (report's bars and their legend): work green, publish
/// amber, imbalance red, wake-up purple, wait pink, span blue, outside grey, not recorded
/// near-black.
const char* latency_class_color(LatencyClass c);

/// What a baseline compares: every class's share of the scope (the classes the trace can
/// have), then every group's (its wall on the lane), each named as its gate names it.
std::vector<GroupShare> latency_shares(const LatencyParts& parts, const LatencyAnalysis& analysis);
/// True when text starts like a saved `latency --format json` (its schema is the first key).
bool looks_like_latency_json(std::string_view head);
/// Reads a saved `latency --format json`'s shares and scope; false with a reason when it is
/// not one.
bool read_latency_json(std::string_view text, BaselineShares* out, std::string* error);

/// The gates' numbers: latency(GROUP), latency(CLASS), latency(GROUP, CLASS): % of the
/// scope; latency_us(...) the same in µs.
MetricSet latency_metrics(const LatencyParts& parts, const LatencyAnalysis& analysis);

/// "GROUP, CLASS" as latency_metrics names it, from "GROUP,CLASS" with any spacing (the
/// comma nearest the end splits: a group's name may hold one). Other text is returned as is.
std::string latency_gate_arg(const std::string& arg);

}  // namespace jqtrace::result
