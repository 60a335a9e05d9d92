#include "scope_options.h"

#include <fmt/core.h>

#include "common.h"
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
  }
  req->kind = ScopeRequest::Kind::time;
  return true;
}

}  // namespace

bool resolve_scope_options(const ScopeOptions& opts, const Trace& trace, Range* range) {
  ScopeRequest req;
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
  if (!resolve_scope(trace, req, range, &error)) {
    print_error(error);
    return false;
  }
  return true;
}

}  // namespace jqtrace::cli
