#!/usr/bin/env bash
# valgrind_cli.sh — the command line under Valgrind's memcheck over every model in tests/data/models and the
# embedded example: `plan` (passes, planner in threads, verifier) and `run` (host streams, the
# executor). Any invalid access or leak fails it. Part of CI (.ci/run).
#   tests/valgrind_cli.sh GRAPHMEM_BINARY SOURCE_DIR
set -uo pipefail
gm=${1:?usage: valgrind_cli.sh GRAPHMEM_BINARY SOURCE_DIR}
src=${2:?usage: valgrind_cli.sh GRAPHMEM_BINARY SOURCE_DIR}
command -v valgrind >/dev/null || { echo "valgrind_cli: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
# the command may be linked with jemalloc: memcheck replaces its malloc too
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --soname-synonyms=somalloc=*jemalloc*)
fails=0 runs=0
check() {
  runs=$((runs + 1))
  "${vg[@]}" "$@" >/dev/null 2>"${TMPDIR:-/tmp}/vg.err"
  local rc=$?
  if [ $rc -eq 99 ] || grep -q "==[0-9]*==" "${TMPDIR:-/tmp}/vg.err"; then
    echo "FAIL (valgrind): $*"; sed 's/^/  /' "${TMPDIR:-/tmp}/vg.err" | head -20; fails=$((fails + 1))
  elif [ $rc -ne 0 ]; then
    echo "FAIL (exit $rc): $*"; head -5 "${TMPDIR:-/tmp}/vg.err"; fails=$((fails + 1))
  fi
}
check "$gm" plan
check "$gm" run --streams 2 --iterations 2
check "$gm" run --plan --streams 2 --iterations 2
for m in "$src"/tests/data/models/*.onnx "$src"/tests/data/models/*.graphmem.json; do
  check "$gm" plan "$m"
done
check "$gm" run "$src/tests/data/models/control_flow.onnx" --streams 3 --iterations 2
echo "valgrind_cli: $runs runs, $fails failed"
[ $fails -eq 0 ]
