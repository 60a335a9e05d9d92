#!/usr/bin/env bash
# The include direction is one way: lib/ (reading, the model, analyses) includes only lib/;
# result/ (the result model, renderers, schemas) includes lib/ and result/; cli/ may
# include all three. A lower layer including a higher one fails here.
source "$(dirname "$0")/lib/prelude.bash"
cd "$(dirname "$0")/../.."

# layer_of HEADER: the folder that has it, or nothing for system and library headers.
layer_of() {
  for layer in lib result cli; do
    if [ -f "$layer/$1" ]; then echo "$layer"; return; fi
  done
}
rank() { case $1 in lib) echo 0 ;; result) echo 1 ;; cli) echo 2 ;; esac; }

checked=0
for layer in lib result cli; do
  for file in "$layer"/*.h "$layer"/*.cc; do
    while read -r header; do
      target=$(layer_of "$header")
      [ -n "$target" ] || continue
      checked=$((checked + 1))
      if [ "$(rank "$target")" -gt "$(rank "$layer")" ]; then
        fail "$file includes $target/$header: $layer/ must not depend on $target/"
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  done
done
[ "$checked" -gt 100 ] || fail "only $checked includes checked: is the tree where this test expects?"
echo "layers: $checked includes checked, $failures failed"
[ "$failures" -eq 0 ]
