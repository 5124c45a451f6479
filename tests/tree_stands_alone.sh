#!/usr/bin/env bash
# tree_stands_alone.sh SOURCE_DIR — the repository stands alone: nothing in it points outside it,
# and what it points at inside is there. Over every file of the tree (git ls-files where SOURCE_DIR
# is a git checkout, tracked and new files not ignored; else find, without build directories):
#   outside  no file names a path that leaves the tree: the project's shared directory beside the
#            checkout, the workspace's absolute path, or a relative path (`../x`, resolved against
#            the file's own directory) that climbs above the root. `#include "../util/x.h"` inside
#            the tree is fine.
#   link     every relative link of every *.md file (`[text](path)`, `[id]: path`; #anchors
#            stripped, http(s), mailto and other schemes ignored, fenced code and code spans
#            skipped) names a file or directory of the tree.
#   cite     every document a file cites by path (`docs/cli.md`, `README.md`, a path under a
#            spec, shared, seeds or reference directory) is in the tree, found from the file's
#            directory or from the root: a citation of a document that only exists outside the
#            tree is a dangling one.
#   data     every data directory has a README.md saying what its files are and where they come
#            from: each directory named `data`, when it holds files itself, and each directory
#            right under one; and any directory holding data files (.onnx, .csv, .pb ...)
#            has a README.md in it or in an ancestor below the root.
# Hits in tests/tree_stands_alone_exempt.txt ("PATH TOKEN reason", one a line) are listed but do
# not fail; an entry that matches no hit any more fails, so the list only shrinks. Before the
# real tree, the checks run on two small trees made here: a clean one must pass and one with a
# bad link, an outside path, a dangling citation and a data folder without README must fail with
# each of them, so that the test cannot pass by checking nothing.
set -u
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: tree_stands_alone.sh SOURCE_DIR" >&2
  exit 2
fi
SRC=$(cd "$1" && pwd -P)
EXEMPT_NAME=tests/tree_stands_alone_exempt.txt
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The outside names, spelt so that this file does not contain them.
DOTDOT='\.\.'
SHARED_REL="${DOTDOT}/shared"
WORK_ABS='/wor[k]/'

# ---- the tree -------------------------------------------------------------------------------

