#!/usr/bin/env bash
# man_page.sh GRAPHMEM SRC — docs/graphmem.1 renders without a warning (groff, and man-db's man
# where installed), has the sections a man page needs, and names every command and every option
# that `graphmem help` lists, so the page and the command cannot drift apart.
# Needs groff (Debian groff-base, which man-db depends on).
set -u
GM=$1
SRC=$2
PAGE=$SRC/docs/graphmem.1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

command -v groff >/dev/null || { echo "FAIL: groff is missing (apt-get install groff-base)"; exit 1; }
[ -f "$PAGE" ] || { echo "FAIL: $PAGE is missing"; exit 1; }

# 1. No warning from the formatter, in every output device a terminal uses.
for dev in ascii utf8; do
  w=$(groff -man -T"$dev" -ww -z "$PAGE" 2>&1)
  [ -z "$w" ] || fail "groff -T$dev warns: $w"
done
if command -v man >/dev/null; then
  w=$(MANWIDTH=80 man --warnings -l "$PAGE" 2>&1 >/dev/null)
  [ -z "$w" ] || fail "man --warnings: $w"
fi

# The page as plain text, wide enough that no option is split across lines.
TEXT=$(groff -man -Tascii -P-cbu -rLL=250n "$PAGE" 2>/dev/null)
[ -n "$TEXT" ] || fail "the page renders empty"

# 2. The sections of a man page, and ours.
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" "FILES AND FORMATS" EXAMPLES "SEE ALSO"; do
  grep -qx "$s" <<<"$TEXT" || fail "section $s is missing"
done

# 3. Every command of the usage, in COMMANDS and in SYNOPSIS.
HELP=$("$GM" help) || fail "graphmem help failed"
cmds=$(sed -n 's/^  graphmem \([a-z][a-z]*\) .*/\1/p; s/^  graphmem \([a-z][a-z]*\)$/\1/p' <<<"$HELP" | sort -u)
[ "$(wc -w <<<"$cmds")" -ge 7 ] || fail "found only these commands in graphmem help: $cmds"
for c in $cmds; do
  grep -qE "^       $c( |$)" <<<"$TEXT" || fail "command '$c' is not described under COMMANDS"
  grep -qE "^       graphmem $c( |$)" <<<"$TEXT" || fail "command '$c' is not in the SYNOPSIS"
done

# 4. Every option any help text lists appears in the page as a whole word.
ALL="$HELP"
for c in $cmds; do ALL+=$'\n'"$("$GM" help "$c")"; done
longs=$(grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' <<<"$ALL" | sort -u)
shorts=$(grep -oE -- '(^|[ ,[])-[a-zA-Z]([ ,]|$)' <<<"$ALL" | grep -oE -- '-[a-zA-Z]' | sort -u)
[ "$(wc -w <<<"$longs")" -ge 25 ] || fail "found only $(wc -w <<<"$longs") long options in the help texts"
n=0
for o in $longs $shorts; do
  n=$((n + 1))
  grep -qE -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|$)" <<<"$TEXT" || fail "option $o (in graphmem help) is not in the man page"
done

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "man page OK: renders without warnings; $(wc -w <<<"$cmds") commands and $n options of graphmem help all in it"
