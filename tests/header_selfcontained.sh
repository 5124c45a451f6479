#!/usr/bin/env bash
# header_selfcontained.sh BUILD SRC CC — the installed public headers stand on their own: the
# install puts exactly include/graphmem/*.h under PREFIX/include/graphmem (nothing from src/),
# and each of them compiles alone, twice included (guards), with only PREFIX/include on the
# path, as strict C11 with every warning an error.
set -u
BUILD=$1
SRC=$2
CC=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cmake --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; echo "FAIL: cmake --install"; exit 1; }
INC=$TMP/prefix/include

want=$(cd "$SRC/include" && find graphmem -type f | sort)
got=$(cd "$INC" && find . -type f | sed 's|^\./||' | sort)
[ "$want" = "$got" ] || fail "installed headers differ from include/graphmem:"$'\n'"$(diff <(echo "$want") <(echo "$got"))"
[ "$(wc -l <<<"$got")" -ge 8 ] || fail "only $(wc -l <<<"$got") headers installed"

n=0
for h in "$INC"/graphmem/*.h; do
  name=graphmem/$(basename "$h")
  n=$((n + 1))
  # Built outside the source tree, with no -I but the installed include dir.
  printf '#include <%s>\n#include <%s>\nint gm_selfcontained_check;\n' "$name" "$name" >"$TMP/t.c"
  out=$(cd "$TMP" && "$CC" -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Werror \
        -fsyntax-only -I "$INC" t.c 2>&1) || fail "$name does not compile on its own:"$'\n'"$out"
done

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "headers OK: $n installed public headers, each self-contained (C11, -Wall -Wextra -Wpedantic -Werror)"
