// jqtrace: analyse jobque and Chrome JSON traces. main only dispatches: each subcommand
// lives in its own file (validate_cmd.cc, ...) and returns its SPEC §3 exit status.
#include <fmt/core.h>
#include <csignal>
#include <new>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "completions.h"
#include "suggest.h"
#include "timings.h"
#include "version.h"

using namespace jqtrace::cli;
using jqtrace::closest_match;

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

/// "did you mean" for a mistyped command, before CLI11 turns it into a generic error.
/// Returns the index of the command word in argv (0 when there is none).
int find_command(int argc, char** argv, const CLI::App& app, bool* unknown) {
  std::vector<std::string> names = command_names(app);
  *unknown = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    if (std::find(names.begin(), names.end(), arg) != names.end()) return i;
    std::string hint = closest_match(arg, names);
    print_error(hint.empty() ? fmt::format("unknown command '{}'", arg)
                             : fmt::format("unknown command '{}'; did you mean '{}'?", arg, hint));
    fmt::print(stderr, "Run 'jqtrace --help' for the list of commands.\n");
    *unknown = true;
    return i;
  }
  return 0;
}

/// "did you mean" for a mistyped option of a command (CLI11 would call the word an
/// unexpected argument, or name the trace file). Negative numbers are values, not options.
bool unknown_option(int argc, char** argv, int command_at, CLI::App& app) {
  CLI::App* cmd = app.get_subcommand(argv[command_at]);
  std::vector<std::string> names;
  for (const CommandSpec& c : describe_commands(app))
    if (c.name == cmd->get_name())
      for (const OptionSpec& o : c.options) names.insert(names.end(), o.names.begin(), o.names.end());
  for (int i = command_at + 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return false;
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.') continue;
    std::string name = arg.substr(0, arg.find('='));
    if (name.size() > 2 && name[1] != '-') name = name.substr(0, 2);  // -j4, -ofile
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string hint = closest_match(name, names);
    print_error(hint.empty() ? fmt::format("unknown option '{}'", name)
                             : fmt::format("unknown option '{}'; did you mean '{}'?", name, hint));
    fmt::print(stderr, "Run 'jqtrace {} --help' for usage.\n", cmd->get_name());
    return true;
  }
  return false;
}

/// GNU style is lower-case; keep words in capitals (option and argument names) as they are.
std::string lower_first(std::string message) {
  if (message.size() > 1 && std::islower(static_cast<unsigned char>(message[1])))
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

int parse_and_run(CLI::App& app, int argc, char** argv, const std::string& help_for) {
  try {
    app.parse(argc, argv);
  } catch (const CommandDone& done) {
    if (jqtrace::timings_enabled()) fmt::print(stderr, "{}", jqtrace::timings_report());
    return done.status;
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help and --version print to stdout and succeed
  } catch (const CLI::ParseError& e) {
    print_error(lower_first(e.what()));
    fmt::print(stderr, "Run 'jqtrace {}--help' for usage.\n", help_for.empty() ? "" : help_for + " ");
    return kUsage;
  } catch (const std::bad_alloc&) {  // an error and a status, not an abort (SIGABRT)
    print_error("out of memory: this trace's analysis needs more memory than jqtrace could get (see LIMITS in jqtrace(1))");
    return kInput;
  }
  return kOk;
}

int run(int argc, char** argv) {
  CLI::App app{"Analyse jobque and Chrome JSON traces, streaming.", "jqtrace"};
  app.set_version_flag("-V,--version", version_text());
  app.require_subcommand(1);
  app.footer("Run 'jqtrace help COMMAND' (or 'jqtrace COMMAND --help') for a command's options and examples.");
  setup_validate(app);
  setup_stats(app);
  setup_markers(app);
  setup_window(app);
  setup_gaps(app);
  setup_latency(app);
  setup_whatif(app);
  setup_diff(app);
  setup_phases(app);
  setup_timeline(app);
  setup_report(app);
  setup_index(app);
  setup_export(app);
  setup_completions(app);
  if (argc == 1) {
    fmt::print(stderr, "{}", app.help());
    return kUsage;
  }
  std::string first = argv[1];
  if (first == "help") {  // jqtrace help [COMMAND]: the command's --help
    if (argc == 2) {
      fmt::print("{}", app.help());
      return kOk;
    }
    std::string help = "--help";
    std::vector<char*> args = {argv[0], argv[2], help.data()};
    return run(static_cast<int>(args.size()), args.data());
  }
  bool unknown = false;
  int command_at = find_command(argc, argv, app, &unknown);
  if (unknown) return kUsage;
  if (command_at && unknown_option(argc, argv, command_at, app)) return kUsage;
  return parse_and_run(app, argc, argv, command_at ? argv[command_at] : "");
}

}  // namespace

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // glibc raises its mmap threshold each time a large block is freed, after which blocks
  // of up to 32 MB come from the heap and stay resident when freed. The analyses free
  // big temporaries (hash tables, sample vectors) mid-run and count on getting the
  // memory back, so keep the threshold fixed: at 1 MB, not lower, because the parts of a
  // parallel read each allocate (and free) windows and tables of a few hundred KB, and
  // from mmap every one of them is faulted in and zeroed afresh (validate -j 2 on a
  // gzip trace: 33k page faults and 0.54 s at 256 KB, 9k and 0.37 s with these two).
  // The trim threshold likewise keeps a few MB at the top of each heap for the next part.
  mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
#endif
  // A reader that goes away (jqtrace window ... | head -c 10) is not an error of ours:
  // writes then fail with EPIPE, which Output takes quietly, instead of SIGPIPE ending the
  // process (exit 141) before a gate's status is returned.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file size limit (ulimit -f) a write fails with EFBIG instead of SIGXFSZ ending the
  // process: the output error is reported (exit 3) and a temporary output removed.
  std::signal(SIGXFSZ, SIG_IGN);
  return run(argc, argv);
}
