#!/usr/bin/env bash
# run_passes_bench.sh — the compiler-side benchmarks of BENCHMARKS.md: GE's symbol table and the
# read/write conflict pass, GraphLint and the access-order pass, on generated models of 200,000
# and 1,000,000 nodes (5 runs each, medians), with the peak memory of the stages.
#
#   bench/run_passes_bench.sh BUILD_DIR      (`make bench` passes build/)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_passes_bench.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gen="$build/bench/gen_graph"
passes="$build/bench/bench_passes"
lint="$build/bench/bench_lint"
order="$build/bench/bench_access_order"
for exe in "$gen" "$passes" "$lint" "$order"; do
  [ -x "$exe" ] || { echo "run_passes_bench: $exe is missing; build first (make)" >&2; exit 2; }
done
out="$root/bench/out"
mkdir -p "$out"

run() { echo "\$ $*"; "$@"; }

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
for n in 200000 1000000; do
  file="$out/model_$n.json"
  [ -f "$file" ] || run "$gen" --nodes "$n" --streams 2 --seed 1 -o "$file"
  run "$passes" "$file" --runs 5
  run "$lint" "$file" --runs 5
  run "$order" "$file" --runs 5
  echo
done
