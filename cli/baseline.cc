#include "baseline.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "load.h"
#include "stats_schema.h"

namespace jqtrace::cli {
namespace {

/// The first bytes of a regular file (empty for stdin or anything unreadable: the trace
/// loader then reports the problem properly).
std::string head_of(const std::string& path) {
  if (path == "-") return {};
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

int load_saved_stats(const BaselineOptions& opts, const CommonOptions& common, const StatsOptions& stats_options,
                     const Scope& scope,
                     BaselineShares* out) {
  auto same_grouping = [&](const BaselineShares& saved) {
    if (saved.by == group_by_name(stats_options.by)) return int{kOk};
    print_error(fmt::format("{}: the baseline is grouped by {}, this run by {}: use --by {} (or save the baseline "
                            "with --by {})",
                            opts.file, saved.by, group_by_name(stats_options.by), saved.by,
                            group_by_name(stats_options.by)));
    return int{kUsage};
  };
  return load_saved_shares(opts, common, scope, result::read_stats_json, out, same_grouping);
}

/// "+3.5 pp"; differences that round to zero print as +0.0, never -0.0.
std::string signed_pp(double pp) { return fmt::format("{:+.1f} pp", std::fabs(pp) < 0.05 ? 0.0 : pp); }

}  // namespace

bool baseline_is_saved(const BaselineOptions& opts, const std::function<bool(std::string_view)>& looks_like) {
  return looks_like(head_of(opts.file));
}

int load_saved_shares(const BaselineOptions& opts, const CommonOptions& common, const Scope& scope,
                      const SavedSharesReader& read, BaselineShares* out,
                      const std::function<int(const BaselineShares&)>& check) {
  // Never an output of this run (-o, --junit); a baseline trace is noted as it is opened.
  note_input_path(opts.file, "the baseline being read");
  std::ifstream in(opts.file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  if (!read(text.str(), out, &error)) {
    print_error(fmt::format("{}: {}", opts.file, error));
    return kInput;
  }
  if (check)
    if (int status = check(*out)) return status;
  if (out->scope.empty()) {
    print_warning(common, fmt::format("{}: the baseline does not say which scope it was saved with (saved by an "
                                           "older jqtrace); comparing it with {}",
                                           opts.file, scope.label));
  } else if (out->scope != scope.label) {
    print_error(fmt::format("{}: the baseline's scope is '{}', this run's is '{}': give the same scope (or save the "
                            "baseline with this one)",
                            opts.file, out->scope, scope.label));
    return kUsage;
  }
  return kOk;
}

void add_baseline_options(CLI::App& cmd, BaselineOptions& opts, const std::string& saved) {
  auto* baseline = cmd.add_option("--baseline", opts.file,
                                  fmt::format("Compare shares with a baseline: a trace (same scope{}) or a saved "
                                              "{} --format json",
                                              saved == "stats" ? " and grouping" : "", saved))
                       ->option_text("FILE");
  auto* delta = cmd.add_option("--max-share-delta", opts.max_share_delta_pp,
                               saved == "stats"
                                   ? "With --baseline: fail when a group's share moves more than PP percentage points"
                                   : "With --baseline: fail when a class's or group's share moves more than PP "
                                     "percentage points")
                    ->option_text("PP")
                    ->check(CLI::NonNegativeNumber);
  baseline->needs(delta);
  delta->needs(baseline);
}

int load_baseline(const BaselineOptions& opts, const CommonOptions& common, const ScopeOptions& scope_options, const Scope& scope,
                  const StatsOptions& stats_options, const GateOptions& gates, BaselineShares* out) {
  if (result::looks_like_stats_json(head_of(opts.file))) return load_saved_stats(opts, common, stats_options, scope, out);
  Trace trace;
  if (int status = load_for_analysis(opts.file, common, &trace)) return status;
  if (!complete_enough_to_check(trace, opts.file, gates)) return kCheckFailed;
  Scope baseline_scope;
  if (!resolve_scope_options(scope_options, trace, common, &baseline_scope)) {
    print_error(fmt::format("{}: the scope above is not in the baseline", opts.file));
    return kUsage;
  }
  if (!scope_checkable(baseline_scope, opts.file)) return kUsage;
  SpanIndex index(trace, stats_options.threads);
  StatsOptions options = stats_options;
  options.distributions = false;
  *out = baseline_shares(compute_stats(trace, index, baseline_scope.range, options));
  out->scope = baseline_scope.label;
  return kOk;
}

void report_share_moves(const std::vector<ShareDelta>& deltas, const BaselineOptions& opts, const std::string& metric) {
  for (const ShareDelta& d : deltas)
    if (d.tripped)
      print_error(fmt::format("gate failed: {}({}) moved {}: {:.1f}% in {}, {:.1f}% now (limit {} pp)", metric, d.name,
                              signed_pp(d.delta_pp), d.baseline_share_pct, opts.file, d.share_pct,
                              opts.max_share_delta_pp));
}

}  // namespace jqtrace::cli