# FILES: the tree's regular files, relative to ROOT; IN_TREE: those files and every directory
# above them. $2 = "find" forces the find listing (the trees made here).
declare -a FILES
declare -A IN_TREE
list_tree() {
  local root=$1 how=${2:-auto} f d
  FILES=()
  IN_TREE=()
  local -a all=()
  if [ "$how" = auto ] && git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -d '' all < <(git -C "$root" ls-files -z --cached --others --exclude-standard)
  else
    mapfile -d '' all < <(cd "$root" && find . \( -name .git -o -path ./build -o -path './build-*' \
      -o -path './build_*' -o -path ./bench/out \) -prune -o -type f -print0 | sed -z 's|^\./||')
  fi
  for f in "${all[@]}"; do
    [ -f "$root/$f" ] && [ ! -L "$root/$f" ] || continue # a tracked file deleted here, a link
    FILES+=("$f")
    IN_TREE[$f]=1
    d=$f
    while [[ $d == */* ]]; do
      d=${d%/*}
      [ -n "${IN_TREE[$d]:-}" ] && break
      IN_TREE[$d]=1
    done
  done
}

# normpath DIR REL: REL taken from DIR (both relative to the root, DIR "" = the root; REL starting
# with / = from the root), normalized into NORM ("" = the root). Returns 1 when it climbs above
# the root.
NORM=
normpath() {
  local path=$1/$2 part
  [ -z "$1" ] && path=$2
  [[ $2 == /* ]] && path=$2
  local -a parts out=()
  IFS=/ read -ra parts <<<"$path"
  for part in "${parts[@]}"; do
    case $part in
      '' | .) ;;
      ..)
        [ ${#out[@]} -eq 0 ] && return 1
        unset 'out[${#out[@]}-1]'
        ;;
      *) out+=("$part") ;;
    esac
  done
  local IFS=/
  NORM="${out[*]}"
}

dir_of() { if [[ $1 == */* ]]; then DIR=${1%/*}; else DIR=; fi; }

# ---- the checks: each hit is "KIND<TAB>FILE:LINE<TAB>TOKEN<TAB>what" in HITS ------------------

# A place and token found by two checks (a link that leaves the tree is also a path that does)
# is reported once, by the first.
declare -a HITS
declare -A HIT_AT
hit() {
  [ -z "${HIT_AT[$2$'\t'$3]:-}" ] || return 0
  HIT_AT[$2$'\t'$3]=1
  HITS+=("$1"$'\t'"$2"$'\t'"$3"$'\t'"$4")
}

# tokens ERE: "file:line:match", one line per match, over the text files of the tree (binary
# files skipped, and the exemption list: it names what it exempts).
tokens() {
  local -a text=()
  local f
  for f in "${FILES[@]}"; do [ "$f" = "$EXEMPT_NAME" ] || text+=("$f"); done
  [ ${#text[@]} -gt 0 ] || return 0
  (cd "$ROOT" && printf '%s\0' "${text[@]}" | xargs -0 grep -IonHE -e "$1" -- 2>/dev/null)
}

# What a path token may not follow: a token inside a longer path, a URL or a variable is no token.
BEFORE='(^|[^A-Za-z0-9_./$%{}*<@~-])'
# strip_before TOKEN: TOKEN without the character BEFORE matched, into TOK.
strip_before() { if [[ ${1:0:1} =~ [A-Za-z0-9_.] ]]; then TOK=$1; else TOK=${1:1}; fi; }

check_outside() {
  local f l m
  while IFS=: read -r f l m; do
    hit outside "$f:$l" "$m" "names the shared directory beside the checkout"
  done < <(tokens "${SHARED_REL}[A-Za-z0-9_./-]*")
  while IFS=: read -r f l m; do
    hit outside "$f:$l" "$m" "names the workspace's absolute path"
  done < <(tokens "${WORK_ABS}[A-Za-z0-9_./-]*")
  while IFS=: read -r f l m; do
    strip_before "$m"
    dir_of "$f"
    normpath "$DIR" "$TOK" || hit outside "$f:$l" "$TOK" "a relative path that leaves the tree"
  done < <(tokens "${BEFORE}(${DOTDOT}/)+[A-Za-z0-9_.*/-]*")
}

