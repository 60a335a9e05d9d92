#!/usr/bin/env bash
# One entry point for a fresh machine (README "Quick start"):
#   bash build.sh demo   install what is missing, build Release, run jqtrace on a bundled sample
#   bash build.sh test   install what is missing, build (with -Werror, and sanitizers under CI),
#                        run every test with CTest
set -euo pipefail
cd "$(dirname "$0")"

packages=(cmake g++ make libcli11-dev rapidjson-dev libfmt-dev doctest-dev zlib1g-dev groff-base gzip)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "build.sh: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {  # $1 = build dir, rest = cmake options
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}

case "${1:-}" in
  demo)
    install_missing
    configure_and_build build -DJQTRACE_TESTS=OFF
    ./build/jqtrace validate samples/decode-small.trace.json
    ./build/jqtrace stats samples/decode-small.trace.json
    ;;
  test)
    install_missing
    extra=()
    # CI also builds with sanitizers so a memory error fails the run, not a user.
    [ "${CI:-}" = "true" ] && extra+=(-DJQTRACE_SANITIZE=ON)
    configure_and_build build-test -DJQTRACE_WERROR=ON "${extra[@]}"
    ctest --test-dir build-test --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: bash build.sh demo|test" >&2
    exit 2
    ;;
esac
