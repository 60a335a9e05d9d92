#pragma once
// What --version prints: the version (one place: CMakeLists.txt's project()), the git
// commit when built from a checkout, and the libraries' versions it was built with.
#include <string>

namespace jqtrace::cli {

std::string version_text();

}  // namespace jqtrace::cli
