#!/usr/bin/env bash
# One entry point for a fresh machine (README "Quick start"):
#   bash build.sh demo   install what is missing, build Release, run jqtrace on a bundled sample
#   bash build.sh test   install what is missing, build (with -Werror, and sanitizers under CI),
#                        run every test with CTest
#   bash build.sh deb    build the Debian package; its path is the last line printed
#   bash build.sh install-check
#                        build the package, install it with apt-get, check the installed
#                        binary, man page and completions, then remove it (CI runs this)
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

build_deb() {  # prints the package's path last
  configure_and_build build-deb -DJQTRACE_TESTS=OFF >&2
  (cd build-deb && cpack -G DEB > /dev/null)
  local deb
  deb=$(ls "$PWD"/build-deb/jqtrace_*_*.deb | tail -n 1)
  echo "$deb"
}

check_installed_package() {  # $1 = the .deb
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" > /dev/null
  trap 'DEBIAN_FRONTEND=noninteractive '"$sudo"' apt-get remove -y -qq jqtrace > /dev/null' EXIT
  /usr/bin/jqtrace --version
  man -w jqtrace
  man -w jqtrace-stats
  test -s /usr/share/bash-completion/completions/jqtrace
  test -s /usr/share/zsh/vendor-completions/_jqtrace
  test -s /usr/share/fish/vendor_completions.d/jqtrace.fish
  /usr/bin/jqtrace stats samples/decode-small.trace.json > /dev/null
  echo "install-check: $1 installs, runs, and brings its man pages and completions"
}

case "${1:-}" in
  demo)
    install_missing
    configure_and_build build -DJQTRACE_TESTS=OFF
    ./build/jqtrace validate samples/decode-small.trace.json
    ./build/jqtrace stats samples/decode-small.trace.json
    ;;
  deb)
    packages+=(dpkg-dev file)
    install_missing
    build_deb
    ;;
  install-check)
    packages+=(dpkg-dev file man-db)
    install_missing
    check_installed_package "$(build_deb | tail -n 1)"
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
    echo "usage: bash build.sh demo|test|deb|install-check" >&2
    exit 2
    ;;
esac
