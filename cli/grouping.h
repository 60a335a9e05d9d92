#pragma once
// --by for stats and diff: the grouping the user asked for, checked against the trace.
#include <string>

#include <CLI/CLI.hpp>

#include "stats.h"
#include "trace.h"

namespace jqtrace::cli {

/// Empty: category for jobque traces, cat for others. A generic trace's category is its
/// cat; kind exists only for jobque traces (false after printing why: exit 2).
bool choose_grouping(const std::string& by, const Trace& trace, GroupBy* out);

/// The --by option with its valid names.
void add_grouping_option(CLI::App& cmd, std::string& by);

}  // namespace jqtrace::cli
