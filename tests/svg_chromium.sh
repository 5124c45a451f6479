#!/usr/bin/env bash
# svg_chromium.sh — the pictures in real renderers: `graphmem plan --svg` of the embedded
# example and of an ONNX model rendered by headless Chromium must parse (no <parsererror> in
# the DOM Chromium builds) and must paint (a screenshot, decoded by png_ink, has coloured boxes
# over at least a tenth of it); the same check must reject a broken SVG (no SVG namespace: an
# XML tree, no boxes; cut short: a parse error), so it can fail. The DOT of both must be laid
# out by Graphviz's dot. Missing tools fail the test, naming the Debian package.
# usage: svg_chromium.sh PATH/TO/graphmem PATH/TO/png_ink SOURCE_DIR
set -u
GM=$1
INK=$2
SRC=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "FAIL: chromium not found: install the Debian package 'chromium' (apt-get install -y chromium)"; exit 1; }
command -v dot >/dev/null || { echo "FAIL: dot not found: install the Debian package 'graphviz' (apt-get install -y graphviz)"; exit 1; }
[ -x "$INK" ] || { echo "FAIL: $INK missing: png_ink needs libpng (Debian package 'libpng-dev'); re-run cmake"; exit 1; }

chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$TMP/profile" "$@" 2>/dev/null; }

# drew SVG: 0 when Chromium parsed it and painted coloured boxes over >= 10% of the picture.
drew() {
  local svg=$1 name
  name=$(basename "$svg" .svg)
  chrome --dump-dom "file://$svg" >"$TMP/$name.dom" || { echo "  chromium --dump-dom failed on $svg"; return 1; }
  if grep -q "parsererror" "$TMP/$name.dom"; then echo "  $name: Chromium reports a parse error"; return 1; fi
  local w h
  w=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)".*/\1/p' "$svg" | head -1)
  h=$(sed -n 's/.*<svg [^>]*height="\([0-9]*\)".*/\1/p' "$svg" | head -1)
  [ -n "$w" ] && [ -n "$h" ] || { w=1400; h=1200; }
  chrome --screenshot="$TMP/$name.png" --window-size="$w,$h" "file://$svg" >/dev/null
  [ -s "$TMP/$name.png" ] || { echo "  $name: no screenshot"; return 1; }
  local out colour total
  out=$("$INK" "$TMP/$name.png") || { echo "  $name: png_ink failed"; return 1; }
  colour=$(echo "$out" | awk '{print $4}')
  total=$(echo "$out" | awk '{print $6}')
  echo "  $name: ${w}x$h, $out"
  [ $((colour * 10)) -ge "$total" ] || { echo "  $name: too little painted"; return 1; }
}

EX="$TMP/example.svg"
"$GM" plan --svg "$EX" --dot "$TMP/example.dot" -q || fail "graphmem plan --svg on the embedded example"
ONNX="$SRC/tests/data/models/control_flow.onnx"
"$GM" plan "$ONNX" --svg "$TMP/onnx.svg" --dot "$TMP/onnx.dot" -q || fail "graphmem plan --svg on $ONNX"
for f in "$EX" "$TMP/onnx.svg"; do
  if drew "$f"; then passes=$((passes + 1)); else fail "$(basename "$f") did not draw"; fi
done

# The check itself can fail: a picture without the SVG namespace is shown as an XML tree (no
# boxes), and one cut short is a parse error.
sed 's| xmlns="http://www.w3.org/2000/svg"||' "$EX" >"$TMP/no_namespace.svg"
head -c $(($(wc -c <"$EX") / 2)) "$EX" >"$TMP/cut_short.svg"
for f in "$TMP/no_namespace.svg" "$TMP/cut_short.svg"; do
  if drew "$f"; then fail "broken $(basename "$f") passed the check"; else passes=$((passes + 1)); fi
done

# Graphviz lays the DOT out.
for f in "$TMP/example.dot" "$TMP/onnx.dot"; do
  if dot -Tsvg "$f" -o "$TMP/$(basename "$f").svg" 2>"$TMP/dot.err" && [ -s "$TMP/$(basename "$f").svg" ]; then
    passes=$((passes + 1))
  else
    fail "dot rejected $(basename "$f"): $(head -3 "$TMP/dot.err")"
  fi
done

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
