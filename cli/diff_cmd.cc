// jqtrace diff A B: load both → same scope and grouping → stats side by side → render.
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/core.h>
#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "diff.h"
#include "diff_schema.h"
#include "gates.h"
#include "grouping.h"
#include "load.h"
#include "scope_options.h"
#include "unit_changes.h"

namespace jqtrace::cli {
namespace {

struct DiffCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::string by;
  std::string quantiles;
  std::vector<std::string> files;  ///< A B, or with --vs: side A's runs
  std::vector<std::string> vs;     ///< --vs: side B's runs
  double alpha = 0.05;
  bool latency = false;  ///< --latency: the changes table also compares each unit's latency parts
  GateOptions gates;
};

/// One side: its first run's stats over the scope and its marker kinds (the side-by-side
/// tables), and every run's units (pooled for the changes table).
struct Side {
  std::vector<std::string> paths;  ///< its runs, as given
  std::vector<std::string> names;  ///< its runs, as shown
  Scope scope;
  RangeStats stats;
  std::vector<KindSummary> kinds;
  result::TraceFacts facts;
  std::vector<std::vector<KindSamples>> run_units;  ///< a run's units, by kind
  std::vector<UnitRequest> requests;                ///< how a run's units were cut (joint rules)
  std::vector<MeasurePolicy> measured;              ///< which kinds' units a run measured
  std::vector<KindSamples> units;                   ///< every run's, pooled (pool_runs)
};

/// Reads run `run` of a side with the units cut as its request says, measuring the kinds
/// its policy says: the first gives the side's stats (grouped as `by`, else as --by
/// says), every run its units.
int analyse_run(const DiffCommandOptions& o, std::size_t run, const GroupBy* by, Side* side) {
  const UnitRequest& unit_at = side->requests[run];
  const std::string& path = side->paths[run];
  // A run read again (to cut or measure its units otherwise) said its warnings the first time.
  CommonOptions common = o.common;
  common.quiet = common.quiet || !side->names[run].empty();
  Trace trace;  // freed before the next run is read
  if (int status = load_for_analysis(path, common, &trace)) return status;
  Scope scope;
  if (!resolve_scope_options(o.scope, trace, common, &scope)) {
    print_error(fmt::format("{}: the scope above is not in this trace", display_name(path)));
    return kUsage;
  }
  SpanIndex index(trace, worker_threads(o.common));
  if (run == 0) {
    StatsOptions options;
    if (by) options.by = *by;
    else if (!choose_grouping(o.by, trace, &options.by)) return kUsage;
    options.distributions = false;
    options.quantiles = quantile_method(o.quantiles);
    side->scope = scope;
    side->stats = compute_stats(trace, index, scope.range, options);
    side->kinds = summarize_kinds(trace, unit_at, options.quantiles);
    side->facts = result::trace_facts(trace);
  }
  side->names[run] = display_name(path);
  side->run_units[run].clear();
  add_unit_samples(trace, index, unit_at, worker_threads(o.common), &side->run_units[run], o.latency,
                   side->measured[run]);
  return kOk;
}

int analyse_side(const DiffCommandOptions& o, const GroupBy* by, Side* side) {
  side->names.assign(side->paths.size(), "");  // "": not read yet
  side->run_units.assign(side->paths.size(), {});
  side->requests.assign(side->paths.size(), unit_at_request(o.scope.unit_at));
  side->measured.assign(side->paths.size(), MeasurePolicy{side->paths.size() > 1, {}});
  for (std::size_t run = 0; run < side->paths.size(); ++run)
    if (int status = analyse_run(o, run, by, side)) return status;
  return kOk;
}

/// Each kind's units on a side, and whether some run left them unmeasured.
using KindCounts = std::map<std::string, std::pair<std::size_t, bool>>;
KindCounts kind_counts(const Side& side) {
  KindCounts counts;
  for (const std::vector<KindSamples>& run : side.run_units)
    for (const KindSamples& k : run) {
      auto& [units, unmeasured] = counts[k.kind];
      units += k.dur_ns.size();
      unmeasured = unmeasured || k.unmeasured_runs > 0;
    }
  return counts;
}

/// The kinds both sides have with enough units a side to test (pooled over their runs).
std::set<std::string> testable_kinds(const KindCounts& counts_a, const KindCounts& counts_b) {
  std::set<std::string> kinds;
  for (const auto& [kind, count_a] : counts_a)
    if (auto found = counts_b.find(kind);
        found != counts_b.end() && count_a.first >= kMinTestedValues && found->second.first >= kMinTestedValues)
      kinds.insert(kind);
  return kinds;
}

/// A kind's rule for both sides, decided on all their runs' evidence together.
struct JointRule {
  std::string kind;
  UnitRule rule;
  std::size_t recut = 0;  ///< runs read again to cut their units by it
};

/// The kinds of the changes table (testable) whose units auto cut (each run on its own
/// evidence) in two ways across the runs of both sides, each with the rule all their
/// evidence says together.
std::vector<JointRule> joint_rules(const Side& a, const Side& b) {
  std::set<std::string> testable = testable_kinds(kind_counts(a), kind_counts(b));
  std::map<std::string, std::vector<UnitRule>> auto_rules;
  for (const Side* side : {&a, &b})
    for (const std::vector<KindSamples>& run : side->run_units)
      for (const KindSamples& k : run)
        for (const UnitRule& r : k.rules)
          if (r.automatic && r.measured && !r.recorded && testable.count(k.kind)) auto_rules[k.kind].push_back(r);
  std::vector<JointRule> joint;
  for (const auto& [kind, rules] : auto_rules) {
    bool one_way = std::all_of(rules.begin(), rules.end(), [&](const UnitRule& r) {
      return r.at == rules.front().at && r.ambiguous == rules.front().ambiguous;
    });
    if (!one_way) joint.push_back({kind, decide_jointly(rules)});
  }
  return joint;
}

/// Each kind's first rule in a run, by kind: looked up once a kind, not searched (a trace can
/// have a kind an instant: a search a kind made pooled diff quadratic in kinds).
std::map<std::string_view, const UnitRule*> run_rules(const std::vector<KindSamples>& run) {
  std::map<std::string_view, const UnitRule*> rules;
  for (const KindSamples& k : run)
    if (!k.rules.empty()) rules.emplace(k.kind, &k.rules.front());
  return rules;
}

/// The joint rules by kind (a kind's runs agreed where it has none).
std::map<std::string_view, const JointRule*> joint_by_kind(const std::vector<JointRule>& joint) {
  std::map<std::string_view, const JointRule*> by_kind;
  for (const JointRule& j : joint) by_kind.emplace(j.kind, &j);
  return by_kind;
}

template <typename Map>
auto find_or_null(const Map& map, std::string_view key) -> typename Map::mapped_type {
  auto it = map.find(key);
  return it == map.end() ? nullptr : it->second;
}

/// Marks the kinds of a run cut as their joint rule says with that rule: its ambiguity
/// (cut as asked, but the evidence was no clearer) and its evidence; the side-by-side
/// kinds table (of the first run) shows the rule its units were cut by.
void take_joint_rules(const std::vector<JointRule>& joint, Side* side, std::size_t run) {
  auto joint_of = joint_by_kind(joint);
  for (KindSamples& k : side->run_units[run])
    if (const JointRule* j = find_or_null(joint_of, k.kind); j && !k.rules.empty() && k.rules.front().at == j->rule.at) {
      k.ambiguous = j->rule.ambiguous;
      UnitRule rule = j->rule;
      rule.nested_in = k.rules.front().nested_in;
      rule.nested_in_at = k.rules.front().nested_in_at;
      k.rules.assign(1, rule);
    }
  if (run != 0) return;
  auto first_run = run_rules(side->run_units[0]);
  for (KindSummary& k : side->kinds)
    if (const UnitRule* cut = find_or_null(first_run, k.kind); cut && joint_of.count(k.kind)) k.rule = *cut;
}

/// Reads run `run` of a side again, as its request and measuring now say (B grouped as A
/// is), and marks its kinds' joint rules. Standard input cannot be read twice: its units
/// stay as they were (marked where they agree with a joint rule).
int read_again(const DiffCommandOptions& o, const std::vector<JointRule>& joint, const Side& a, Side* side,
               std::size_t run) {
  if (side->paths[run] != "-")
    if (int status = analyse_run(o, run, side == &a ? nullptr : &a.stats.by, side)) return status;
  take_joint_rules(joint, side, run);
  return kOk;
}

/// Cuts every run's units of the kinds auto cut two ways by the rule of both sides'
/// evidence (SPEC §2 "Units"; issue 54): the runs whose own rule differs are read again
/// with it (standard input cannot be: its units stay as they were cut, and the warning of
/// warn_incomparable says so). A joint rule that is ambiguous leaves the kind's rows
/// untested on both sides.
int apply_joint_rules(const DiffCommandOptions& o, std::vector<JointRule>* joint, Side* a, Side* b) {
  if (joint->empty()) return kOk;
  for (Side* side : {a, b})
    for (std::size_t run = 0; run < side->paths.size(); ++run) {
      UnitRequest& request = side->requests[run];
      std::size_t asked = request.kinds.size();
      auto own_rules = run_rules(side->run_units[run]);
      for (JointRule& j : *joint) {
        const UnitRule* own = find_or_null(own_rules, j.kind);
        if (!own || !own->automatic || own->recorded || own->at == j.rule.at) continue;
        request.kinds.emplace_back(j.kind, j.rule.at);
        ++j.recut;
      }
      if (request.kinds.size() == asked) take_joint_rules(*joint, side, run);  // cut as the joint rule says
      else if (int status = read_again(o, *joint, *a, side, run)) return status;
    }
  return kOk;
}

/// Reads again the runs that left unmeasured a kind their side's runs together have enough
/// units of to test (MeasurePolicy: runs of traces of many kinds, pooled), measuring it.
int measure_pooled_kinds(const DiffCommandOptions& o, const std::vector<JointRule>& joint, Side* a, Side* b) {
  auto counts_a = kind_counts(*a), counts_b = kind_counts(*b);
  std::set<std::string> kinds;
  for (const std::string& kind : testable_kinds(counts_a, counts_b))
    if (counts_a[kind].second || counts_b[kind].second) kinds.insert(kind);
  if (kinds.empty()) return kOk;
  for (Side* side : {a, b})
    for (std::size_t run = 0; run < side->paths.size(); ++run) {
      bool unmeasured = std::any_of(side->run_units[run].begin(), side->run_units[run].end(),
                                    [&](const KindSamples& k) { return k.unmeasured_runs > 0 && kinds.count(k.kind); });
      if (!unmeasured) continue;
      side->measured[run].also = kinds;
      if (int status = read_again(o, joint, *a, side, run)) return status;  // standard input: no rows for them
    }
  return kOk;
}

void pool_runs(Side* side) {
  for (std::vector<KindSamples>& run : side->run_units) pool_unit_samples(std::move(run), &side->units);
  side->run_units.clear();
}

/// "ROW has too few units to test (3 and 3; 6 a side needed)".
std::string too_few_units(const std::string& row, std::size_t n_a, std::size_t n_b) {
  return fmt::format("{} has too few units to test ({} and {}; {} a side needed)", row, n_a, n_b, kMinTestedValues);
}

/// Why row r cannot be put to a gate, naming the row; "" when it can. Such a gate is a usage
/// error (exit 2), never a silent 0: too few units (no test), units cut by an ambiguous rule.
std::string unjudgeable(const ChangeRow& r) {
  std::string row = r.group == kUnitRow ? fmt::format("the '{}' units row", r.kind)
                                        : fmt::format("the row of '{}' in '{}' units", r.group, r.kind);
  if (!r.test.tested && r.of == ChangeRow::Of::time)
    return fmt::format("{} has too few units in which '{}' runs to test ({} of {} and {} of {}; {} a side needed)",
                       row, r.group, r.test.n_a, r.runs.n_a, r.test.n_b, r.runs.n_b, kMinTestedValues);
  if (!r.test.tested) return too_few_units(row, r.test.n_a, r.test.n_b);
  if (r.ambiguous)
    return fmt::format("{} is of units cut by a guess: where '{}' markers stand in their units is ambiguous on a "
                       "side; give --unit-at",
                       row, r.kind);
  return "";
}

/// "token 3 and 3, step 1 and 1" (the first few, then how many more).
std::string untested_list(const std::vector<UntestedKind>& untested) {
  constexpr std::size_t kShown = 4;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < untested.size() && i < kShown; ++i)
    parts.push_back(fmt::format("{} {} and {}", untested[i].kind, untested[i].units_a, untested[i].units_b));
  if (untested.size() > kShown) parts.push_back(fmt::format("{} more kinds", untested.size() - kShown));
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// Each name a gate may give its row: "GROUP, KIND" and a kind's name their own; a bare
/// group, its row in the kind with the most units (the most telling sample), whatever its
/// kind's rule: a row that cannot judge says so rather than hand the gate another kind's
/// row. (A share-of-units row is read, not gated: its change is in points, not in %.)
std::map<std::string, const ChangeRow*> rows_by_gate_name(const std::vector<ChangeRow>& rows) {
  std::map<std::string, const ChangeRow*> row_of;
  for (const ChangeRow& r : rows) {
    if (r.of == ChangeRow::Of::units_share) continue;
    row_of[r.group + ", " + r.kind] = &r;
    if (r.group == kUnitRow) {
      row_of[r.kind] = &r;
    } else if (const ChangeRow*& best = row_of[r.group];
               !best || r.runs.n_a + r.runs.n_b > best->runs.n_a + best->runs.n_b) {
      best = &r;
    }
  }
  return row_of;
}

/// Holm over the rows the gates name (SPEC §2: gates are their own family, whatever else the
/// table shows; rows of identical samples are one test): each gated row's p_adj.
std::map<const ChangeRow*, double> gated_family(const std::map<std::string, const ChangeRow*>& row_of,
                                                const std::vector<GateSource>& gates) {
  std::vector<const ChangeRow*> named;
  for (const GateSource& g : gates) {
    if (g.gate.metric != "slower" && g.gate.metric != "faster") continue;
    auto it = row_of.find(g.gate.arg);
    if (it == row_of.end() || !unjudgeable(*it->second).empty()) continue;
    if (std::find(named.begin(), named.end(), it->second) == named.end()) named.push_back(it->second);
  }
  std::vector<double> p;
  std::vector<uint64_t> keys;
  for (const ChangeRow* r : named) {
    p.push_back(r->test.p);
    keys.push_back(r->test.digest);
  }
  std::vector<double> adjusted = holm_adjust_distinct(p, keys);
  std::map<const ChangeRow*, double> p_adj;
  for (std::size_t i = 0; i < named.size(); ++i) p_adj[named[i]] = adjusted[i];
  return p_adj;
}

/// slower(X) and faster(X) of the changes table: X a marker kind (its unit durations), a
/// group (its row in the kind with the most units), or "GROUP, KIND". A row's value is its
/// change in % (100 (ratio - 1); faster: the negative), known within its 95% interval: a gate
/// fails when the whole interval trips it and the change is significant among the gated
/// rows, passes when none of the interval does, else cannot judge (exit 2). A row that
/// cannot be tested withholds its value (exit 2), saying why; a group of the traces with no
/// busy time in any unit says that.
MetricSet change_metrics(const std::vector<ChangeRow>& rows, const std::vector<std::string>& idle_groups,
                         const std::vector<UntestedKind>& untested, const std::vector<GateSource>& gates,
                         double alpha) {
  MetricSet m;
  m.declare("slower", "marker kind or group");
  m.declare("faster", "marker kind or group");
  std::map<std::string, const ChangeRow*> row_of = rows_by_gate_name(rows);
  std::map<const ChangeRow*, double> family = gated_family(row_of, gates);
  for (const auto& [name, row] : row_of) {
    const ChangeRow& r = *row;
    if (std::string why = unjudgeable(r); !why.empty()) {
      for (const char* metric : {"slower", "faster"}) m.withhold(metric, name, why);
      continue;
    }
    const ShiftTest& t = r.test;
    auto p_adj = family.find(row);  // a row no gate names is in no family: its gates are none
    MetricInterval slower;
    slower.lo = t.ci_lo_pct();
    slower.hi = t.ci_hi_pct();
    slower.changed = t.ratio_lo > 1 || t.ratio_hi < 1;
    slower.significant = p_adj != family.end() && p_adj->second < alpha;
    slower.family = p_adj == family.end() ? "" : fmt::format("p_adj {:.2g} over {} gated row{}", p_adj->second,
                                                              family.size(), family.size() == 1 ? "" : "s");
    MetricInterval faster = slower;
    faster.lo = -slower.hi;
    faster.hi = -slower.lo;
    m.set("slower", name, t.shift_pct());
    m.set("faster", name, -t.shift_pct());
    m.bound("slower", name, slower);
    m.bound("faster", name, faster);
    std::string detail = fmt::format("{}/{}: x{:.3f}, {}{}", r.kind, r.group, t.ratio,
                                     slower.family.empty() ? fmt::format("p {:.2g}", t.p) : slower.family,
                                     t.stratified() ? fmt::format(", within {} strata", t.strata) : "");
    for (const char* metric : {"slower", "faster"}) m.explain(metric, name, detail);
  }
  // Kinds without rows (too few units a side) still name why a gate on them is not judged.
  for (const UntestedKind& k : untested)
    for (const char* metric : {"slower", "faster"})
      m.withhold(metric, k.kind, too_few_units(fmt::format("the '{}' units row", k.kind), k.units_a, k.units_b));
  for (const std::string& group : idle_groups) {
    if (row_of.count(group)) continue;
    std::string why = rows.empty() && !untested.empty()
                          ? fmt::format("'{}' has no row: no marker kind has {} units a side to test ({})", group,
                                        kMinTestedValues, untested_list(untested))
                          : fmt::format("'{}' has no busy time in any unit of either side: nothing to compare", group);
    for (const char* metric : {"slower", "faster"}) m.withhold(metric, group, why);
  }
  return m;
}

/// Every group of either side's stats (change_metrics says of those without a row that
/// they had no busy time in any unit).
std::vector<std::string> group_names(const RangeStats& a, const RangeStats& b) {
  std::vector<std::string> names;
  for (const RangeStats* s : {&a, &b})
    for (const GroupStats& g : s->groups) names.push_back(g.name);
  return names;
}

/// False (after saying so) when one file is given twice on a side (by any name): its units
/// would count twice, and n with them.
bool each_run_once(const std::vector<std::string>& paths, const char* side) {
  std::map<std::pair<dev_t, ino_t>, const std::string*> seen;
  for (const std::string& path : paths) {
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // opening reports it
    auto [it, added] = seen.try_emplace({st.st_dev, st.st_ino}, &path);
    if (added) continue;
    print_error(fmt::format("diff: {} is given twice on side {}{}: its units would count twice", path, side,
                            *it->second == path ? "" : " (as " + *it->second + ")"));
    return false;
  }
  return true;
}

/// Units of a kind on a side, a run: "12", or "11.5" pooled over runs of differing counts.
std::string units_a_run(const Side& side, const KindSamples* k) {
  if (!k) return "0";
  double per_run = static_cast<double>(k->dur_ns.size()) / static_cast<double>(std::max<std::size_t>(1, side.names.size()));
  return fmt::format("{:g}", per_run);
}

/// A side's pooled kinds by name (a generic trace can have a kind an instant: one lookup a
/// kind, not a search).
std::map<std::string, const KindSamples*> pooled_by_kind(const Side& side) {
  std::map<std::string, const KindSamples*> by_kind;
  for (const KindSamples& k : side.units) by_kind.emplace(k.kind, &k);
  return by_kind;
}

/// Warnings (unless -q) when the sides cannot be compared unit by unit as they stand: a
/// kind whose units are cut differently on each side (A's tokens end at their markers,
/// B's start at them), and a different workload (units a run of some kind differ).
void warn_incomparable(const Side& a, const Side& b, const CommonOptions& common) {
  if (common.quiet) return;
  std::map<std::string, const KindSummary*> b_kinds;
  for (const KindSummary& k : b.kinds) b_kinds.emplace(k.kind, &k);
  auto pooled_a = pooled_by_kind(a), pooled_b = pooled_by_kind(b);
  auto pooled = [](const std::map<std::string, const KindSamples*>& by_kind, const std::string& kind) {
    auto it = by_kind.find(kind);
    return it == by_kind.end() ? nullptr : it->second;
  };
  std::vector<std::string> structure;
  std::size_t structure_kinds = 0;
  for (const KindSummary& ka : a.kinds) {
    auto found = b_kinds.find(ka.kind);
    if (found == b_kinds.end()) continue;
    const KindSummary* kb = found->second;
    if (ka.rule.at != kb->rule.at && ka.count > 0 && kb->count > 0)
      print_warning(common, fmt::format("units of '{0}' {1} at their markers in A but {2} at them in B (each side "
                                        "decided alone); the changes compare units cut two ways: give --unit-at {0}=start "
                                        "or {0}=end",
                                        ka.kind, unit_at_name(ka.rule.at), unit_at_name(kb->rule.at)));
    std::string per_a = units_a_run(a, pooled(pooled_a, ka.kind)), per_b = units_a_run(b, pooled(pooled_b, ka.kind));
    if (per_a == per_b) continue;
    if (++structure_kinds <= 4) structure.push_back(fmt::format("{} {} a run in A, {} in B", ka.kind, per_a, per_b));
  }
  if (structure_kinds > 4) structure.push_back(fmt::format("{} more kinds", structure_kinds - 4));
  if (!structure.empty())
    print_warning(common, fmt::format("the sides' workloads differ ({}): their units are not the same work",
                                      fmt::join(structure, "; ")));
}

/// How each kind of the changes table was cut, for the heading and the unit_rules table.
std::vector<result::KindRules> kind_rules(const Side& a, const Side& b, const std::vector<JointRule>& joint) {
  std::vector<result::KindRules> rules;
  auto joint_of = joint_by_kind(joint);
  for_each_common_kind(a.units, b.units, [&](const KindSamples& ka, const KindSamples& kb) {
    if (!can_test(ka, kb) || ka.rules.empty() || kb.rules.empty()) return;  // no rows
    const JointRule* j = find_or_null(joint_of, ka.kind);
    rules.push_back({ka.kind, ka.rules.front(), kb.rules.front(), j != nullptr, j ? j->recut : 0});
  });
  return rules;
}

int run_diff(const DiffCommandOptions& o) {
  std::vector<GateSource> gates;
  if (!parse_gate_options(o.gates, o.common.output, &gates)) return kUsage;
  std::vector<std::string> side_a = o.files, side_b = o.vs;
  if (o.vs.empty()) {
    if (o.files.size() != 2) {
      print_error(fmt::format("diff: give two traces A B, or runs A... --vs B... ({} given)", o.files.size()));
      return kUsage;
    }
    side_a = {o.files[0]};
    side_b = {o.files[1]};
  }
  if (std::count(side_a.begin(), side_a.end(), "-") + std::count(side_b.begin(), side_b.end(), "-") > 1) {
    print_error("diff: standard input can be only one of the traces");
    return kUsage;
  }
  if (!each_run_once(side_a, "A") || !each_run_once(side_b, "B")) return kUsage;
  Side a, b;
  a.paths = side_a;
  b.paths = side_b;
  if (int status = analyse_side(o, nullptr, &a)) return status;
  if (int status = analyse_side(o, &a.stats.by, &b)) return status;  // B is grouped as A is
  std::vector<JointRule> joint = joint_rules(a, b);
  if (int status = apply_joint_rules(o, &joint, &a, &b)) return status;
  if (int status = measure_pooled_kinds(o, joint, &a, &b)) return status;
  pool_runs(&a);
  pool_runs(&b);
  warn_incomparable(a, b, o.common);
  TraceDiff d = diff_stats(a.stats, b.stats, a.kinds, b.kinds);
  std::vector<ChangeRow> changes = unit_changes(a.units, b.units, o.alpha);
  std::vector<UntestedKind> untested = untested_kinds(a.units, b.units);
  std::vector<GateResult> results;
  if (!gates.empty()) {
    MetricSet metrics = change_metrics(changes, group_names(a.stats, b.stats), untested, gates, o.alpha);
    if (!evaluate_gates(gates, metrics, &results, &o.gates)) return kUsage;
    if (int status = write_junit(o.gates, "diff", gates, &results)) return status;
  }
  result::DiffContext context{o.alpha, kind_rules(a, b, joint),
                              untested.empty() ? "" : untested_list(untested), untested.size(),
                              quantile_method(o.quantiles), gates.empty() ? nullptr : &results};
  int status = write_document(result::diff_document({a.names, a.scope, &a.stats, a.facts},
                                                     {b.names, b.scope, &b.stats, b.facts}, d, changes, context),
                              o.common, "diff");
  if (status) return status;
  return gates_status(results);
}

}  // namespace