# The link targets of one markdown file, "LINE<TAB>TARGET": inline links and reference
# definitions, outside fenced code and code spans.
md_links() {
  awk '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
      line = $0
      gsub(/`[^`]*`/, "``", line)
      if (match(line, /^ ? ? ?\[[^]]+\]:[ \t]*[^ \t]/)) {
        def = line
        sub(/^ ? ? ?\[[^]]+\]:[ \t]*/, "", def)
        print NR "\t" def
      }
      while (match(line, /\]\([^)]*\)/)) {
        print NR "\t" substr(line, RSTART + 2, RLENGTH - 3)
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$1"
}

check_links() {
  local f l t
  for f in "${FILES[@]}"; do
    [[ $f == *.md ]] || continue
    dir_of "$f"
    local d=$DIR
    while IFS=$'\t' read -r l t; do
      t=${t#<}
      t=${t%%[[:space:]]*}
      t=${t%>}
      [[ $t =~ ^[A-Za-z][A-Za-z0-9+.-]*: ]] && continue # https:, mailto: ...
      t=${t%%#*}
      t=${t%%\?*}
      [ -n "$t" ] || continue # an anchor in the same file
      if ! normpath "$d" "$t"; then
        hit outside "$f:$l" "$t" "a link that leaves the tree"
      elif [ -n "$NORM" ] && [ -z "${IN_TREE[$NORM]:-}" ]; then
        hit link "$f:$l" "$t" "a link to nothing in the tree"
      fi
    done < <(md_links "$ROOT/$f")
  done
}

# cited FILE TOKEN: is the path TOKEN, cited in FILE, in the tree (from the file's directory, or
# from the root)?
cited() {
  local tok=${2%/}
  dir_of "$1"
  if normpath "$DIR" "$tok" && [ -n "$NORM" ] && [ -n "${IN_TREE[$NORM]:-}" ]; then return 0; fi
  if normpath "" "$tok" && [ -n "$NORM" ] && [ -n "${IN_TREE[$NORM]:-}" ]; then return 0; fi
  return 1
}

check_citations() {
  local f l m
  while IFS=: read -r f l m; do
    strip_before "$m"
    [[ $TOK == *.md ]] || continue # .mdx and the like
    cited "$f" "$TOK" || hit cite "$f:$l" "$TOK" "cites a document that is not in the tree"
  done < <(tokens "${BEFORE}[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*\.md[A-Za-z0-9_]*")
  while IFS=: read -r f l m; do
    strip_before "$m"
    TOK=${TOK%%[.,]}
    [[ $TOK == *.md ]] && continue # judged above
    cited "$f" "$TOK" || hit cite "$f:$l" "$TOK" "cites a path that is not in the tree"
  done < <(tokens "${BEFORE}(spec|shared|seeds|reference)/[A-Za-z0-9_./-]*")
}

DATA_EXT='onnx|pb|pbtxt|csv|tsv|npy|npz|bin|tflite|safetensors|pt|h5'
check_data() {
  local f d rest
  local -A need=() seen=()
  # every directory named data that holds files itself, and every directory right under one
  for f in "${FILES[@]}"; do
    d=
    rest=$f
    while [[ $rest == */* ]]; do
      d=${d:+$d/}${rest%%/*}
      rest=${rest#*/}
      [[ ${d##*/} == data ]] || continue
      if [[ $rest == */* ]]; then need[$d/${rest%%/*}]=1; else need[$d]=1; fi
    done
  done
  for d in "${!need[@]}"; do
    [ -n "${IN_TREE[$d/README.md]:-}" ] || hit data "$d/" "$d/README.md" "a data directory without a README.md"
  done
  # every directory holding data files: a README.md in it or above it, below the root
  for f in "${FILES[@]}"; do
    [[ ${f##*.} =~ ^($DATA_EXT)$ ]] || continue
    dir_of "$f"
    [ -n "$DIR" ] && [ -z "${seen[$DIR]:-}" ] || continue
    seen[$DIR]=1
    d=$DIR
    while [ -z "${IN_TREE[$d/README.md]:-}" ]; do
      if [[ $d != */* ]]; then
        hit data "$DIR/" "$DIR/README.md" "holds data files (${f##*/} ...) that no README.md describes"
        break
      fi
      d=${d%/*}
    done
  done
}

# run_checks ROOT [find]: fills HITS.
run_checks() {
  ROOT=$1
  HITS=()
  HIT_AT=()
  list_tree "$1" "${2:-auto}"
  check_outside
  check_links
  check_citations
  check_data
}

# count KIND: the hits of that kind.
count() {
  local n=0 h
  for h in "${HITS[@]}"; do [[ $h == "$1"$'\t'* ]] && n=$((n + 1)); done
  echo "$n"
}

# ---- self-check: a clean tree passes, a broken one fails with each kind of hit -----------------
# (The trees' texts are spelt through $UP, $MD and $K, so that this file cites none of them.)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
UP=..
MD=md
K=k
S=spec
make_clean_tree() {
  local t=$1
  mkdir -p "$t/docs" "$t/src/a" "$t/src/c" "$t/tests/data/sub" "$t/bench/data/set/deep"
  printf '%s\n' "# x" "" "See [a](docs/a.$MD), [b](docs/a.$MD#part), [w](https://example.org/$UP/x)," \
    "[m](mailto:x@example.org), [top](#x), [dir](src/a/)." "" '```' "[not](no/link.txt)" '```' \
    "and \`[nor](no/link.txt)\`" >"$t/README.md"
  printf '%s\n' "# a" "" "[back]($UP/README.$MD#x) and \`docs/a.$MD\`" "" "[r]: $UP/src/a/b.c" >"$t/docs/a.$MD"
  printf '%s\n' "#include \"$UP/c/d.h\"" "/* see README.$MD and docs/a.$MD; https://example.org/$UP/$UP/z */" >"$t/src/a/b.c"
  printf '/* d */\n' >"$t/src/c/d.h"
  printf '# data\n' >"$t/tests/data/README.$MD"
  printf '# sub\n' >"$t/tests/data/sub/README.$MD"
  printf 'id,lower,upper,size\n' >"$t/tests/data/sub/x.csv"
  printf 'id\n' >"$t/tests/data/small.csv"
  printf '# set\n' >"$t/bench/data/set/README.$MD"
  printf 'id\n' >"$t/bench/data/set/deep/y.csv"
}
make_clean_tree "$TMP/good"
run_checks "$TMP/good" find
if [ ${#HITS[@]} -ne 0 ]; then
  fail "self-check: the clean tree has hits:"
  printf '  %s\n' "${HITS[@]}"
fi
make_clean_tree "$TMP/bad"
printf '%s\n' "[gone](nope.$MD) [gone too](docs/nope/)" >>"$TMP/bad/README.md"
printf '%s\n' "[out]($UP/$UP/elsewhere.$MD)" >"$TMP/bad/docs/b.md"
printf '%s\n' "path = \"$UP/shared/data/x\"" "root = \"/wor$K/x\"" "other = \"$UP/$UP/$UP/y\"" >"$TMP/bad/src/a/x.c"
printf '%s\n' "the format is in $S/graph-format.$MD and DESIGN.$MD" >"$TMP/bad/src/c/notes.txt"
mkdir -p "$TMP/bad/tests/data/nodoc" "$TMP/bad/models"
printf 'id\n' >"$TMP/bad/tests/data/nodoc/z.csv"
printf 'x' >"$TMP/bad/models/m.onnx"
run_checks "$TMP/bad" find
want() { # KIND N WHAT: exactly N hits of KIND
  local n
  n=$(count "$1")
  [ "$n" -eq "$2" ] || fail "self-check: $3: $n $1 hit(s), wanted $2"
}
want outside 4 "the shared path, the absolute path, the path and the link that leave the tree"
want link 2 "the broken links"
want cite 2 "the citations of documents outside the tree"
want data 2 "the data folders without README"
for w in "nope.$MD" "docs/nope/" "$UP/$UP/elsewhere.$MD" "$UP/shared/data/x" "/wor$K/x" "$UP/$UP/$UP/y" \
  "$S/graph-format.$MD" "DESIGN.$MD" "tests/data/nodoc/README.$MD" "models/README.$MD"; do
  found=0
  for h in "${HITS[@]}"; do [[ $h == *$'\t'"$w"$'\t'* ]] && found=1; done
  [ $found -eq 1 ] || fail "self-check: no hit names '$w'"
done
[ "$fails" -eq 0 ] || {
  echo "the checks themselves are broken: $fails failure(s); the broken tree's hits:"
  printf '  %s\n' "${HITS[@]}"
  exit 1
}

# ---- the real tree ----------------------------------------------------------------------------
run_checks "$SRC"
[ ${#FILES[@]} -gt 20 ] || fail "found only ${#FILES[@]} files in $SRC"
declare -a EXEMPT=()
if [ -f "$SRC/$EXEMPT_NAME" ]; then
  while read -r p t _; do
    [[ -z $p || $p == \#* ]] && continue
    EXEMPT+=("$p"$'\t'"$t")
  done <"$SRC/$EXEMPT_NAME"
fi
declare -A used=()
exempted=0
for h in "${HITS[@]}"; do
  IFS=$'\t' read -r kind where tok what <<<"$h"
  ex=
  for e in "${EXEMPT[@]}"; do
    [ "${where%%:*}"$'\t'"$tok" = "$e" ] && ex=$e
  done
  if [ -n "$ex" ]; then
    used[$ex]=1
    exempted=$((exempted + 1))
    echo "exempt ($EXEMPT_NAME): $kind $where: $tok"
  else
    fail "$kind $where: $tok: $what"
  fi
done
for e in "${EXEMPT[@]}"; do
  [ -n "${used[$e]:-}" ] || fail "$EXEMPT_NAME: '${e//$'\t'/ }' matches nothing any more: take the line out"
done
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "the tree stands alone: ${#FILES[@]} files, no path out of it, every link and cited document in it, every data directory described ($exempted exempt hit(s))"
