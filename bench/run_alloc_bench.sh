#!/usr/bin/env bash
# run_alloc_bench.sh — the runtime-allocator table of BENCHMARKS.md: graphmem's multi-stream
# allocator (per-stream L2 pools over the caching L1), in its default mode, memory first
# (graphmem-tight: expandable L1, pools recycling before it grows) and memory first learning a plan
# (graphmem-plan), against glibc malloc, jemalloc and mimalloc, all replaying the same allocation
# traces, in one run on one machine.
#
# Each trace is recorded from a model with `graphmem run`'s semantics (passes, stream assignment,
# plan; see bench/alloc_trace.h) into bench/out/*.trace, afresh each run, then replayed in a fresh
# process (so that the model's freed memory does not sit in glibc's heap while glibc's reserved
# bytes are read).
#
#   bench/run_alloc_bench.sh BUILD_DIR      (`make bench` passes build/)
#
# ALLOC_ITER (real models, default 500) and ALLOC_GEN_ITER (generated graphs, default 10) set the
# iterations recorded; ALLOC_RUNS (default 5) the timed replays (the median is quoted).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: bench/run_alloc_bench.sh BUILD_DIR}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
gen="$build/bench/gen_graph"
bench="$build/bench/bench_alloc"
for exe in "$gen" "$bench"; do
  [ -x "$exe" ] || { echo "run_alloc_bench: $exe is missing; build first (make)" >&2; exit 2; }
done
iter="${ALLOC_ITER:-500}"
gen_iter="${ALLOC_GEN_ITER:-10}"
runs="${ALLOC_RUNS:-5}"
out="$root/bench/out"
mkdir -p "$out"
: >"$out/alloc_bench.stderr"

# (model file, streams, iterations)
jobs=()
for m in "$root"/tests/data/models/*.onnx "$root"/tests/data/models/*.graphmem.json; do
  [ -f "$m" ] && jobs+=("$m 2 $iter")
done
for m in resnet50.onnx transformer_lm_train_step.graphmem.json; do
  [ -f "$root/tests/data/models/$m" ] && jobs+=("$root/tests/data/models/$m 4 $iter")
done
# generated training steps: 2,000 nodes is 7.4 GiB at its peak (10,000 would be 34 GiB, more
# than graphmem's default 30 GiB pool threshold and this machine's memory)
for s in 2 4; do
  g="$out/alloc_gen_2000_s$s.json"
  [ -f "$g" ] || "$gen" --nodes 2000 --streams "$s" --seed 7 -o "$g" >/dev/null
  jobs+=("$g $s $gen_iter")
done

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== peers: glibc $(ldd --version | head -1 | awk '{print $NF}'), jemalloc $(dpkg-query -W -f='${Version}' libjemalloc2 2>/dev/null || echo absent), mimalloc $(dpkg-query -W -f='${Version}' 'libmimalloc2*' 2>/dev/null || echo absent)"
echo "\$ bench_alloc --runs $runs --trace bench/out/MODEL.sS.kK.trace   # one process per trace"
echo
header=""
for j in "${jobs[@]}"; do
  read -r model streams k <<<"$j"
  name="$(basename "$model")"
  trace="$out/${name%.*}.s$streams.k$k.trace"
  "$bench" --dump "$trace" --streams "$streams" --iterations "$k" "$model"
  "$bench" --runs "$runs" --label "$name" $header --trace "$trace" 2>>"$out/alloc_bench.stderr"
  header="--no-header"
done
# the per-trace counters after the table (a process substitution interleaved them with it)
sed 's/^/    /' "$out/alloc_bench.stderr" >&2
echo
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
