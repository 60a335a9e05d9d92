#!/usr/bin/env bash
# One entry point for a fresh machine (README "Quick start"):
#   bash build.sh demo   install what is missing, build Release, run jqtrace on a bundled sample
#   bash build.sh test   install what is missing, build (with -Werror, and sanitizers under CI),
#                        run every test with CTest
#   bash build.sh deb    build the Debian package; its path is the last line printed
#   bash build.sh fuzz [SECONDS]
#                        build the libFuzzer targets with clang (ASan, UBSan) and run each for
#                        SECONDS (default 60) from the committed seeds; fails on any finding
#   bash build.sh install-check
#                        build the package, install it with apt-get, check the installed
#                        binary, man page and completions, then remove it (CI runs this)
set -euo pipefail
cd "$(dirname "$0")"

packages=(cmake g++ make pkg-config libcli11-dev rapidjson-dev libfmt-dev doctest-dev zlib1g-dev libisal-dev libzstd-dev
          libsqlite3-dev librsvg2-dev
          groff-base gzip zstd time ccache)

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

# Compiles are cached (ccache, keyed on paths relative to this folder): a CI run in a fresh
# clone on a machine that built the same sources before compiles only what changed.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

configure_and_build() {  # $1 = build dir, rest = cmake options
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}

run_fuzzers() {  # $1 = seconds per target
  local seconds=$1 dir=build-fuzz
  CXX=clang++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" -DJQTRACE_FUZZ=ON -DJQTRACE_TESTS=OFF \
    > /dev/null
  cmake --build "$dir" -j "$(nproc)" --target fuzz_trace fuzz_parallel fuzz_text
  local work status=0
  work=$(mktemp -d)
  for target in fuzz_trace fuzz_parallel fuzz_text; do
    local seeds=tests/fuzz/seeds/trace
    [ $target = fuzz_text ] && seeds=tests/fuzz/seeds/text
    mkdir -p "$work/$target"
    cp "$seeds"/* "$work/$target/"  # the corpus grows in a scratch copy, never in the repo
    echo "build.sh: fuzzing $target for $seconds s" >&2
    if ! (cd "$work" && "$OLDPWD/$dir/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
            -dict="$OLDPWD/tests/fuzz/trace.dict" -artifact_prefix="$work/$target-" "$work/$target" \
            > "$work/$target.log" 2>&1); then
      echo "build.sh: $target found a problem:" >&2
      grep -A30 -m1 -E "ERROR|runtime error|deadly signal|Test unit written" "$work/$target.log" >&2 || tail -30 "$work/$target.log" >&2
      ls "$work"/$target-* >&2 2> /dev/null
      status=1
    fi
    grep -E "^Done|cov:" "$work/$target.log" | tail -1 >&2
  done
  rm -rf "$work"
  return $status
}

build_deb() {  # prints the package's path last
  # The Release build of demo (and of CI's test step): the package reuses it, not a third build.
  configure_and_build build -DJQTRACE_TESTS=OFF >&2
  (cd build && cpack -G DEB > /dev/null)
  local deb
  deb=$(ls "$PWD"/build/jqtrace_*_*.deb | tail -n 1)
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
  fuzz)
    packages+=(clang libclang-rt-14-dev)
    install_missing
    run_fuzzers "${2:-60}"
    ;;
  install-check)
    packages+=(dpkg-dev file man-db)
    install_missing
    check_installed_package "$(build_deb | tail -n 1)"
    ;;
  test)
    # work_scaling.sh counts instructions; terminal_width.sh needs script(1); the browser
    # tests render SVG and HTML in chromium and check them with xmllint; opened_once.sh
    # counts a command's opens of its trace with strace.
    packages+=(valgrind bsdutils chromium libxml2-utils strace sqlite3)
    install_missing
    extra=()
    # CI also builds with sanitizers so a memory error fails the run, not a user.
    # and a plain Release build beside it for what valgrind counts (work_scaling.sh).
    if [ "${CI:-}" = "true" ]; then
      extra+=(-DJQTRACE_SANITIZE=ON)
      # Configured as demo and deb configure it (the sanitizer build has -Werror), so that
      # install-check packages this build instead of compiling a third one.
      configure_and_build build -DJQTRACE_TESTS=OFF
    fi
    configure_and_build build-test -DJQTRACE_WERROR=ON "${extra[@]}"
    ctest --test-dir build-test --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: bash build.sh demo|test|deb|install-check|fuzz [SECONDS]" >&2
    exit 2
    ;;
esac
