#!/usr/bin/env bash
# run_load_bench.sh — the load benchmark of BENCHMARKS.md: generates 200,000- and 20,000-node
# models with bench/gen_graph, times loading each with bench/bench_load (5 runs, medians), and
# times CPython's json.load on the same files as a peer for scale (a ratio to read, not a
# pass/fail). Prints the machine and every command so a result can be reproduced.
#
#   bench/run_load_bench.sh BUILD_DIR      (`make bench` passes build/)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_load_bench.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gen="$build/bench/gen_graph"
load="$build/bench/bench_load"
for exe in "$gen" "$load"; do
  [ -x "$exe" ] || { echo "run_load_bench: $exe is missing; build first (make)" >&2; exit 2; }
done
out="$root/bench/out"
mkdir -p "$out"
runs=5

# Runs and echoes a command, so the log holds exactly what produced each figure.
run() { echo "\$ $*"; "$@"; }

echo "== machine"
echo "cores: $(nproc)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
echo "kernel: $(uname -sr); compiler: $(cc --version 2>/dev/null | head -1)"
echo "build: $build ($(grep -m1 '^CMAKE_BUILD_TYPE' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || echo '?'))"
echo

# The peer: the whole `python3 -c ...` process per run (interpreter start-up included, about
# 20 ms, which is small next to the parse at these sizes), median of $runs.
peer_median_ms() {
  local file="$1" i t0 t1
  local -a ms=()
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$file"
    t1=$(date +%s%N)
    ms+=($(((t1 - t0) / 1000000)))
  done
  printf '%s\n' "${ms[@]}" | sort -n | sed -n "$((runs / 2 + 1))p"
}

summary=()
for n in 200000 20000; do
  file="$out/model_$n.json"
  echo "== $n nodes"
  run "$gen" --nodes "$n" --streams 2 --seed 1 -o "$file"
  log="$out/bench_load_$n.txt"
  echo "\$ $load $file --runs $runs"
  "$load" "$file" --runs "$runs" | tee "$log"
  ours=$(awk '$1 == "med" {print $4}' "$log")
  if command -v python3 >/dev/null 2>&1; then
    echo "\$ python3 -c 'import json,sys; json.load(open(sys.argv[1]))' $file   # x$runs, median"
    peer=$(peer_median_ms "$file")
    echo "python3 json.load: median $peer ms"
    ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
    summary+=("$n nodes: graphmem load (read+parse+build+validate+topo) median $ours ms; CPython json.load $peer ms; ratio graphmem/CPython $ratio")
  else
    summary+=("$n nodes: graphmem load median $ours ms; python3 not found, no peer")
  fi
  echo
done

echo "== summary"
printf '%s\n' "${summary[@]}"
