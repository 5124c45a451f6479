#!/usr/bin/env bash
# install_example.sh BUILD SRC CC MODEL — what a user of the installed library does:
#   1. cmake --install into a temporary prefix (and once more with DESTDIR, staged as packagers
#      do): the command, library, headers, man page, pkg-config file and CMake package land
#      where they should, and graphmem.pc names the prefix of the install;
#   2. examples/plan_model.c built against it (a) with pkg-config alone and (b) with CMake's
#      find_package(graphmem) through examples/CMakeLists.txt;
#   3. both programs run on the embedded example and on MODEL, and print exactly the numbers the
#      installed graphmem command prints for the same model; the plan they write verifies with
#      `graphmem verify`; bad input is exit 2 with the file named.
# A library built with sanitizers carries their runtime in its link flags (graphmem.pc,
# graphmem::graphmem), so this works unchanged in the ASan and the Release build.
set -u
BUILD=$1
SRC=$2
CC=$3
MODEL=$4
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P=$TMP/prefix

# ---- 1. the install ----------------------------------------------------------------------
cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; echo "FAIL: cmake --install"; exit 1; }
PC=$(find "$P" -name graphmem.pc -path '*/pkgconfig/*')
LIBA=$(find "$P" -name libgraphmem.a)
for f in "$P/bin/graphmem" "$P/include/graphmem/graph.h" "$P/include/graphmem/plan.h" \
         "$P/share/man/man1/graphmem.1" "$PC" "$LIBA" \
         "$(dirname "$LIBA")/cmake/graphmem/graphmemConfig.cmake" \
         "$(dirname "$LIBA")/cmake/graphmem/graphmemConfigVersion.cmake" \
         "$(dirname "$LIBA")/cmake/graphmem/graphmemTargets.cmake" \
         "$P/share/doc/graphmem/examples/plan_model.c"; do
  [ -n "$f" ] && [ -f "$f" ] || fail "not installed: ${f:-graphmem.pc or libgraphmem.a}"
done
[ -n "$PC" ] && [ -n "$LIBA" ] || { echo "$fails failure(s)"; exit 1; }
[ -z "$(find "$P/include" -name '*_internal.h' -o -name 'ir.h')" ] || fail "internal headers installed"
export PKG_CONFIG_PATH=$(dirname "$PC")
[ "$(pkg-config --variable=prefix graphmem)" = "$P" ] || fail "graphmem.pc prefix is '$(pkg-config --variable=prefix graphmem)', not $P"
[ "$(pkg-config --modversion graphmem)" = "$("$P/bin/graphmem" --version | cut -d' ' -f2)" ] ||
  fail "graphmem.pc version $(pkg-config --modversion graphmem) is not the command's"

# Staged (DESTDIR): files under the stage, the .pc naming the final prefix.
DESTDIR=$TMP/stage cmake --install "$BUILD" --prefix /opt/gm >"$TMP/stage.log" 2>&1 || fail "DESTDIR install"
SPC=$(find "$TMP/stage/opt/gm" -name graphmem.pc 2>/dev/null)
[ -n "$SPC" ] && [ -f "$TMP/stage/opt/gm/bin/graphmem" ] || fail "DESTDIR install did not stage under $TMP/stage/opt/gm"
[ -n "$SPC" ] && { grep -qx 'prefix=/opt/gm' "$SPC" || fail "staged graphmem.pc: $(grep '^prefix=' "$SPC"), not prefix=/opt/gm"; }

# ---- 2. the example, built two ways --------------------------------------------------------
mkdir -p "$TMP/a"
# shellcheck disable=SC2046 # word splitting of the flags is the point
"$CC" -std=c11 -Wall -Wextra -Werror -o "$TMP/a/plan_model" "$SRC/examples/plan_model.c" \
  $(pkg-config --cflags --libs --static graphmem) >"$TMP/a.log" 2>&1 ||
  { cat "$TMP/a.log"; fail "build with pkg-config: $CC plan_model.c $(pkg-config --cflags --libs --static graphmem)"; }
cmake -S "$SRC/examples" -B "$TMP/b" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" \
  -DCMAKE_BUILD_TYPE=Release >"$TMP/b.log" 2>&1 && cmake --build "$TMP/b" >>"$TMP/b.log" 2>&1 ||
  { cat "$TMP/b.log"; fail "build with find_package(graphmem)"; }

# ---- 3. what they print --------------------------------------------------------------------
# The expected lines, from the installed command's summary of the same model.
expect_lines() { # MODEL...: the lines plan_model must print
  local j t
  j=$("$P/bin/graphmem" plan "$@" --json --reproducible) || { fail "graphmem plan $* --json"; return; }
  t=$("$P/bin/graphmem" plan "$@") || { fail "graphmem plan $*"; return; }
  # cJSON prints one top-level key a line, indented by one tab: "key":<TAB>value,
  g() { sed -nE -e "s/^\t\"$1\":\t\"(.*)\",?\$/\1/p" -e "s/^\t\"$1\":\t([^\",]*),?\$/\1/p" <<<"$j"; }
  echo "model: $(g model) ($(g source))"
  echo "nodes: $(g nodes_before) before the passes, $(g nodes_after) after ($(g inserted_nodes) inserted, $(g lint_warnings) lint warnings)"
  echo "feature-map bytes: $(g feature_map_bytes)"
  echo "lower bound bytes: $(g lower_bound_bytes)"
  echo "zero-copy bytes: $(g plan_zero_copy_bytes)"
  echo "fixed bytes: $(g plan_fixed_bytes)"
  echo "strategy: $(g strategy)"
  sed -n 's/^  verified  *yes (\([0-9]*\) symbols.*/symbols: \1/p' <<<"$t"
}

