#!/usr/bin/env bash
# svg_chromium.sh — the pictures in real renderers: `graphmem plan --svg` of the embedded
# example, of an ONNX model and of resnet18 rendered by headless Chromium must parse (no
# <parsererror> in the DOM Chromium builds) and must paint (a screenshot, decoded by png_ink,
# has coloured boxes over at least a tenth of it, resnet18 a twentieth); the same check must reject a broken SVG (no
# SVG namespace: an XML tree, no boxes; cut short: a parse error), so it can fail. The DOT of
# each must be laid out by Graphviz's dot. Then what issue 26 asked of the pictures:
#  - resnet18's timeline gives no column to its 43 Const/Data nodes: its stream lane has one
#    node per computing node of the graph after the passes, none a Const, Data or Variable, and
#    the left third of the feature-map panel is painted in the screenshot (it was empty);
#  - the largest tensors are named on the picture: <text class="lbl"> labels, the largest
#    feature-map symbol's among them, and in Chromium every label's text lies inside its tag
#    and no two tags overlap (checked by a script in the page; a copy with larger text must
#    fail it);
#  - the DOT is laid out top to bottom, resnet18's within 1000 pt across (a straight trunk),
#    the example's no more than 2.5 times as wide as tall, and the legend cluster of each is in
#    the left half, within an inch of the top (from `dot -Tdot`'s bounding boxes);
#  - the example's AtomicAddrClean draws its control edges as one bundle: a single edge out of
#    it, to a junction labelled with their number, which fans out to each of them (as many as
#    the graph after the passes lists).
# Missing tools fail the test, naming the Debian package.
# usage: svg_chromium.sh PATH/TO/graphmem PATH/TO/png_ink SOURCE_DIR
set -u
GM=$1
INK=$2
SRC=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check WHAT CONDITION...: a pass when the condition holds
  local what=$1
  shift
  if "$@"; then passes=$((passes + 1)); else fail "$what"; fi
}

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "FAIL: chromium not found: install the Debian package 'chromium' (apt-get install -y chromium)"; exit 1; }
command -v dot >/dev/null || { echo "FAIL: dot not found: install the Debian package 'graphviz' (apt-get install -y graphviz)"; exit 1; }
[ -x "$INK" ] || { echo "FAIL: $INK missing: png_ink needs libpng (Debian package 'libpng-dev'); re-run cmake"; exit 1; }

chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$TMP/profile" "$@" 2>/dev/null; }

# drew SVG [PERCENT]: 0 when Chromium parsed it and painted coloured boxes over >= PERCENT
# (default 10) of the picture; the screenshot stays as $TMP/NAME.png.
drew() {
  local svg=$1 least=${2:-10} name
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
  [ $((colour * 100)) -ge $((total * least)) ] || { echo "  $name: too little painted"; return 1; }
}

EX="$TMP/example.svg"
"$GM" plan --svg "$EX" --dot "$TMP/example.dot" --dump-graph "$TMP/example.graph.json" -q ||
  fail "graphmem plan --svg on the embedded example"
ONNX="$SRC/tests/data/models/control_flow.onnx"
"$GM" plan "$ONNX" --svg "$TMP/onnx.svg" --dot "$TMP/onnx.dot" -q || fail "graphmem plan --svg on $ONNX"
R18="$SRC/tests/data/models/resnet18.onnx"
"$GM" plan "$R18" --svg "$TMP/resnet18.svg" --dot "$TMP/resnet18.dot" --dump-graph "$TMP/resnet18.graph.json" -q ||
  fail "graphmem plan --svg on $R18"
for f in "$EX" "$TMP/onnx.svg"; do
  if drew "$f"; then passes=$((passes + 1)); else fail "$(basename "$f") did not draw"; fi
done
# resnet18's weights are thin bands: less of it is coloured, and 5% is still twice what a
# broken picture shows
if drew "$TMP/resnet18.svg" 5; then passes=$((passes + 1)); else fail "resnet18.svg did not draw"; fi

# The check itself can fail: a picture without the SVG namespace is shown as an XML tree (no
# boxes), and one cut short is a parse error.
sed 's| xmlns="http://www.w3.org/2000/svg"||' "$EX" >"$TMP/no_namespace.svg"
head -c $(($(wc -c <"$EX") / 2)) "$EX" >"$TMP/cut_short.svg"
for f in "$TMP/no_namespace.svg" "$TMP/cut_short.svg"; do
  if drew "$f"; then fail "broken $(basename "$f") passed the check"; else passes=$((passes + 1)); fi
done

