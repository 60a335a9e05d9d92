#!/usr/bin/env bash
# The completion scripts are generated from the parser's own definition: every command and
# every option that --help lists appears in each; bash (and zsh and fish, when installed)
# accept them; and bash completes what a user types as they would expect.
source "$(dirname "$0")/lib/prelude.bash"

for shell in bash zsh fish; do
  "$jqtrace" completions $shell > "$tmp/$shell" || fail "jqtrace completions $shell exited $?"
done
commands=$("$jqtrace" --help | awk '/^Subcommands:/{on=1; next} on && /^ +[a-z]/ {print $1}')
[ -n "$commands" ] || fail "no commands in jqtrace --help"
for cmd in $commands; do
  options=$("$jqtrace" "$cmd" --help | grep -oE '^ +(-[a-zA-Z],)?--?[a-zA-Z][-a-zA-Z]*' | tr -d ' ' | tr ',' '\n')
  for shell in bash zsh fish; do
    grep -qw -- "$cmd" "$tmp/$shell" || fail "$shell script lacks the command $cmd"
    for opt in $options; do
      # fish names options without their dashes (-l format, -s o)
      word=$opt
      [ $shell = fish ] && word="${opt#-}" && word="${word#-}"
      grep -qw -- "$word" "$tmp/$shell" || fail "$shell script lacks $cmd's option $opt"
    done
  done
done

bash -n "$tmp/bash" || fail "bash -n rejects the bash script"
if command -v zsh > /dev/null; then zsh -n "$tmp/zsh" || fail "zsh -n rejects the zsh script"
else echo "note: zsh not installed, its script's syntax not checked"; fi
if command -v fish > /dev/null; then fish -n "$tmp/fish" || fail "fish -n rejects the fish script"
else echo "note: fish not installed, its script's syntax not checked"; fi

# expect "WORDS..." "COMPLETIONS": what bash offers for the last word.
mkdir -p "$tmp/dir" && touch "$tmp/dir/run.trace.json" "$tmp/dir/run.trace.json.gz" "$tmp/dir/notes.txt"
expect() {
  local line=$1 want=$2 got
  # shellcheck disable=SC2016
  got=$(cd "$tmp/dir" && bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _jqtrace;
                                  printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$tmp/bash" $line)
  [ "${got% }" = "$want" ] || fail "completing '$line': got '${got% }', want '$want'"
}
expect "jqtrace st" "stats"
expect "jqtrace stats --for" "--format"
expect "jqtrace stats --format ''" "csv json md table tsv"
expect "jqtrace window --format ''" "compact csv trace tsv"
expect "jqtrace stats --unit-at ''" "auto end start"
expect "jqtrace gaps --by ''" "category nstages"
expect "jqtrace help ma" "markers"
expect "jqtrace completions ''" "bash fish zsh"
expect "jqtrace stats r" "run.trace.json run.trace.json.gz"   # traces first, not notes.txt
expect "jqtrace phases n" "notes.txt"                          # logs: any file
echo "completions: $failures failed"
[ $failures -eq 0 ]
