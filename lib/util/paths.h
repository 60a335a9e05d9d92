#pragma once
// Splitting a path where its last '/' is, as the index and -o name the files beside a trace.
#include <string>

namespace jqtrace {

/// The folder a path names a file in: "." for a bare name, "/" for a file at the root.
inline std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

/// The file's own name, after its last '/'.
inline std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace jqtrace