void setup_diff(CLI::App& app) {
  auto opts = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("diff", "Two traces (or pooled runs) side by side, and which per-unit changes are real");
  add_common_options(*cmd, opts->common, result::kDocumentFormats);
  add_scope_options(*cmd, opts->scope);
  add_grouping_option(*cmd, opts->by);
  add_quantiles_option(*cmd, opts->quantiles, QuantileMethod::inclusive);
  cmd->add_option("--vs", opts->vs, "Side B's runs: the traces before --vs are side A's (each side's units are pooled)")
      ->option_text("B...");
  cmd->add_option("--alpha", opts->alpha,
                  "A change is significant when its Holm-adjusted p is below this (default 0.05)")
      ->check(CLI::Range(1e-12, 0.5))
      ->option_text("P");
  cmd->add_flag("--latency", opts->latency,
                "The changes table also compares each unit's latency parts: a row per class and per group of the "
                "marker lane's time (see jqtrace latency)");
  add_gate_options(*cmd, opts->gates);
  add_inconclusive_option(*cmd, opts->gates);
  cmd->add_option("A B", opts->files, "The reference trace A and the trace B (or side A's runs, with --vs)")->required();
  cmd->footer(
      "Examples:\n"
      "  jqtrace diff main.trace.json branch.trace.json\n"
      "  jqtrace diff a1.json a2.json a3.json --vs b1.json b2.json b3.json\n"
      "  jqtrace diff -q --fail-if 'slower(ffn chain) > 3' main.json branch.json\n"
      "  jqtrace diff --marker token 3 --by name a.json b.json");
  cmd->callback([opts]() { throw CommandDone{run_diff(*opts)}; });
}

}  // namespace jqtrace::cli