# Graphviz lays the DOT out (-Tdot: the layout with each graph's and cluster's bb).
for f in "$TMP/example.dot" "$TMP/onnx.dot" "$TMP/resnet18.dot"; do
  if dot -Tdot "$f" -o "$f.laid" 2>"$TMP/dot.err" && [ -s "$f.laid" ] && dot -Tsvg "$f" -o "$f.svg" 2>>"$TMP/dot.err"; then
    passes=$((passes + 1))
  else
    fail "dot rejected $(basename "$f"): $(head -3 "$TMP/dot.err")"
  fi
done

# --- the timeline's columns: resnet18's stream lane has a node per computing node ---------------
sources=$(grep -cE '"type": "(Const|Data|Variable|RefData)"' "$TMP/resnet18.graph.json")
nodes=$(grep -c '"type": ' "$TMP/resnet18.graph.json")
lane=$(grep -c '<rect class="ni\?" x=' "$TMP/resnet18.svg")
echo "  resnet18: $nodes nodes, $sources Const/Data/Variable; $lane nodes in the stream lane"
check "resnet18 has Const/Data nodes to fold ($sources)" [ "$sources" -ge 40 ]
check "resnet18's lane has $lane nodes, not the $((nodes - sources)) that compute" [ "$lane" -eq $((nodes - sources)) ]
check "resnet18's lane shows a Const, Data or Variable node" \
  bash -c '! grep -qE "<title>[0-9]+: [^<]* \((Const|Data|Variable|RefData)\)" "$1"' _ "$TMP/resnet18.svg"
check "resnet18's title does not say $sources positions were folded" \
  grep -q "positions, $sources of them Const/Data/Variable, folded" "$TMP/resnet18.svg"
# The feature-map panel (the first frame): its left third painted, where the weights' positions
# left it empty.
frame=$(grep -m1 -o '<rect class="frame" x="[0-9.]*" y="[0-9.]*" width="[0-9.]*" height="[0-9.]*"' "$TMP/resnet18.svg" |
  sed 's/[^0-9. ]//g; s/  */ /g')
read -r fx fy fw fh <<<"$frame"
left=$("$INK" "$TMP/resnet18.png" "${fx%.*}" "${fy%.*}" $((${fw%.*} / 3)) "${fh%.*}")
echo "  resnet18 feature map, left third: $left"
check "the left third of resnet18's feature-map panel is not painted ($left)" \
  awk -v s="$left" 'BEGIN { split(s, a, " "); exit !(a[4] * 10 >= a[6]) }'

