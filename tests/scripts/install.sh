#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` puts the binary, every man page (gzipped) and the
# three completion scripts where tools are found, and nothing else (no tests, no bench).
source "$(dirname "$0")/lib/prelude.bash"
build=$(dirname "$jqtrace")

cmake --install "$build" --prefix "$tmp/p" > /dev/null || { echo "FAIL: cmake --install exited $?"; exit 1; }
expected="bin/jqtrace
share/bash-completion/completions/jqtrace
share/fish/vendor_completions.d/jqtrace.fish
share/zsh/vendor-completions/_jqtrace"
for page in man/*.1; do expected+=$'\n'"share/man/man1/$(basename "$page").gz"; done
got=$(cd "$tmp/p" && find . -type f | sed 's|^\./||' | sort)
[ "$got" = "$(sort <<< "$expected")" ] || fail "installed files differ:"$'\n'"$(diff <(sort <<< "$expected") <(echo "$got"))"
"$tmp/p/bin/jqtrace" --version > /dev/null || fail "the installed jqtrace does not run"
for gz in "$tmp"/p/share/man/man1/*.gz; do
  page=$(basename "$gz" .gz)
  cmp -s <(gzip -dc "$gz") "man/$page" || fail "$gz is not man/$page"
done
cmp -s "$tmp/p/share/bash-completion/completions/jqtrace" <("$jqtrace" completions bash) ||
  fail "the installed bash completion is not what jqtrace completions bash prints"
echo "install: $failures failed"
[ $failures -eq 0 ]
