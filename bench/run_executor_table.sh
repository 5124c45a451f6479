#!/bin/sh
# run_executor_table.sh — the `graphmem run` table of BENCHMARKS.md: every shared model on 1, 2, 4
# and 8 host streams, 6 iterations, every read verified, in GE's mode, memory first, and memory
# first with a learned plan. One markdown row a run: device peaks (bytes L1 held from the device at
# most), the plan's region, iterations on the plan and departures, internal dependencies the
# planned mallocs added, corrupted reads over the three runs, and the median wall clock of an
# iteration after the first in each mode (graphmem run's median_iteration_ns, in ms).
#
#   bench/run_executor_table.sh [BUILD_DIR]     (default build/; GM_MODELS: the models;
#                                                GM_BACKEND: host, the default, or cuda;
#                                                GM_GRANULE: --vm-granularity, e.g. 2097152)
# On cuda a device peak is followed by the driver's count in brackets (graphmem run's
# driver_peak_bytes: whole pages and granules, and what the driver took for streams and kernels).
set -eu
B=${1:-build}
BK=${GM_BACKEND:-host}
GR=${GM_GRANULE:+--vm-granularity $GM_GRANULE}
M=${GM_MODELS:-tests/data/models}
[ -d "$M" ] || { echo "run_executor_table: no models in $M (set GM_MODELS)" >&2; exit 2; }
field() { printf '%s' "$1" | grep -o "\"$2\":[[:space:]]*[0-9]*" | head -1 | grep -o '[0-9]*$'; }
echo "| model | streams | device peak, default | memory first | memory first + learned plan | the plan's region | iterations on the plan, departures | dependencies added | corrupted reads | ms an iteration: default, memory first, plan |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in "$M"/*.onnx "$M"/*.graphmem.json; do
  for s in 1 2 4 8; do
    row="| $(basename "$m") | $s"
    bad=0
    ms=""
    for f in "" "--memory-first" "--memory-first --learn-plan"; do
      out=$("$B/graphmem" run "$m" --backend "$BK" --streams "$s" --iterations 6 $f $GR --json)
      drv=$(field "$out" driver_peak_bytes)
      row="$row | $(field "$out" device_peak_bytes)$([ "${drv:-0}" = 0 ] || echo " ($drv)")"
      bad=$((bad + $(field "$out" corrupted_reads)))
      ms="$ms${ms:+, }$(awk -v n="$(field "$out" median_iteration_ns)" 'BEGIN { printf "%.2f", n / 1e6 }')"
    done
    row="$row | $(field "$out" plan_region_bytes) | $(field "$out" plan_iterations), $(field "$out" plan_departures)"
    echo "$row | $(field "$out" plan_orders) | $bad | $ms |"
  done
done
