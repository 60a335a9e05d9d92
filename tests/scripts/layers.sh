#!/usr/bin/env bash
# The include direction is one way, from higher layers to lower ones: lib/'s folders by
# layer (util, input, json, core, load, model, index, analysis, export: each includes only its own
# and lower ones), then result/ (the result model, renderers, schemas), then cli/. A lower
# layer including a higher one fails here, and so does a lib/ file outside the layers.
source "$(dirname "$0")/lib/prelude.bash"
cd "$(dirname "$0")/../.."

layers=(lib/util lib/input lib/json lib/core lib/load lib/model lib/index lib/analysis lib/export result cli)

# layer_of HEADER: the folder that has it, or nothing for system and library headers.
layer_of() {
  for layer in "${layers[@]}"; do
    if [ -f "$layer/$1" ]; then echo "$layer"; return; fi
  done
}
rank() {
  local r
  for r in "${!layers[@]}"; do [ "${layers[$r]}" = "$1" ] && { echo "$r"; return; }; done
}

for file in lib/*.h lib/*.cc; do
  [ -e "$file" ] && fail "$file is in no layer: lib/ files go in one of ${layers[*]:0:9}"
done

checked=0
for layer in "${layers[@]}"; do
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
