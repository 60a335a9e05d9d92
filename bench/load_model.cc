// Builds the full trace model (what stats, markers, gaps and window query) and prints its
// size: the benchmark's "model" row. Not a user command.
#include <cstdio>
#include <string>

#include "trace.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: load-model FILE\n");
    return 2;
  }
  std::string err;
  auto source = jqtrace::Source::open(argv[1], &err);
  if (!source) {
    std::fprintf(stderr, "load-model: %s: %s\n", argv[1], err.c_str());
    return 3;
  }
  jqtrace::Trace trace;
  jqtrace::ReadResult r = jqtrace::load_trace(*source, &trace, nullptr);
  if (r.status == jqtrace::ReadStatus::input_error) {
    std::fprintf(stderr, "load-model: %s\n", r.message.c_str());
    return 3;
  }
  std::size_t spans = 0;
  for (const auto& lane : trace.lanes) spans += lane.spans.size();
  std::printf("events=%llu spans=%zu lanes=%zu chains=%zu model_bytes=%zu\n",
              static_cast<unsigned long long>(trace.events), spans, trace.lanes.size(), trace.chains.size(),
              trace.memory_bytes());
  std::fflush(stdout);
  return 0;
}
