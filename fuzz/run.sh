#!/usr/bin/env bash
# run.sh — builds the fuzz targets with clang (build/fuzz), seeds their corpora when missing
# (fuzz/seed.sh) and runs each target for FUZZ_SECONDS (default 60), FUZZ_JOBS at a time
# (default 2). Prints the executions of each target; exits 1 when any target found a crash,
# leak, UBSan report, timeout (> 1 s for one input) or out-of-memory (> 2 GB), 0 otherwise.
#   fuzz/run.sh [TARGET...]                      all six when none is named
#   FUZZ_SECONDS=10 fuzz/run.sh                  the smoke run
#   FUZZ_RUNS=1000000 fuzz/run.sh fuzz_json      a fixed number of executions instead
# A finding is left in build/fuzz/artifacts/<target>-crash-<sha1> (or leak-, timeout-, oom-);
# replay it with build/fuzz/<target> FILE. The corpora grow as the runs find new coverage.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=$root/build/fuzz
secs=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-}
jobs=${FUZZ_JOBS:-2}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_json fuzz_onnx fuzz_ge_text fuzz_ge_om fuzz_dsa_csv fuzz_pipeline)

cc=${FUZZ_CC:-$(command -v clang || command -v clang-14 || true)}
[ -n "$cc" ] || { echo "run.sh: clang not found (make fuzz-deps installs it)" >&2; exit 2; }
cmake -S "$root/fuzz" -B "$bdir" -DCMAKE_C_COMPILER="$cc" >/dev/null || exit 2
# A second try: when src/ gains a file, CMake's glob check regenerates during the first build,
# which can then fail to link; the second build has the new list.
cmake --build "$bdir" -j "$jobs" >/dev/null 2>&1 || cmake --build "$bdir" -j "$jobs" >/dev/null || exit 2
# Seeded when a target's corpus is missing (a target added since the last seeding too).
for t in "${targets[@]}"; do
  [ -d "$bdir/corpus/$t" ] || { "$root/fuzz/seed.sh" "$bdir" >/dev/null || exit 2; break; }
done
mkdir -p "$bdir/artifacts" "$bdir/logs"

run_one() {
  local t=$1 dict=() limit d=${1/fuzz_pipeline/fuzz_json} # the pipeline reads JSON too
  [ -f "$root/fuzz/$d.dict" ] && dict=(-dict="$root/fuzz/$d.dict")
  if [ -n "$runs" ]; then limit=-runs=$runs; else limit=-max_total_time=$secs; fi
  # -timeout=1: no input may take a second; -rss_limit_mb: nor 2 GB; the log keeps the
  # sanitizer's report for the summary below.
  "$bdir/$t" "$limit" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$bdir/artifacts/$t-" "$bdir/corpus/$t" >"$bdir/logs/$t.log" 2>&1
  echo $? >"$bdir/logs/$t.rc"
}

start=$(date +%s)
running=0
for t in "${targets[@]}"; do
  [ -x "$bdir/$t" ] || { echo "run.sh: no target $t" >&2; exit 2; }
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

status=0
printf '%-14s %12s %10s  %s\n' target executions exec/s result
for t in "${targets[@]}"; do
  log=$bdir/logs/$t.log rc=$(cat "$bdir/logs/$t.rc")
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$rc" = 0 ]; then res=ok; else
    res="FOUND (rc $rc): $(grep -m1 -E 'SUMMARY|ERROR: libFuzzer' "$log"); see $log"
    status=1
  fi
  printf '%-14s %12s %10s  %s\n' "$t" "${n:-?}" "${rate:-?}" "$res"
done
echo "total $(( $(date +%s) - start )) s; artifacts in $bdir/artifacts"
exit $status
