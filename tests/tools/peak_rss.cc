// peak-rss OUT COMMAND [ARGS...]: runs COMMAND, writes its peak resident set size in KiB
// (the kernel's ru_maxrss of the child) to the file OUT, and exits with its exit status
// (128 + the signal if a signal ended it). For memory checks of script tests: a counter the
// kernel keeps, where GNU time may not be installed.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: peak-rss OUT COMMAND [ARGS...]\n");
    return 2;
  }
  pid_t child = fork();
  if (child < 0) {
    std::perror("peak-rss: fork");
    return 2;
  }
  if (child == 0) {
    execvp(argv[2], argv + 2);
    std::perror("peak-rss: exec");
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) < 0) {
    std::perror("peak-rss: wait4");
    return 2;
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out || std::fprintf(out, "%ld\n", usage.ru_maxrss) < 0 || std::fclose(out) != 0) {
    std::perror("peak-rss: writing the peak");
    return 2;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
