#include "scope_options.h"

#include <set>

#include <fmt/core.h>

#include "numbers.h"

namespace jqtrace::cli {

void add_scope_options(CLI::App& cmd, ScopeOptions& opts) {
  auto* marker = cmd.add_option("--marker", opts.marker, "Units N (or N..M) of marker KIND, 0-based")
                     ->expected(2)
                     ->allow_extra_args(false)
                     ->option_text("KIND N[..M]");
  auto* ms = cmd.add_option("--ms", opts.ms, "The range [LO, HI] in milliseconds of the file's clock")
                 ->expected(2)
                 ->allow_extra_args(false)
                 ->option_text("LO HI");
  auto* us = cmd.add_option("--us", opts.us, "The range [LO, HI] in microseconds of the file's clock")
                 ->expected(2)
                 ->allow_extra_args(false)
                 ->option_text("LO HI");
  marker->excludes(ms)->excludes(us);
  ms->excludes(us);
  add_unit_at_option(cmd, opts.unit_at);
}

void add_unit_at_option(CLI::App& cmd, std::string& unit_at) {
  cmd.add_option("--unit-at", unit_at,
                 "Where a marker stands in its unit: start (unit N runs from marker N to the next), end (from the "
                 "previous marker to marker N) or auto (end when the markers look like closers)")
      ->check(CLI::IsMember({"start", "end", "auto"}))
      ->option_text("start|end|auto")
      ->default_str("auto");
}

UnitAtRequest unit_at_request(const std::string& unit_at) {
  UnitAtRequest request = UnitAtRequest::automatic;
  parse_unit_at(unit_at, &request);  // CLI11 checked the value
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

void note_unit_rule(const std::string& kind, UnitRule rule, const CommonOptions& common) {
  static std::set<std::string> said;
  if (!rule.automatic || common.quiet || !said.insert(kind + unit_at_name(rule.at)).second) return;
  const char* other = rule.at == UnitAt::start ? "end" : "start";
  fmt::print(stderr, "jqtrace: units of '{}' {} at their markers (--unit-at auto; --unit-at {} overrides)\n", kind,
             unit_at_name(rule.at), other);
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
    if (!parse_unit_span(opts.marker[1], &req.first_unit, &req.last_unit)) {
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
  return true;
}

}  // namespace jqtrace::cli
