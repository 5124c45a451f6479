#!/bin/sh
# gpu_check.sh — the CUDA backend's checks, for a machine with a GPU (the suite skips them
# elsewhere): test_backend's CUDA cases (streams, events, copies, the pattern kernels, virtual
# memory), then `graphmem run --backend cuda` on every shared model, 1, 2 and 4 streams, in the
# default mode, memory first, and memory first with a learned plan (4 iterations: 3 of them on
# the plan), with every read verified. Prints one line a run and exits
# non-zero on the first failure.
#
#   tests/gpu_check.sh [BUILD_DIR]     (default build/, made by `make`; GM_MODELS: the models)
set -eu
B=${1:-build}
M=${GM_MODELS:-tests/data/models}              # the models in the tree
[ -d "$M" ] || { echo "gpu_check: no models in $M (set GM_MODELS)" >&2; exit 2; }
nvidia-smi -L || { echo "gpu_check: no GPU here" >&2; exit 2; }
[ -x "$B/tests/test_backend" ] || { echo "gpu_check: $B/tests/test_backend missing (build the tests)" >&2; exit 2; }
log=$("$B/tests/test_backend" 2>&1) || { printf '%s\n' "$log"; exit 1; }
printf '%s\n' "$log" | tail -3
case $log in *"SKIPPED ] test_cuda_device"*) echo "gpu_check: test_cuda_device skipped" >&2; exit 1 ;; esac
fail=0
for m in "$M"/*.onnx "$M"/*.graphmem.json; do
  for s in 1 2 4; do
    for f in "" --memory-first "--memory-first --learn-plan"; do
      out=$("$B/graphmem" run "$m" --backend cuda --streams "$s" --iterations 4 $f --json) || { echo "FAIL $m s$s $f"; fail=1; continue; }
      v=$(printf '%s' "$out" | grep -o '"verified":[[:space:]]*[a-z]*' | grep -o '[a-z]*$')
      pk=$(printf '%s' "$out" | grep -o '"device_peak_bytes":[[:space:]]*[0-9]*' | head -1 | grep -o '[0-9]*$')
      drv=$(printf '%s' "$out" | grep -o '"driver_peak_bytes":[[:space:]]*[0-9]*' | grep -o '[0-9]*$')
      echo "$(basename "$m") streams $s ${f:-default}: verified $v, device peak $pk, driver's count $drv"
      [ "$v" = true ] || fail=1
    done
  done
done
exit $fail