# --- labels: the largest tensors named, inside their tags in Chromium ------------------------------
for f in "$EX" "$TMP/resnet18.svg"; do
  name=$(basename "$f" .svg)
  n=$(grep -c '<text class="lbl"' "$f")
  check "$name has $n labels, not 3 or more" [ "$n" -ge 3 ]
  # the largest feature-map symbol, from the boxes' titles (id, then "feature_map (...): ... size S")
  big=$(awk '/<title>/ { id = $0; sub(/.*<title>/, "", id) }
    /^feature_map \([a-z0-9]*\): offset [0-9]*, size [0-9]*/ { s = $6 + 0; if (s > max) { max = s; best = id } }
    END { sub(/_out_0$/, "", best); print best }' "$f")
  tail=$big
  [ ${#big} -le 8 ] || tail=${big: -8} # a label may cut the name from the left
  check "$name: the largest feature-map tensor ($big) has no label" \
    bash -c 'grep "<text class=\"lbl\"" "$1" | grep -qF -- "$2"' _ "$f" "$tail"
done
# In the page, each label's text inside its tag and no two tags overlapping (Chromium's own text
# metrics against the widths the C side estimates); a copy with larger text must fail.
label_page() { # label_page SVG HTML: the SVG inline, with the check as a script writing data-labels
  { echo '<!DOCTYPE html><html><body style="margin:0">'
    tail -n +2 "$1"
    cat <<'EOF'
<script>
const tags = [...document.querySelectorAll('g.label')];
const r = tags.map(g => g.querySelector('rect').getBoundingClientRect());
const bad = [];
tags.forEach((g, i) => {
  for (const t of g.querySelectorAll('text')) {
    const b = t.getBoundingClientRect();
    if (b.left < r[i].left - 0.5 || b.right > r[i].right + 0.5 || b.top < r[i].top - 0.5 || b.bottom > r[i].bottom + 0.5)
      bad.push('text outside its tag: ' + t.textContent);
  }
  for (let j = 0; j < i; j++)
    if (r[i].left < r[j].right && r[j].left < r[i].right && r[i].top < r[j].bottom && r[j].top < r[i].bottom)
      bad.push('tags overlap: ' + g.textContent + ' / ' + tags[j].textContent);
});
document.body.setAttribute('data-labels', tags.length + ' labels, ' + bad.length + ' bad' + (bad.length ? ': ' + bad.join('; ') : ''));
</script></body></html>
EOF
  } >"$2"
}
labels_fit() { # labels_fit SVG: 0 when Chromium finds labels and none bad
  local page="$TMP/$(basename "$1" .svg).labels.html" got
  label_page "$1" "$page"
  got=$(chrome --dump-dom "file://$page" | grep -o 'data-labels="[^"]*"')
  echo "  $(basename "$1"): $got"
  [[ "$got" =~ ^data-labels=\"[1-9][0-9]*\ labels,\ 0\ bad\"$ ]]
}
for f in "$EX" "$TMP/resnet18.svg"; do check "labels of $(basename "$f") do not fit in Chromium" labels_fit "$f"; done
sed 's/\.lbl{font-size:10px/.lbl{font-size:16px/' "$TMP/resnet18.svg" >"$TMP/big_text.svg"
if labels_fit "$TMP/big_text.svg"; then fail "labels with 16px text passed the check"; else passes=$((passes + 1)); fi

# --- the DOT: top to bottom, narrow, the legend at the top left --------------------------------------
bb() { # bb LAID [CLUSTER]: "x0 y0 x1 y1" of the graph, or of the cluster (points, y up)
  if [ $# -eq 1 ]; then grep -m1 -o 'bb="[^"]*"' "$1"
  else sed -n "/subgraph $2 {/,\$p" "$1" | grep -m1 -o 'bb="[^"]*"'; fi | tr -c '0-9.\n' ' '
}
for f in "$TMP/example.dot" "$TMP/resnet18.dot"; do
  name=$(basename "$f" .dot)
  check "$name.dot is not rankdir=TB" grep -q 'rankdir=TB' "$f"
  read -r _ _ W H <<<"$(bb "$f.laid")"
  read -r lx0 ly0 lx1 ly1 <<<"$(bb "$f.laid" cluster_legend)"
  echo "  $name.dot: ${W}x$H pt, legend at x $lx0..$lx1, y $ly0..$ly1 (y up)"
  check "$name.dot's legend ($lx0..$lx1 of $W) is not in the left half" \
    awk -v a="$lx0" -v b="$lx1" -v w="$W" 'BEGIN { exit !(a >= 0 && b <= w && a < w / 2) }'
  check "$name.dot's legend (top at $ly1 of $H) is not within an inch of the top" \
    awk -v t="$ly1" -v h="$H" 'BEGIN { exit !(t <= h && h - t <= 72) }'
done
read -r _ _ W H <<<"$(bb "$TMP/resnet18.dot.laid")"
check "resnet18.dot is $W pt wide, more than 1000" awk -v w="$W" 'BEGIN { exit !(w <= 1000) }'
read -r _ _ W H <<<"$(bb "$TMP/example.dot.laid")"
check "example.dot is $W x $H pt, wider than 2.5 times its height" awk -v w="$W" -v h="$H" 'BEGIN { exit !(w <= 2.5 * h) }'

# --- the example's clean node: one bundled edge -----------------------------------------------------
clean=$(grep -o '^  n[0-9]* \[label="[^"\\]*\\nAtomicAddrClean"' "$TMP/example.dot" | head -1 | awk '{print $1}')
cname=$(grep -o '^  n[0-9]* \[label="[^"\\]*\\nAtomicAddrClean"' "$TMP/example.dot" | head -1 | sed 's/.*label="\([^"\\]*\)\\n.*/\1/')
want=$(($(grep -o "\"$cname\"" "$TMP/example.graph.json" | wc -l) - 1)) # its name, then once per control edge
j=j${clean#n}
out=$(grep -c "^  $clean -> " "$TMP/example.dot")
fan=$(grep -c "^  $j -> " "$TMP/example.dot")
echo "  example.dot: $cname ($clean) has $want control edges: $out edge(s) out of it, $fan out of its junction"
check "example.dot: the clean node has no control edges to bundle ($want)" [ "$want" -ge 4 ]
check "example.dot: $out edges out of the clean node, not one" [ "$out" -eq 1 ]
check "example.dot: the clean node's edge is not to a junction labelled $want control edges" \
  grep -q "^  $clean -> $j \[.*label=\" $want control edges\"" "$TMP/example.dot"
check "example.dot: the junction is not a point" grep -q "^  $j \[shape=point" "$TMP/example.dot"
check "example.dot: the junction fans out to $fan, not $want" [ "$fan" -eq "$want" ]

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
