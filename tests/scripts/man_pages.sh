#!/usr/bin/env bash
# The man pages must format without a single groff warning (-ww), and every command
# jqtrace has must have its page.
set -u
jqtrace=$1
status=0
for page in man/*.1; do
  # As a terminal shows it too (80 columns): a word too long for a line is a warning there.
  out=$(groff -man -ww -z "$page" 2>&1; groff -man -ww -z -Tutf8 -rLL=78n "$page" 2>&1)
  if [ -n "$out" ]; then
    echo "FAIL: $page:"
    echo "$out"
    status=1
  fi
done
for cmd in $("$jqtrace" --help | awk '/^Subcommands:/{on=1; next} on && /^ +[a-z]/ {print $1}'); do
  if [ ! -f "man/jqtrace-$cmd.1" ]; then
    echo "FAIL: no man page man/jqtrace-$cmd.1 for the '$cmd' command"
    status=1
  fi
done
[ -f man/jqtrace.1 ] || { echo "FAIL: no man/jqtrace.1"; status=1; }
[ $status -eq 0 ] && echo "man pages: clean"
exit $status
