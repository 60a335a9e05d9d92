// jqtrace timeline FILE: load → scope → compute_timeline → SVG.
#include <fmt/core.h>

#include "commands.h"
#include "common.h"
#include "common_fields.h"
#include "grouping.h"
#include "load.h"
#include "raster.h"
#include "scope_options.h"
#include "svg.h"
#include "text_format.h"
#include "timeline.h"
#include "timings.h"

namespace jqtrace::cli {
namespace {

struct TimelineCommandOptions {
  CommonOptions common;
  ScopeOptions scope;
  std::string by;  ///< empty: category for jobque traces, cat for generic ones
  int width = 1400;
  std::string file;
};

/// The picture's title: the file and scope; a unit picked by its duration says so as the
/// report's pictures do ("slowest token 1 (9714.579 us; --marker token slowest), ...").
std::string heading(const std::string& file, const Scope& scope, const Trace& trace) {
  std::string what = result::scope_prefix(scope);
  if (!scope.picked.empty())
    what = fmt::format("{} {} ({} us; --marker {} {}; units {} at their markers), ", scope.picked,
                       unit_name(scope.marker_kind, scope.first_unit, scope.unit_arg_label),
                       us_fixed(scope.range.length()), scope.marker_kind, scope.picked, unit_at_name(scope.rule.at));
  return fmt::format("{}: {}{} .. {} us, {} lane{}", file, what, us_fixed(scope.range.lo), us_fixed(scope.range.hi),
                     trace.lanes.size(), trace.lanes.size() == 1 ? "" : "s");
}

int run_timeline(const TimelineCommandOptions& o) {
  if (!check_output_format(o.common, "timeline")) return kUsage;
  Trace& trace = trace_for_process();
  Scope scope;
  auto input = open_trace(o.file);
  if (!input) return kInput;
  if (int status = load_scoped(input, o.common, o.scope, &trace, &scope)) return status;
  TimelineOptions options;
  if (!choose_grouping(o.by, trace, &options.by)) return kUsage;
  result::SvgLayout layout;
  layout.width_px = o.width;
  options.plot_width_px = layout.plot_width();
  options.threads = worker_threads(o.common);
  SpanIndex index(trace, options.threads);
  Timeline timeline = compute_timeline(trace, index, scope.range, options);
  PhaseClock clock("render", PhaseKind::serial);
  std::string svg = result::render_timeline_svg(timeline, heading(display_name(o.file), scope, trace), layout);
  int status = kInput;
  auto out = Output::open(o.common, &status);
  if (!out) return status;  // cannot write, or -o names an input
  if (o.common.format() == Format::png) {
    std::string why;
    auto write = [&](const unsigned char* data, std::size_t size) { std::fwrite(data, 1, size, out->file()); };
    if (!result::svg_to_png(svg, write, &why)) {
      print_error(fmt::format("timeline: cannot write a PNG: {}", why));
      return kInput;  // out's temporary file is removed, the -o path left as it was
    }
  } else {
    std::fwrite(svg.data(), 1, svg.size(), out->file());
  }
  return out->close() ? kOk : out->failure_status();
}

}  // namespace

void setup_timeline(CLI::App& app) {
  auto opts = std::make_shared<TimelineCommandOptions>();
  CLI::App* cmd = app.add_subcommand("timeline", "An SVG (or PNG) picture of a scope: lanes by time, spans coloured by category");
  add_common_options(*cmd, opts->common, {Format::svg, Format::png});
  add_scope_options(*cmd, opts->scope);
  add_index_options(*cmd, opts->common, true);
  cmd->add_option("--by", opts->by, "Colour by category (jobque default), cat (generic default) or name")
      ->check(CLI::IsMember({"category", "cat", "name"}))
      ->option_text("GROUPING");
  cmd->add_option("--width", opts->width, "Width of the picture in pixels (default 1400)")
      ->check(CLI::Range(400, 20000))
      ->option_text("PX");
  add_trace_argument(*cmd, opts->file);
  cmd->footer("Examples:\n  jqtrace timeline --marker token 3 trace.json.gz -o token3.svg\n  jqtrace timeline --ms 10 12 --width 2400 trace.json > zoom.svg\n  jqtrace timeline --by name chrome-trace.json -o t.svg\n  jqtrace timeline --marker token slowest trace.json -o slowest.png");
  cmd->callback([opts]() {
    if (!default_to_stdin(opts->file, "timeline")) throw CommandDone{kUsage};
    throw CommandDone{run_timeline(*opts)};
  });
}

}  // namespace jqtrace::cli
