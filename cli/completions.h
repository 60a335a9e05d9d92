#pragma once
// `jqtrace completions bash|zsh|fish`: shell completion scripts generated from the CLI11
// definition the parser itself uses (commands, options, the fixed values of options such
// as --format), so a script cannot drift from the program.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace jqtrace::cli {

/// What completion needs to know of one option.
struct OptionSpec {
  std::vector<std::string> names;   ///< "--format", "-o", ...
  std::string help;
  bool takes_value = false;
  bool file_value = false;          ///< its value is a path (-o, --gate-file, --baseline)
  std::vector<std::string> values;  ///< the values it accepts, when they are a fixed set
};

/// One subcommand: its options, and what its positional arguments are.
struct CommandSpec {
  std::string name;
  std::string help;
  std::vector<OptionSpec> options;
  bool trace_arguments = true;      ///< traces (*.json, *.json.gz, ...) rather than any file
};

/// The commands of app (every subcommand) as completion sees them.
std::vector<CommandSpec> describe_commands(CLI::App& app);
/// The options of app itself (--help, --version, ...).
std::vector<OptionSpec> describe_options(CLI::App& app);

std::string bash_completion(const std::vector<CommandSpec>& commands, const std::vector<OptionSpec>& global);
std::string zsh_completion(const std::vector<CommandSpec>& commands, const std::vector<OptionSpec>& global);
std::string fish_completion(const std::vector<CommandSpec>& commands, const std::vector<OptionSpec>& global);

void setup_completions(CLI::App& app);

}  // namespace jqtrace::cli
