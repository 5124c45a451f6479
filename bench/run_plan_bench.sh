#!/usr/bin/env bash
# run_plan_bench.sh — the memory-plan table of BENCHMARKS.md: graphmem's planner against GE's
# six strategies on the shared real models and on generated training-step graphs (1, 2 and 4
# streams, 10,000 and 100,000 nodes), all in one run on one machine.
#
#   bench/run_plan_bench.sh BUILD_DIR      (`make bench` passes build/)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_plan_bench.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gen="$build/bench/gen_graph"
plan="$build/bench/bench_plan"
for exe in "$gen" "$plan"; do
  [ -x "$exe" ] || { echo "run_plan_bench: $exe is missing; build first (make)" >&2; exit 2; }
done
out="$root/bench/out"
mkdir -p "$out"
models=("$root"/tests/data/models/*.onnx "$root"/tests/data/models/*.graphmem.json)
for n in 10000 100000; do
  for s in 1 2 4; do
    file="$out/plan_${n}_s$s.json"
    [ -f "$file" ] || "$gen" --nodes "$n" --streams "$s" --seed 7 -o "$file"
    models+=("$file")
  done
done
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "\$ bench_plan ${models[*]##*/}"
"$plan" "${models[@]}"
