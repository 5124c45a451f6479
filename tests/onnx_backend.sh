#!/usr/bin/env bash
# onnx_backend.sh — ONNX's own backend test suite, models nobody here wrote: every model of
# Debian's libonnx-testdata (1,072 under /usr/share/libonnx-testdata/data; sequences,
# optionals, Loop, Scan and If among them) must read, plan with a verified plan, verify that
# plan again against the model as the user has it (`graphmem verify MODEL PLAN`: the passes the
# plan records run again on it), and run the plan clean on 1 and on 4 host streams (every read
# checked against its writer's data).
# The package is a test dependency (`make test` installs it); without it this test fails.
#   tests/onnx_backend.sh GRAPHMEM_BINARY [DATA_DIR]
set -uo pipefail
gm=${1:?usage: onnx_backend.sh GRAPHMEM_BINARY [DATA_DIR]}
data=${2:-/usr/share/libonnx-testdata/data}
# fewer models than the package holds means a broken install, not a pass
min_models=1000
if [ ! -d "$data" ]; then
  echo "onnx_backend: $data is missing (apt-get install libonnx-testdata)" >&2
  exit 1
fi
mapfile -t models < <(find "$data" -name model.onnx | LC_ALL=C sort)
if [ "${#models[@]}" -lt "$min_models" ]; then
  echo "onnx_backend: only ${#models[@]} models under $data (expected at least $min_models)" >&2
  exit 1
fi
one() {
  local gm=$1 m=$2 out rc s p
  p=$(mktemp --suffix=.plan.json)
  out=$("$gm" plan "$m" -q -o "$p" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL plan (exit $rc): $m: $(head -3 <<<"$out" | tr '\n' ' ')"; rm -f "$p"; return; fi
  out=$("$gm" verify "$m" "$p" 2>&1); rc=$?
  rm -f "$p"
  if [ $rc -ne 0 ]; then echo "FAIL verify against the model (exit $rc): $m: $(head -2 <<<"$out" | tr '\n' ' ')"; fi
  for s in 1 4; do
    out=$("$gm" run "$m" --plan --streams "$s" 2>&1); rc=$?
    if [ $rc -ne 0 ] || ! grep -q "verified *yes" <<<"$out"; then
      echo "FAIL run --plan --streams $s (exit $rc): $m: $(grep -m1 -E 'verified|graphmem:' <<<"$out")"
    fi
  done
  echo "ok $m"
}
export -f one
jobs=$(nproc 2>/dev/null || echo 2)
results=$(printf '%s\0' "${models[@]}" | xargs -0 -P "$jobs" -I{} bash -c 'one "$0" "$1"' "$gm" {})
fails=$(grep -c '^FAIL' <<<"$results")
grep '^FAIL' <<<"$results"
ok=$(grep -c '^ok' <<<"$results")
echo "onnx_backend: ${#models[@]} models, $((ok)) planned, $fails failures"
echo "$((${#models[@]} * 4 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ] && [ "$ok" -eq "${#models[@]}" ]
