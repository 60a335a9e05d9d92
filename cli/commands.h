#pragma once
// Subcommand registration. Each command file adds its subcommand with a setup_x(App&);
// its callback runs the command and throws CommandDone with the exit status.
#include <CLI/CLI.hpp>

namespace jqtrace::cli {

struct CommandDone {
  int status;
};

void setup_validate(CLI::App& app);
void setup_stats(CLI::App& app);
void setup_markers(CLI::App& app);
void setup_window(CLI::App& app);
void setup_gaps(CLI::App& app);
void setup_latency(CLI::App& app);
void setup_whatif(CLI::App& app);
void setup_export(CLI::App& app);
void setup_diff(CLI::App& app);
void setup_phases(CLI::App& app);
void setup_timeline(CLI::App& app);
void setup_report(CLI::App& app);
void setup_index(CLI::App& app);

}  // namespace jqtrace::cli
