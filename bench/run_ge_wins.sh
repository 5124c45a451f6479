#!/usr/bin/env bash
# run_ge_wins.sh — how often one of GE's six strategies packs a feature map smaller than both of
# graphmem's own packers (best fit, the DSA search), on every model we have: ONNX's backend suite
# (libonnx-testdata), the shared models of tests/data/models, GE's dumps and offline models of
# tests/data/ge, the scenario graphs, and generated training steps. Every plan is made with
# `--strategy all`, so that every strategy runs; the plan file's summary lists each one's bytes.
# This is the evidence for running GE's strategies only where they can win (issue 28).
#
#   bench/run_ge_wins.sh BUILD_DIR       prints one line per collection and the models GE won on
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_ge_wins.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gm="$build/graphmem"
gen="$build/bench/gen_graph"
[ -x "$gm" ] && [ -x "$gen" ] || { echo "run_ge_wins: build first (make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
suite=/usr/share/libonnx-testdata/data
{
  ls "$suite"/*/*/model.onnx 2>/dev/null | sed 's/^/backend /'
  ls "$root"/tests/data/models/*.onnx "$root"/tests/data/models/*.json | sed 's/^/shared /'
  ls "$root"/tests/data/ge/*.txt "$root"/tests/data/ge/*.om | sed 's/^/ge /'
  ls "$root"/tests/scenarios/*.json | sed 's/^/scenario /'
} >"$tmp/list"
for n in 10000 100000; do
  for s in 1 2 4; do
    "$gen" --nodes "$n" --streams "$s" -o "$tmp/gen_${n}_$s.json" >/dev/null
    echo "generated $tmp/gen_${n}_$s.json" >>"$tmp/list"
    "$gen" --nodes "$n" --streams "$s" --atomic-every 7 -o "$tmp/gen_${n}_${s}_atomic.json" >/dev/null
    echo "generated $tmp/gen_${n}_${s}_atomic.json" >>"$tmp/list"
  done
done

while read -r kind model; do
  # A scenario file holds its graph under "graph"; the others are models.
  m=$model
  if [ "$kind" = scenario ]; then
    python3 -c 'import json,sys; g=json.load(open(sys.argv[1])).get("graph"); g is None or json.dump(g, open(sys.argv[2], "w"))' \
      "$model" "$tmp/scenario.json" 2>/dev/null && m=$tmp/scenario.json || continue
  fi
  rm -f "$tmp/p.json"
  if "$gm" plan "$m" --strategy all -q -o "$tmp/p.json" >/dev/null 2>&1 && [ -s "$tmp/p.json" ]; then
    python3 - "$kind" "$model" "$tmp/p.json" <<'EOF'
import json, sys
kind, model, path = sys.argv[1:]
s = json.load(open(path)).get("summary", {}).get("strategies") or []
own = [x["bytes"] for x in s if "-" not in x["name"]]
ge = [x for x in s if "-" in x["name"]]
if own and ge:
    best_own, best_ge = min(own), min(ge, key=lambda x: x["bytes"])
    verdict = "won" if best_ge["bytes"] < best_own else "tied" if best_ge["bytes"] == best_own else "lost"
    print(kind, verdict, best_ge["name"], best_ge["bytes"], best_own, model)
EOF
  fi
done <"$tmp/list" >"$tmp/results"

python3 - "$tmp/results" <<'EOF'
import collections, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = collections.defaultdict(collections.Counter)
for kind, verdict, *_ in rows:
    by[kind][verdict] += 1
print("| models | planned | GE's best smaller (won) | equal (tied) | larger (lost) |")
print("|---|---|---|---|---|")
for kind in ("backend", "shared", "ge", "scenario", "generated"):
    c = by[kind]
    print(f"| {kind} | {sum(c.values())} | {c['won']} | {c['tied']} | {c['lost']} |")
for kind, verdict, name, ge, own, model in rows:
    if verdict == "won":
        print(f"won: {model}: {name} {ge} bytes, graphmem's own {own} ({100 * (int(ge) - int(own)) / int(own):+.3f}%)")
EOF
