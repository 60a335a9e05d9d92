// The decoding floor: jqtrace's own decoder for a compressed trace (ISA-L or zlib for
// gzip, zstd), its text thrown away. A compressed trace cannot be read faster than this on
// one thread; bench/run.sh reports it beside the parse floor.
//
//   decode-floor FILE      prints the decoder, the text's size and the MB/s
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <vector>

#include "decoders.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: decode-floor FILE\n");
    return 2;
  }
  int fd = ::open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::perror(argv[1]);
    return 3;
  }
  auto start = std::chrono::steady_clock::now();
  jqtrace::Compression found = jqtrace::Compression::none;
  auto in = jqtrace::decode_by_magic(jqtrace::fd_input(fd, true), &found);
  std::vector<char> buffer(1 << 20);
  uint64_t bytes = 0;
  long n;
  while ((n = in->read(buffer.data(), buffer.size())) > 0) bytes += static_cast<uint64_t>(n);
  if (n < 0) {
    std::fprintf(stderr, "%s: %s\n", argv[1], in->error().c_str());
    return 3;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const char* how = found == jqtrace::Compression::gzip ? (jqtrace::have_isal() ? "gzip (ISA-L)" : "gzip (zlib)")
                                                          : found == jqtrace::Compression::zstd ? "zstd" : "plain";
  std::printf("%s: %llu bytes of text in %.3f s (%.1f MB/s)\n", how, static_cast<unsigned long long>(bytes), seconds,
              static_cast<double>(bytes) / 1e6 / seconds);
  return 0;
}
