#include "load.h"

#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/core.h>

#include "decoders.h"
#include "free_memory.h"
#include "gzip_points.h"
#include "trace_index.h"

namespace jqtrace::cli {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string truncation_text(const std::string& path, const ReadResult& read) {
  return fmt::format("{}: truncated at byte {}{}", display_name(path), read.bytes,
                     read.stream_cut ? fmt::format(" (the {} stream ends early)", compression_name(read.compression)) : "");
}

Trace& trace_for_process() {
  static auto* kept = new std::vector<std::unique_ptr<Trace>>;  // reachable, so no leak report
  kept->push_back(std::make_unique<Trace>());
  return *kept->back();
}

namespace {

/// Parses in parts on -j threads when the input splits; else reads it in one pass.
bool read_model(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace, const LoadOptions& load,
                ReadResult* r) {
  ParallelRead parallel = parallel_read(*input, opts);
  if (parallel.threads &&
      load_trace_parallel(input, parallel.threads, trace, nullptr, load, parallel.progress, r, parallel.min_part_bytes))
    return true;
  auto source = open_input(*input, opts, load.gzip_points);
  if (!source) return false;
  *r = load_trace(*source, trace, nullptr, load);
  return true;
}

}  // namespace

namespace {

/// What a read lost, on stderr (the same from a full read and from an index's skeleton,
/// which keeps the read's outcome and counts). kOk or kInput.
/// One line for the lanes whose ring filled: their numbers end where they stopped.
void warn_stopped_lanes(const std::string& name, const Trace& trace, const CommonOptions& opts) {
  std::vector<StoppedLane> stopped = lanes_stopped_early(trace);
  if (stopped.empty()) return;
  std::string lanes;
  for (const StoppedLane& s : stopped) {
    std::string thread(trace.thread_name(s.lane));
    lanes += fmt::format("{}{}{} at {} us", lanes.empty() ? "" : ", ", trace.lane_label(s.lane),
                         thread.empty() ? "" : " '" + thread + "'", us_text(s.stop_ns));
    if (lanes.size() > 200) {
      lanes += ", ...";
      break;
    }
  }
  print_warning(opts, fmt::format("{}: {} lane{} stopped recording before the trace ended (ring full?): {}; "
                                  "what they did after is missing from every number",
                                  name, stopped.size(), stopped.size() == 1 ? "" : "s", lanes));
}

/// Names the reader cut to kMaxNameBytes (each counted once).
std::size_t cut_names(const Trace& trace) {
  std::size_t n = 0;
  for (const Interner* names : {&trace.names, &trace.thread_names})
    for (uint32_t id = 0; id < names->size(); ++id) n += is_cut_name(names->view(id));
  for (const ProcessName& p : trace.process_names) n += is_cut_name(p.name);
  return n;
}

int report_read(const std::string& name, const ReadResult& r, const Trace& trace, const CommonOptions& opts) {
  if (r.status == ReadStatus::input_error) {
    if (r.position.line)
      print_error(fmt::format("{}:{}:{}: {}", name, r.position.line, r.position.column, r.message));
    else
      print_error(fmt::format("{}: {}", name, r.message));
    return kInput;
  }
  if (trace.durations_too_large()) {
    print_error(fmt::format("{}: the spans' durations add up past 2^62 ns (about 146 years), more time than "
                            "jqtrace adds up safely: refused rather than risk a wrong number",
                            name));
    return kInput;
  }
  if (r.status == ReadStatus::truncated)
    print_warning(opts, fmt::format("{}; analysed {} events", truncation_text(name, r), r.events));
  if (trace.malformed)
    print_warning(opts, fmt::format("{}: skipped {} malformed events (jqtrace validate lists them)", name,
                                    trace.malformed));
  if (trace.unclosed_begins)
    print_warning(opts, fmt::format("{}: {} B events never closed; they run to the end of the trace", name,
                                    trace.unclosed_begins));
  if (trace.unmatched_ends)
    print_warning(opts, fmt::format("{}: {} E events close nothing; dropped", name, trace.unmatched_ends));
  if (std::size_t cut = cut_names(trace))
    print_warning(opts, fmt::format("{}: {} name{} longer than {} bytes {} cut (shown as {} first bytes, {} length "
                                    "and a hash)",
                                    name, cut, cut == 1 ? "" : "s", kMaxNameBytes, cut == 1 ? "was" : "were",
                                    cut == 1 ? "its" : "their", cut == 1 ? "its" : "their"));
  if (!trace.profile.unread.empty())
    print_warning(opts, fmt::format("{}: its jobqueProfile is {}, more than jqtrace reads: its categories and marker "
                                    "kinds are unknown, chains are named by their tags ('tag N'; attribution: {})",
                                    name, trace.profile.unread, attribution_name(Attribution::unread_profile)));
  if (profile_unused(trace))
    print_warning(opts, fmt::format("{}: its jobqueProfile registers {} categories and {} marker kinds that no event "
                                    "uses (was profiling off while it recorded?): busy time is 'untagged' or a "
                                    "reserved group, and the registered categories are 0",
                                    name, trace.profile.categories.size(), trace.profile.markers.size()));
  warn_stopped_lanes(name, trace, opts);
  return kOk;
}

/// The blocks of an index smaller than usual (JQTRACE_INDEX_BLOCK_BYTES: the tests cut
/// small files into many blocks).
uint64_t index_block_bytes() { return bytes_from_env("JQTRACE_INDEX_BLOCK_BYTES", TraceIndex::kBlockBytes); }

/// Text between a gzip trace's access points: 4 MiB (16 blocks). Each point keeps a 32 KiB
/// window (~3.8 KB of index a point, deflated), so the points are ~0.8% of the .gz (2 MiB
/// apart made the index 3.1% of it); a block read decodes ~2 MiB more on average from its
/// point, ~2 ms through ISA-L.
uint64_t gzip_point_spacing() { return 16 * index_block_bytes(); }

/// Text between the access points of a gzip trace that window reads whole and then again
/// around its events: 2 MiB (8 blocks), so a range's text is decoded from at most 2 MiB
/// before it. The points stay in memory with whole windows: 32 KiB each, 1.6% of the text.
uint64_t reread_point_spacing() { return 8 * index_block_bytes(); }

/// Access points from a zlib pass of their own, for a build without ISA-L (none when zlib
/// cannot read the file through: the blocks are then decoded from the start of the stream).
std::vector<GzipPoint> gzip_points_of(std::shared_ptr<Input> input) {
  std::vector<GzipPoint> points;
  std::string why;
  if (!build_gzip_points(std::move(input), gzip_point_spacing(), &points, &why)) points.clear();
  return points;
}

/// ", 1.37% of the file, 0.14% of its text" (compressed) or ", 0.06% of the trace's text".
std::string index_share(const Input& input, const ReadResult& r, uint64_t index_bytes) {
  auto pct = [&](uint64_t of) { return 100.0 * static_cast<double>(index_bytes) / static_cast<double>(of); };
  if (!r.bytes) return "";
  uint64_t file = input.size();
  if (r.compression == Compression::none || !file) return fmt::format(", {:.2f}% of the trace's text", pct(r.bytes));
  return fmt::format(", {:.2f}% of the file, {:.2f}% of its text", pct(file), pct(r.bytes));
}

/// --index: writes the index from the pass just made (a note says where, or why not).
bool write_index_after(const Input& input, const std::string& name, const Trace& trace, const ReadResult& r,
                       BlockRecorder& recorder, std::vector<GzipPoint> points, const CommonOptions& opts) {
  std::string why;
  std::string written = write_index(input, trace, r, recorder, std::move(points), worker_threads(opts), &why);
  if (written.empty()) {
    std::string message = fmt::format("{}: no index written: {}", name, why);
    if (opts.index_required) print_error(message);
    else print_warning(opts, message);
    return false;
  }
  if (!opts.quiet)
    fmt::print(stderr, "jqtrace: index of {} written to {} ({} blocks, {} bytes{})\n", name, written,
               recorder.blocks(), recorder.index_bytes(), index_share(input, r, recorder.index_bytes()));
  return true;
}

}  // namespace

namespace {

/// Reads input into *trace with load's tee and, with --index, the index's recorder and gzip
/// access points along; writes the index when the read is usable. announce: say on stderr
/// what the read lost (the analyses), or nothing (validate reports it as problems).
int read_and_index(const std::shared_ptr<Input>& input, const std::string& name, const CommonOptions& opts,
                   Trace* trace, const LoadOptions& load, bool announce, ReadResult* r) {
  bool indexing = will_index(opts, name);
  BlockRecorder recorder(index_block_bytes());
  SinkPair both(load.tee, &recorder);
  LoadOptions own = load;
  if (indexing) {
    own.tee = load.tee ? static_cast<SplittableSink*>(&both) : &recorder;
    own.categories = true;  // the index keeps every chain's category
  }
  // A gzip trace's access points: taken by the ISA-L decoder as the load decodes it, else
  // from a zlib pass of their own beside the load.
  std::future<std::vector<GzipPoint>> points;
  std::optional<GzipPointHunt> hunt;
  if (indexing && input->compression() == Compression::gzip) {
    if (have_isal())
      own.gzip_points = &hunt.emplace(gzip_point_spacing());
    else
      points = std::async(std::launch::async, gzip_points_of, input);
  }
  bool read = read_model(input, opts, trace, own, r);
  // The parts' buffers and tables, freed on the parse threads (gaps -j 2 of a 200 MB
  // trace: ~1 MB less at its peak).
  if (load.release_freed) release_free_memory();
  end_progress();
  std::vector<GzipPoint> found;
  bool index_took_points = hunt || points.valid();  // a gzip trace's, in place of the caller's hunt
  if (hunt)
    found = std::move(hunt->points);
  else if (points.valid())
    found = points.get();
  if (!read) return kInput;
  if (announce) {
    if (int status = report_read(name, *r, *trace, opts)) return status;
  } else if (r->status == ReadStatus::input_error || trace->durations_too_large()) {
    return kInput;  // what report_read refuses, refused without a word
  }
  // The caller's hunt: the index's gzip points serve it (a zstd trace's frames it took itself).
  if (index_took_points && load.gzip_points) load.gzip_points->points = found;
  if (indexing && !write_index_after(*input, name, *trace, *r, recorder, std::move(found), opts) &&
      opts.index_required)
    return kInput;
  return kOk;
}

}  // namespace

bool will_index(const CommonOptions& opts, const std::string& name) {
  if (opts.write_index && name == "<stdin>") print_warning(opts, "--index needs a file: standard input is not indexed");
  return opts.write_index && name != "<stdin>";
}

int load_for_analysis(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace,
                      const LoadOptions& load) {
  ReadResult r;
  return read_and_index(input, input->name(), opts, trace, load, true, &r);
}

int load_for_analysis(const std::string& path, const CommonOptions& opts, Trace* trace, const LoadOptions& load) {
  auto input = open_trace(path);
  return input ? load_for_analysis(input, opts, trace, load) : kInput;
}

bool index_pass_quietly(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace,
                        const LoadOptions& load, ReadResult* read) {
  return read_and_index(input, input->name(), opts, trace, load, false, read) == kOk;
}

namespace {

bool range_given(const ScopeOptions& scope) { return !scope.marker.empty() || !scope.ms.empty() || !scope.us.empty(); }

/// The fresh index of the input, unless --no-index, --index (which writes a new one), or the
/// input is not a file. A stale or broken one is named in a warning and not used.
std::optional<TraceIndex> fresh_index(const Input& input, const CommonOptions& opts) {
  if (opts.no_index || opts.write_index || !input.regular()) return std::nullopt;
  std::string warning;
  auto index = read_fresh_index(input, &warning);
  if (!warning.empty()) print_warning(opts, warning);
  return index;
}

constexpr int kReadWhole = -1;  ///< the index could not answer: read the whole trace

/// The skeleton, the scope resolved on it, and the blocks the scope needs; kReadWhole when
/// a block is not where the index says (the file is not the one indexed).
int load_from_index(TraceIndex& index, const std::shared_ptr<Input>& input, const CommonOptions& opts,
                    const ScopeOptions& scope_options, Trace* trace, Scope* scope, const LoadOptions& load,
                    BlocksFor need) {
  const std::string& name = input->name();
  *trace = std::move(index.skeleton);
  if (int status = report_read(name, trace->read, *trace, opts)) return status;
  if (!resolve_scope_options(scope_options, *trace, opts, scope)) return kUsage;
  std::vector<uint32_t> chosen = index.blocks_for(scope->range, need == BlocksFor::window);
  std::vector<ByteRange> blocks;
  for (uint32_t b : chosen) blocks.push_back({index.blocks[b].start, index.blocks[b].stop});
  if (std::getenv("JQTRACE_SHOW_INDEX"))  // tests and the curious: what the index saved
    fmt::print(stderr, "jqtrace: index: {} of {} blocks read\n", blocks.size(), index.blocks.size());
  if (blocks.empty()) return kOk;  // nothing happens in the range
  Trace partial;
  ReadResult r;
  LoadOptions block_load = load;
  block_load.gzip_points = nullptr;  // the index has its points
  block_load.categories = true;  // the blocks' publishes give their chains' stage counts and tags
  if (!load_blocks(blocks, block_opener(input, index, blocks), worker_threads(opts), block_load, &partial, &r)) {
    print_warning(opts, fmt::format("{}: the index does not match the trace; reading it whole", name));
    return kReadWhole;
  }
  graft_blocks(trace, partial, worker_threads(opts));
  return kOk;
}

}  // namespace

int load_scoped(const std::shared_ptr<Input>& input, const CommonOptions& opts, const ScopeOptions& scope_options,
                Trace* trace, Scope* scope, const LoadOptions& load, BlocksFor need,
                std::vector<GzipPoint>* gzip_points) {
  if (range_given(scope_options)) {
    auto index = fresh_index(*input, opts);
    if (index && index->ranges) {
      int status = load_from_index(*index, input, opts, scope_options, trace, scope, load, need);
      if (status != kReadWhole) {
        if (gzip_points) *gzip_points = std::move(index->points);
        return status;
      }
      *trace = Trace{};
    }
  }
  // Read whole, a compressed trace gives access points as it is decoded (gzip through
  // ISA-L; zstd at its frames, when it has several), so that window decodes again only
  // around its events, not the whole file up to the last of them (a trace written lane
  // after lane has a window's events all through it).
  std::optional<GzipPointHunt> hunt;
  LoadOptions whole = load;
  Compression compression = gzip_points ? input->compression() : Compression::none;
  if ((compression == Compression::gzip && have_isal()) || compression == Compression::zstd)
    whole.gzip_points = &hunt.emplace(reread_point_spacing(), false);
  if (int status = load_for_analysis(input, opts, trace, whole)) return status;
  if (hunt) *gzip_points = std::move(hunt->points);
  return resolve_scope_options(scope_options, *trace, opts, scope) ? kOk : kUsage;
}

int load_skeleton(const std::shared_ptr<Input>& input, const CommonOptions& opts, Trace* trace) {
  if (auto index = fresh_index(*input, opts)) {
    if (std::getenv("JQTRACE_SHOW_INDEX")) fmt::print(stderr, "jqtrace: index: 0 of {} blocks read\n", index->blocks.size());
    *trace = std::move(index->skeleton);
    return report_read(input->name(), trace->read, *trace, opts);
  }
  return load_for_analysis(input, opts, trace);
}

}  // namespace jqtrace::cli
