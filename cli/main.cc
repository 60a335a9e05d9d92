// jqtrace: analyse jobque and Chrome JSON traces. main only dispatches: each subcommand
// lives in its own file (validate_cmd.cc, ...) and returns its SPEC §3 exit status.
#include <fmt/core.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "suggest.h"

using namespace jqtrace::cli;
using jqtrace::closest_match;

namespace {

/// "did you mean" for a mistyped command, before CLI11 turns it into a generic error.
bool unknown_command(int argc, char** argv, const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    if (std::find(names.begin(), names.end(), arg) != names.end()) return false;
    std::string hint = closest_match(arg, names);
    print_error(hint.empty() ? fmt::format("unknown command '{}'", arg)
                             : fmt::format("unknown command '{}'; did you mean '{}'?", arg, hint));
    fmt::print(stderr, "Run 'jqtrace --help' for the list of commands.\n");
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // glibc raises its mmap threshold each time a large block is freed, after which blocks
  // of up to 32 MB come from the heap and stay resident when freed. The analyses free
  // big temporaries (hash tables, sample vectors) mid-run and count on getting the
  // memory back, so keep the threshold fixed.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
  CLI::App app{"Analyse jobque and Chrome JSON traces, streaming.", "jqtrace"};
  app.set_version_flag("--version", std::string("jqtrace ") + JQTRACE_VERSION);
  app.require_subcommand(1);
  setup_validate(app);
  setup_stats(app);
  setup_markers(app);
  setup_window(app);
  setup_gaps(app);
  setup_diff(app);
  setup_phases(app);
  if (argc == 1) {
    fmt::print(stderr, "{}", app.help());
    return kUsage;
  }
  if (unknown_command(argc, argv, app)) return kUsage;
  try {
    app.parse(argc, argv);
  } catch (const CommandDone& done) {
    return done.status;
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help and --version print to stdout and succeed
  } catch (const CLI::ParseError& e) {
    // GNU style is lower-case; keep words in capitals (option and argument names) as they are.
    std::string message = e.what();
    if (message.size() > 1 && std::islower(static_cast<unsigned char>(message[1])))
      message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    print_error(message);
    fmt::print(stderr, "Run 'jqtrace --help' for usage.\n");
    return kUsage;
  }
  return kOk;
}
