// jqtrace index FILE: one full pass that writes the sidecar index (lib/index/trace_index.h).
#include "commands.h"
#include "common.h"
#include "load.h"

namespace jqtrace::cli {
namespace {

struct IndexCommandOptions {
  CommonOptions common;
  std::string file;
};

int run_index(IndexCommandOptions o) {
  if (o.file == "-") {
    print_error("index: standard input cannot be indexed (an index describes a file)");
    return kUsage;
  }
  o.common.write_index = true;
  o.common.index_required = true;
  Trace& trace = trace_for_process();
  LoadOptions load;
  load.spans = false;  // the index keeps everything but the span tables
  return load_for_analysis(o.file, o.common, &trace, load);
}

}  // namespace

void setup_index(CLI::App& app) {
  auto opts = std::make_shared<IndexCommandOptions>();
  CLI::App* cmd = app.add_subcommand("index", "Write a sidecar index (TRACE.jqx) so scoped commands read only what their range needs");
  cmd->add_option("-j,--threads", opts->common.threads, "Parser threads (default 0: all cores)")
      ->check(CLI::Range(0u, 1024u))
      ->option_text("N");
  cmd->add_flag("-q,--quiet", opts->common.quiet, "No progress bar, no warnings, no note of what was written");
  cmd->add_option("FILE", opts->file, "The trace (plain, .gz or .zst)")->required();
  cmd->footer("Examples:\n  jqtrace index big.trace.json\n  jqtrace window --marker token 3 big.trace.json   # reads the index, then one block or two\n  jqtrace stats --index trace.json                # the index as a side effect of a full pass");
  cmd->callback([opts]() { throw CommandDone{run_index(*opts)}; });
}

}  // namespace jqtrace::cli
