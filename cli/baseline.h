#pragma once
// stats --baseline FILE --max-share-delta PP: every group's share compared with a
// baseline's (a trace analysed with the same scope and grouping, or a saved
// `stats --format json`); moves beyond PP percentage points fail the run.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common.h"
#include "gate_metrics.h"
#include "gates.h"
#include "scope_options.h"

namespace jqtrace::cli {

struct BaselineOptions {
  std::string file;
  double max_share_delta_pp = 0;
  bool any() const { return !file.empty(); }
};

/// saved: the command whose saved JSON a baseline may be ("stats").
void add_baseline_options(CLI::App& cmd, BaselineOptions& opts, const std::string& saved = "stats");

/// The baseline's shares under the same scope and grouping: a trace is analysed with the
/// scope options (scope is what they gave on this run's trace); a saved JSON must have
/// been saved with the same scope label. Returns kOk, or an exit status after printing
/// why (kUsage: grouping or scope mismatch, scope not in the baseline; kInput:
/// unreadable; kCheckFailed: a truncated baseline trace, unless --allow-truncated).
int load_baseline(const BaselineOptions& opts, const CommonOptions& common, const ScopeOptions& scope_options, const Scope& scope,
                  const StatsOptions& stats_options, const GateOptions& gates, BaselineShares* out);

/// True when the baseline file is a saved document looks_like recognises (by its first bytes).
bool baseline_is_saved(const BaselineOptions& opts, const std::function<bool(std::string_view)>& looks_like);
/// A saved document's shares, read by read; check (may be empty) says first whether they
/// are comparable (kOk, or an exit status after saying why), then they must have been
/// saved with this run's scope. kOk, kUsage (another scope) or kInput (unreadable, not
/// such a document).
using SavedSharesReader = std::function<bool(std::string_view, BaselineShares*, std::string*)>;
int load_saved_shares(const BaselineOptions& opts, const CommonOptions& common, const Scope& scope,
                      const SavedSharesReader& read, BaselineShares* out,
                      const std::function<int(const BaselineShares&)>& check = {});

/// One line on stderr per share that moved too far ("gate failed: share(G) moved ...";
/// metric names what moved: share, latency).
void report_share_moves(const std::vector<ShareDelta>& deltas, const BaselineOptions& opts,
                        const std::string& metric = "share");



}  // namespace jqtrace::cli
