#pragma once
// The first steps every analysis command shares: open the input, build the trace model,
// and say on stderr what was lost on the way (a cut-off file, malformed events).
#include <string>

#include "common.h"
#include "scope_options.h"
#include "gzip_points.h"
#include "trace.h"

namespace jqtrace::cli {

/// Loads the input into *trace (and with --index writes its sidecar index from the same
/// pass). Returns kOk, or kInput after printing why (with file:line:col).
int load_for_analysis(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace,
                      const LoadOptions& load = {});
/// The same for a path the command reads nothing else of: opened here (open_trace).
int load_for_analysis(const std::string& path, const CommonOptions& opts, Trace* trace, const LoadOptions& load = {});

/// True when --index asks for an index of the input named name; on standard input
/// ("<stdin>") --index says in a warning that it writes none, and false.
bool will_index(const CommonOptions& opts, const std::string& name);

/// validate --index: the pass that writes the index (a model without span tables, as
/// jqtrace index makes it), with load.tee riding it, saying nothing on stderr about what
/// the read lost (validate reports that as problems). True when the file was read as a
/// trace (the index is written); false, nothing written, when it could not be.
bool index_pass_quietly(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace,
                        const LoadOptions& load, ReadResult* read);

/// Which blocks of an index a scoped command reads: those whose time overlaps the range,
/// or for window those and the blocks of every metadata event and of the publishes of
/// their chains.
enum class BlocksFor { spans, window };

/// Loads the input for a command with a scope, and resolves the scope into *scope. With a range
/// option given and a fresh sidecar index (TRACE.jqx), the model is the index's skeleton
/// with the spans of only the blocks the scope needs (load.tee sees only their events);
/// else the whole trace is read. kOk, kUsage (the scope) or kInput after printing why.
/// With gzip_points, an index's access points are handed over (window reads its events'
/// text again through them).
int load_scoped(const std::shared_ptr<Input>& input, const CommonOptions& opts, const ScopeOptions& scope_options,
                Trace* trace, Scope* scope, const LoadOptions& load = {}, BlocksFor need = BlocksFor::spans,
                std::vector<GzipPoint>* gzip_points = nullptr);

/// For a command that reads no span (markers without --kind): a fresh index's skeleton,
/// else the whole trace.
int load_skeleton(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace);

/// A trace model that lives until the process ends and is never freed: a model is
/// hundreds of MB in many columns, giving it back piece by piece took 15 ms after the
/// output was written (2% of stats -j 2 on the bench trace), and the kernel takes the
/// pages back at once when the command returns and the process exits.
Trace& trace_for_process();

/// How the input is named in messages and outputs ("<stdin>" for "-").
std::string display_name(const std::string& path);

/// "FILE: truncated at byte N" (and that a gzip stream ended early): where a read was cut.
std::string truncation_text(const std::string& path, const ReadResult& read);

}  // namespace jqtrace::cli