check_run() { # LABEL PROGRAM EXPECTED-LINES [MODEL PLANFILE]
  local label=$1 prog=$2 want=$3 out n lines
  shift 3
  out=$("$prog" "$@" 2>"$TMP/err") || { fail "$label: exit $? ($(cat "$TMP/err"))"; return; }
  while IFS= read -r line; do
    grep -qxF -- "$line" <<<"$out" || fail "$label: expected the line '$line', got:"$'\n'"$(head -9 <<<"$out")"
  done <<<"$want"
  # One line per symbol, as many as the summary says, each with a region, offset and size.
  n=$(sed -n 's/^symbols: //p' <<<"$out")
  lines=$(grep -cE '^  (feature_map|zero_copy|fixed|dynamic) +[a-z0-9]+ +offset +-?[0-9]+ size +-?[0-9]+  [^ ]+$' <<<"$out")
  [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$lines" = "$n" ] || fail "$label: $lines symbol lines for 'symbols: $n'"
  echo "$out" >"$TMP/$label.out"
}

WANT_EMBEDDED=$(expect_lines)
WANT_MODEL=$(expect_lines "$MODEL")
# What is known of the embedded example whatever the planner does.
grep -qxF 'model: train_step (<embedded example>)' <<<"$WANT_EMBEDDED" || fail "embedded example: $(head -1 <<<"$WANT_EMBEDDED")"
[ "$(wc -l <<<"$WANT_EMBEDDED")" -eq 8 ] && [ "$(wc -l <<<"$WANT_MODEL")" -eq 8 ] ||
  fail "could not read the command's summaries:"$'\n'"$WANT_EMBEDDED"$'\n'"$WANT_MODEL"

for way in a b; do
  prog=$TMP/$way/plan_model
  [ -x "$prog" ] || continue
  check_run "$way-embedded" "$prog" "$WANT_EMBEDDED"
  check_run "$way-model" "$prog" "$WANT_MODEL" "$MODEL" "$TMP/$way.plan.json"
  v=$("$P/bin/graphmem" verify "$MODEL" "$TMP/$way.plan.json") || fail "$way: the plan plan_model wrote does not verify: $v"
  grep -q "^plan OK: $(sed -n 's/^symbols: //p' <<<"$WANT_MODEL") symbols" <<<"$v" || fail "$way: verify says: $v"
  # Bad input: exit 2, the file named; a usage error: exit 2.
  "$prog" "$TMP/no-such-model.json" >/dev/null 2>"$TMP/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "no-such-model.json" "$TMP/err" || fail "$way: missing model: exit $rc, '$(cat "$TMP/err")'"
  printf '{"graphs": [' >"$TMP/bad.json"
  "$prog" "$TMP/bad.json" >/dev/null 2>"$TMP/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "bad.json" "$TMP/err" || fail "$way: malformed model: exit $rc, '$(cat "$TMP/err")'"
  "$prog" a b c >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] || fail "$way: three arguments: exit $rc, not 2"
done
[ -f "$TMP/a-model.out" ] && [ -f "$TMP/b-model.out" ] &&
  { cmp -s "$TMP/a-model.out" "$TMP/b-model.out" || fail "the pkg-config and CMake builds print differently"; }

# The CMake package is relocatable: the whole prefix moved elsewhere still builds and runs.
if [ -x "$TMP/b/plan_model" ]; then
  mv "$P" "$TMP/moved"
  cmake -S "$SRC/examples" -B "$TMP/c" -DCMAKE_PREFIX_PATH="$TMP/moved" -DCMAKE_C_COMPILER="$CC" \
    >"$TMP/c.log" 2>&1 && cmake --build "$TMP/c" >>"$TMP/c.log" 2>&1 || { cat "$TMP/c.log"; fail "build after moving the prefix"; }
  grep -q "$TMP/moved/.*libgraphmem.a" "$TMP/c/CMakeFiles/plan_model.dir/link.txt" 2>/dev/null ||
    fail "the moved package does not link the moved library"
  out=$("$TMP/c/plan_model" 2>&1) && grep -qxF "$(head -1 <<<"$WANT_EMBEDDED")" <<<"$out" || fail "moved: $out"
  mv "$TMP/moved" "$P"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "install OK: installed to $P (and staged with DESTDIR); plan_model built with pkg-config and with"
echo "find_package(graphmem); both print the command's numbers for the embedded example and $(basename "$MODEL"),"
echo "their plan verifies ($(sed -n 's/^symbols: //p' <<<"$WANT_MODEL") symbols), bad input exits 2; the CMake package relocates"
