#!/usr/bin/env bash
# run_pipeline_bench.sh — the scale table of BENCHMARKS.md: the whole pipeline of `graphmem plan`
# (read, lint, passes, symbols, lifetimes, packing, verify, free) on generated training-step graphs
# of 10^4, 10^5 and 10^6 nodes, each stage's median time and peak memory over RUNS fresh processes,
# and the scaling exponent of each stage and of the whole between 10^5 and 10^6 nodes
# (log10 of the ratio: 1.0 is linear; the issue's bound is a ratio of 12, an exponent of 1.08).
# Then the command itself, `/usr/bin/time graphmem plan M -q -o plan.json`: its wall time and peak
# memory, the figures issue 28's targets are stated in; and each pass's time (`plan --json`'s
# pass_ms), which stage of the passes grows faster than the graph.
#
# Two graph shapes (gen_graph --shape): "bench", the benchmark's training step, and "sched", the
# stream-scheduled graph of issue 28 (hundreds of While, ~0.54 control edges per node, atomic
# gradients, all-reduces fused over 50 blocks, updates on the side stream).
#
#   bench/run_pipeline_bench.sh BUILD_DIR    (RUNS, default 5; SIZES, default "10000 100000 1000000";
#                                             SHAPES, default "bench sched")
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_pipeline_bench.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gen="$build/bench/gen_graph"
pipe="$build/bench/bench_pipeline"
cli="$build/graphmem"
for exe in "$gen" "$pipe" "$cli"; do
  [ -x "$exe" ] || { echo "run_pipeline_bench: $exe is missing; build first (make)" >&2; exit 2; }
done
runs="${RUNS:-5}"
sizes="${SIZES:-10000 100000 1000000}"
shapes="${SHAPES:-bench sched}"
out="$root/bench/out"
mkdir -p "$out"

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
raw="$out/pipeline_runs.txt"
: >"$raw"
for shape in $shapes; do
  for n in $sizes; do
    # the bench shape keeps its old file name: earlier tables were measured on it
    model="$out/model_$n.json"
    [ "$shape" = bench ] || model="$out/model_${shape}_$n.json"
    [ -f "$model" ] || "$gen" --nodes "$n" --shape "$shape" --streams 2 --seed 1 -o "$model" >/dev/null
    echo "\$ bench_pipeline ${model#"$root"/}   # $runs runs, $(du -m "$model" | cut -f1) MB" >&2
    for r in $(seq "$runs"); do
      echo "shape=$shape size=$n run=$r $("$pipe" "$model")" >>"$raw"
    done
    echo "\$ /usr/bin/time graphmem plan ${model#"$root"/} -q -o plan.json   # $runs runs" >&2
    for r in $(seq "$runs"); do
      /usr/bin/time -f "cli_s=%e cli_kb=%M" -o "$out/time.txt" "$cli" plan "$model" -q -o "$out/plan.json"
      echo "shape=$shape size=$n run=$r $(cat "$out/time.txt")" >>"$raw"
    done
    echo "\$ graphmem plan ${model#"$root"/} --json -o plan.json   # $runs runs: stage_ms, pass_ms" >&2
    for r in $(seq "$runs"); do
      "$cli" plan "$model" --json -o "$out/plan.json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join(f"pass_{k}={v}" for k, v in list(j["pass_ms"].items()) + [("re_sorts", j["stage_ms"]["re_sorts"])]))' \
        | sed "s/^/shape=$shape size=$n run=$r /" >>"$raw"
    done
    rm -f "$out/plan.json" "$out/time.txt"
  done
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$raw" <<'EOF'
import math, statistics, sys
rows, cli, passes = {}, {}, {}
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split())
    key = (kv["shape"], int(kv["size"]))
    (cli if "cli_s" in kv else passes if "pass_lint" in kv or "pass_re_sorts" in kv else rows).setdefault(key, []).append(kv)
stages = ["read", "lint", "passes", "symbols", "lifetimes", "packing", "verify", "free", "total"]
def med(v, key, scale=1.0):
    return statistics.median(float(r[key]) * scale for r in v)
def exponent(a, b):
    return f"{math.log10(b / a):.2f} ({b / a:.1f}x)" if a > 0 else "-"
for shape in dict.fromkeys(k[0] for k in rows):
    sizes = sorted(n for s, n in rows if s == shape)
    print(f"shape: {shape}\n")
    print("| stage | " + " | ".join(f"{n:,} nodes: ms (peak MB)" for n in sizes) + " | exponent 10^5 -> 10^6 |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for s in stages:
        cells = []
        for n in sizes:
            v = rows[(shape, n)]
            kb = med(v, "peak_kb" if s == "total" else s + "_kb")
            cells.append(f"{med(v, s + '_ms'):,.0f} ({kb / 1024:,.0f})")
        exp = "-"
        if (shape, 100000) in rows and (shape, 1000000) in rows:
            exp = exponent(med(rows[(shape, 100000)], s + "_ms"), med(rows[(shape, 1000000)], s + "_ms"))
        print(f"| {s} | " + " | ".join(cells) + f" | {exp} |")
    cells = []
    for n in sizes:
        v = cli.get((shape, n), [])
        cells.append(f"{med(v, 'cli_s', 1e3):,.0f} ({med(v, 'cli_kb') / 1024:,.0f})" if v else "-")
    exp = "-"
    if (shape, 100000) in cli and (shape, 1000000) in cli:
        exp = exponent(med(cli[(shape, 100000)], "cli_s"), med(cli[(shape, 1000000)], "cli_s"))
    print("| **`plan -q -o`** | " + " | ".join(cells) + f" | {exp} |\n")
for shape in dict.fromkeys(k[0] for k in passes):
    sizes = sorted(n for s, n in passes if s == shape)
    print(f"passes, shape {shape} (`plan --json`: pass_ms, each with its re-sort; median ms)\n")
    print("| pass | " + " | ".join(f"{n:,} nodes" for n in sizes) + " | exponent 10^5 -> 10^6 |")
    print("|---|" + "---|" * (len(sizes) + 1))
    names = [k for k in passes[(shape, sizes[-1])][0] if k.startswith("pass_")]
    for k in names:
        cells = [f"{med(passes[(shape, n)], k):,.1f}" if k in passes[(shape, n)][0] else "-" for n in sizes]
        exp = "-"
        if (shape, 100000) in passes and (shape, 1000000) in passes and k in passes[(shape, 100000)][0]:
            exp = exponent(med(passes[(shape, 100000)], k), med(passes[(shape, 1000000)], k))
        label = "the re-sorts among them" if k == "pass_re_sorts" else k[5:]
        print(f"| {label} | " + " | ".join(cells) + f" | {exp} |")
    print()
n_runs = min(len(v) for v in rows.values())
print(f"Medians of {n_runs} runs per size; peak = the most resident memory while the stage ran "
      "(lifetimes, packing and verify share one reading); the last row is the command, wall time and "
      "peak RSS by /usr/bin/time.")
EOF
