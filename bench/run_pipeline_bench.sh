#!/usr/bin/env bash
# run_pipeline_bench.sh — the scale table of BENCHMARKS.md: the whole pipeline of `graphmem plan`
# (read, lint, passes, symbols, lifetimes, packing, verify, free) on generated training-step graphs
# of 10^4, 10^5 and 10^6 nodes, each stage's median time and peak memory over RUNS fresh processes,
# and the scaling exponent of each stage and of the whole between 10^5 and 10^6 nodes
# (log10 of the ratio: 1.0 is linear; the issue's bound is a ratio of 12, an exponent of 1.08).
#
#   bench/run_pipeline_bench.sh BUILD_DIR            (RUNS, default 5; SIZES, default "10000 100000 1000000")
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_pipeline_bench.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gen="$build/bench/gen_graph"
pipe="$build/bench/bench_pipeline"
for exe in "$gen" "$pipe"; do
  [ -x "$exe" ] || { echo "run_pipeline_bench: $exe is missing; build first (make)" >&2; exit 2; }
done
runs="${RUNS:-5}"
sizes="${SIZES:-10000 100000 1000000}"
out="$root/bench/out"
mkdir -p "$out"

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
raw="$out/pipeline_runs.txt"
: >"$raw"
for n in $sizes; do
  model="$out/model_$n.json"
  [ -f "$model" ] || "$gen" --nodes "$n" --streams 2 --seed 1 -o "$model" >/dev/null
  echo "\$ bench_pipeline bench/out/model_$n.json   # $runs runs, $(du -m "$model" | cut -f1) MB" >&2
  for r in $(seq "$runs"); do
    echo "size=$n run=$r $("$pipe" "$model")" >>"$raw"
  done
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$raw" <<'EOF'
import math, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split())
    rows.setdefault(int(kv["size"]), []).append(kv)
stages = ["read", "lint", "passes", "symbols", "lifetimes", "packing", "verify", "free", "total"]
sizes = sorted(rows)
def med(n, key):
    return statistics.median(float(r[key]) for r in rows[n])
print("| stage | " + " | ".join(f"{n:,} nodes: ms (peak MB)" for n in sizes) + " | exponent 10^5 -> 10^6 |")
print("|---|" + "---|" * (len(sizes) + 1))
for s in stages:
    cells = []
    for n in sizes:
        kb = med(n, "peak_kb" if s == "total" else s + "_kb")
        cells.append(f"{med(n, s + '_ms'):,.0f} ({kb / 1024:,.0f})")
    exp = "-"
    if 100000 in rows and 1000000 in rows:
        a, b = med(100000, s + "_ms"), med(1000000, s + "_ms")
        exp = f"{math.log10(b / a):.2f} ({b / a:.1f}x)" if a > 0 else "-"
    print(f"| {s} | " + " | ".join(cells) + f" | {exp} |")
n_runs = min(len(v) for v in rows.values())
print(f"\nMedians of {n_runs} runs per size; peak = the most resident memory while the stage ran "
      "(lifetimes, packing and verify share one reading).")
EOF
