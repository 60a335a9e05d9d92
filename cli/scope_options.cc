#include "scope_options.h"

#include <set>

#include <fmt/core.h>

#include "numbers.h"

namespace jqtrace::cli {

namespace {

/// Each value of --ms and --us must read as a time when the command line is parsed: a
/// missing HI would otherwise take the file's name (`--ms 10 trace.json`), and the command
/// would read stdin instead (exit 3, "<stdin>: empty input") rather than say what is wrong.
CLI::Validator time_value(const char* option) {
  return CLI::Validator(
      [option](std::string& value) {
        int64_t ns = 0;
        if (parse_us_to_ns(value, &ns) == NumberStatus::ok) return std::string();
        return fmt::format("'{}' is not a time ({} takes two: LO HI)", value, option);
      },
      "TIME");
}

/// The same for --marker's N[..M] (`--marker token trace.json`).
CLI::Validator unit_span_value() {
  CLI::Validator v(
      [](std::string& value) {
        int64_t first = 0, last = 0;
        if (parse_unit_span(value, &first, &last) || is_unit_pick(value)) return std::string();
        if (std::size_t dots = value.find(".."); dots != std::string::npos &&
                                                 parse_unit_span(value.substr(0, dots), &first, &first) &&
                                                 parse_unit_span(value.substr(dots + 2), &last, &last))
          return fmt::format("'{}': the span ends (unit {}) before it starts (unit {}); write it first..last, as {}..{}",
                             value, last, first, last, first);
        return fmt::format("'{}' is not a unit number N, a span N..M or slowest|fastest|median|pXX (--marker takes "
                           "two: KIND N[..M])",
                           value);
      },
      "N[..M]");
  v.application_index(1);
  return v;
}

}  // namespace

void add_scope_options(CLI::App& cmd, ScopeOptions& opts) {
  auto* marker = cmd.add_option("--marker", opts.marker, "Units N (or N..M) of marker KIND, 0-based; or the slowest, fastest, median or pXX unit by duration")
                     ->expected(2)
                     ->allow_extra_args(false)
                     ->check(unit_span_value())
                     ->option_text("KIND N[..M]");
  auto* ms = cmd.add_option("--ms", opts.ms, "The range [LO, HI] in milliseconds of the file's clock")
                 ->expected(2)
                 ->allow_extra_args(false)
                 ->check(time_value("--ms"))
                 ->option_text("LO HI");
  auto* us = cmd.add_option("--us", opts.us, "The range [LO, HI] in microseconds of the file's clock")
                 ->expected(2)
                 ->allow_extra_args(false)
                 ->check(time_value("--us"))
                 ->option_text("LO HI");
  marker->excludes(ms)->excludes(us);
  ms->excludes(us);
  add_unit_at_option(cmd, opts.unit_at);
}

void add_unit_at_option(CLI::App& cmd, std::string& unit_at) {
  cmd.add_option("--unit-at", unit_at,
                 "Where a marker stands in its unit: start (unit N runs from marker N to the next), end (from the "
                 "previous marker to marker N) or auto (decided per kind from the trace); or a rule per kind, "
                 "e.g. token=end,layer=start")
      // The description lists the words shells complete (KIND=RULE items are checked too).
      ->check(CLI::Validator(
          [](std::string& text) {
            UnitRequest request;
            std::string error;
            return parse_unit_request(text, &request, &error) ? std::string() : error;
          },
          "{auto,end,start}"))
      ->option_text("start|end|auto|KIND=RULE,...")
      ->default_str("auto");
}

UnitRequest unit_at_request(const std::string& unit_at) {
  UnitRequest request;
  std::string error;
  parse_unit_request(unit_at, &request, &error);  // CLI11 checked the value
  return request;
}

void add_quantiles_option(CLI::App& cmd, std::string& text, QuantileMethod fallback) {
  text = quantile_method_name(fallback);
  cmd.add_option("--quantiles", text,
                 fmt::format("Percentiles by Python's statistics.quantiles method (default {})",
                             quantile_method_name(fallback)))
      ->check(CLI::IsMember({"inclusive", "exclusive"}))
      ->option_text("inclusive|exclusive");
}

QuantileMethod quantile_method(const std::string& text) {
  QuantileMethod m = QuantileMethod::inclusive;
  parse_quantile_method(text, &m);  // CLI11 checked the value
  return m;
}

void note_unit_rule(const std::string& kind, const UnitRule& rule, const CommonOptions& common) {
  static std::set<std::string> said;
  if (common.quiet || !said.insert(kind + unit_at_name(rule.at)).second) return;
  if (rule.lane_stopped)
    fmt::print(stderr,
               "jqtrace: warning: the lane holding the '{}' markers stopped recording at {} us (its ring filled); "
               "its units end there, and the work of the other lanes after it is in none of them\n",
               kind, us_text(rule.stop_ns));
  if (!rule.automatic) return;
  std::string nested = rule.nested_in.empty() ? "" : fmt::format(", nested in '{}'", rule.nested_in);
  if (rule.ambiguous) {
    fmt::print(stderr,
               "jqtrace: warning: where '{}' markers stand in their units is ambiguous ({}: {}){}; taken as start, "
               "the viewer's rule; give --unit-at start or end (gates and baselines on these units need it)\n",
               kind, unit_rule_evidence(rule), ambiguity_reason(rule), nested);
    return;
  }
  const char* other = rule.at == UnitAt::start ? "end" : "start";
  fmt::print(stderr, "jqtrace: units of '{}' {} at their markers{} (--unit-at auto: {}; --unit-at {}={} overrides)\n",
             kind, unit_at_name(rule.at), nested, unit_rule_evidence(rule), kind, other);
}

void warn_ambiguous_kinds(const std::vector<KindSummary>& kinds, const CommonOptions& common) {
  if (common.quiet) return;
  std::vector<const KindSummary*> ambiguous;
  for (const KindSummary& k : kinds)
    if (k.rule.ambiguous) ambiguous.push_back(&k);
  if (ambiguous.size() == 1) note_unit_rule(ambiguous[0]->kind, ambiguous[0]->rule, common);
  if (ambiguous.size() <= 1) return;
  // One line, however many kinds (a trace can have a kind an instant).
  std::string named;
  constexpr std::size_t kNamed = 5;
  for (std::size_t i = 0; i < std::min(kNamed, ambiguous.size()); ++i)
    named += fmt::format("{}'{}' ({})", i ? ", " : "", ambiguous[i]->kind, unit_rule_evidence(ambiguous[i]->rule));
  if (ambiguous.size() > kNamed) named += fmt::format(" and {} more", ambiguous.size() - kNamed);
  fmt::print(stderr,
             "jqtrace: warning: where the markers of {} kinds stand in their units is ambiguous: {}; taken as start, "
             "the viewer's rule; give --unit-at start or end (gates and baselines on these units need it)\n",
             ambiguous.size(), named);
}

namespace {

bool parse_bounds(const std::vector<std::string>& v, const char* option, bool milliseconds, ScopeRequest* req) {
  int64_t* out[2] = {&req->lo_ns, &req->hi_ns};
  for (int i = 0; i < 2; ++i) {
    NumberStatus st = milliseconds ? parse_ms_to_ns(v[static_cast<std::size_t>(i)], out[i])
                                   : parse_us_to_ns(v[static_cast<std::size_t>(i)], out[i]);
    if (st != NumberStatus::ok) {
      print_error(fmt::format("{}: '{}' is not a time", option, v[static_cast<std::size_t>(i)]));
      return false;
    }
    if (!time_in_range(*out[i])) {
      print_error(fmt::format("{}: '{}' is beyond the times jqtrace handles (about 73 years either side of 0)",
                              option, v[static_cast<std::size_t>(i)]));
      return false;
    }
  }
  req->kind = ScopeRequest::Kind::time;
  req->milliseconds = milliseconds;
  return true;
}

}  // namespace

bool resolve_scope_options(const ScopeOptions& opts, const Trace& trace, const CommonOptions& common, Scope* scope) {
  ScopeRequest req;
  req.unit_at = unit_at_request(opts.unit_at);
  if (opts.marker.size() == 2) {
    req.kind = ScopeRequest::Kind::marker;
    req.marker_kind = opts.marker[0];
    if (is_unit_pick(opts.marker[1])) {
      req.pick = opts.marker[1];
    } else if (!parse_unit_span(opts.marker[1], &req.first_unit, &req.last_unit)) {
      print_error(fmt::format("--marker: '{}' is not a unit number N or a span N..M", opts.marker[1]));
      return false;
    }
  } else if (opts.ms.size() == 2) {
    if (!parse_bounds(opts.ms, "--ms", true, &req)) return false;
  } else if (opts.us.size() == 2) {
    if (!parse_bounds(opts.us, "--us", false, &req)) return false;
  }
  std::string error;
  if (!resolve_scope(trace, req, scope, &error)) {
    print_error(error);
    return false;
  }
  if (req.kind == ScopeRequest::Kind::marker) note_unit_rule(req.marker_kind, scope->rule, common);
  if (req.kind == ScopeRequest::Kind::marker && scope->range.length() == 0 && !common.quiet)
    fmt::print(stderr,
               "jqtrace: warning: {} is an empty unit (0 us at {} us): its shares and idle time describe nothing{}\n",
               scope->label_without_unit_at(), us_text(scope->range.lo),
               scope->rule.automatic ? "" : fmt::format(" (does --unit-at {} cut it where you meant?)", unit_at_name(scope->rule.at)));
  if (!scope->picked.empty() && !common.quiet)  // said, so that a script can reuse the unit
    fmt::print(stderr, "jqtrace: --marker {} {} is unit {} ({}{} us)\n", req.marker_kind, scope->picked, scope->first_unit,
               scope->unit_arg_label.empty() ? "" : scope->unit_arg_label + ", ", us_text(scope->range.length()));
  return true;
}

}  // namespace jqtrace::cli
