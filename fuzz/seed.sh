#!/usr/bin/env bash
# seed.sh — builds the seed corpora of the fuzz targets from the project's real inputs into
# build/fuzz/corpus/<target>/ (never checked in: the ONNX models alone are 0.5 MB).
#   fuzz/seed.sh [BUILD_DIR]      (default build/fuzz; run from anywhere)
# Sources: tests/data (its models and Loop/Scan/sequence models too), ONNX's backend suite's
# sequence, optional, Loop, Scan and If models when installed, bench/data/dsa, the graphs of tests/scenarios/*.json, the embedded
# example, the GE dumps and the DSA CSVs (the large traces cut to their first rows). When the
# release command build/graphmem exists, the valid JSON graphs are also converted to GE text
# and ONNX, which gives those two readers seeds with every attribute kind the scenarios use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/fuzz}/corpus
shared=$root/bench/data
rm -rf "$out"
mkdir -p "$out"/{fuzz_json,fuzz_onnx,fuzz_ge_text,fuzz_ge_om,fuzz_dsa_csv,fuzz_pipeline}

# The scenario files wrap a model in {"graph": ...}; the model alone is the reader's input.
graph_of() {
  if command -v jq >/dev/null; then jq -c '.graph // empty' "$1"
  else python3 -c 'import json,sys; g=json.load(open(sys.argv[1])).get("graph"); g is not None and print(json.dumps(g))' "$1"
  fi
}

for f in "$root"/tests/scenarios/*.json; do
  graph_of "$f" >"$out/fuzz_json/scn_$(basename "$f")" || true
done
for f in "$root"/tests/data/models/*.json \
         "$root"/tests/data/plans/*.json "$root"/examples/train_step.json; do
  [ -f "$f" ] && cp "$f" "$out/fuzz_json/$(basename "$f")"
done
# Empty graph files (a scenario without "graph") teach nothing.
find "$out/fuzz_json" -size 0 -delete
# The pipeline target skips inputs over 64 KiB, so they are no seeds for it.
find "$out/fuzz_json" -type f -size -65536c -exec cp {} "$out/fuzz_pipeline/" \;

for f in "$root"/tests/data/models/*.onnx "$root"/tests/data/onnx_loops/*.onnx; do
  [ -f "$f" ] && cp "$f" "$out/fuzz_onnx/$(basename "$f")"
done
# ONNX's backend suite (Debian's libonnx-testdata, a test dependency): its sequence, optional,
# Loop, Scan and If models, the value kinds and bodies the models above have least of (a reader
# bug on sequence types went unfound while the corpora had none).
suite=/usr/share/libonnx-testdata/data/node
if [ -d "$suite" ]; then
  for d in "$suite"/*; do
    case "$(basename "$d")" in
      *sequence*|*optional*|*loop*|*scan*|test_if*) [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$out/fuzz_onnx/suite_$(basename "$d").onnx" ;;
    esac
  done
else
  echo "seed.sh: $suite missing (apt-get install libonnx-testdata): no sequence/optional seeds from ONNX's suite" >&2
fi
cp "$root"/tests/data/ge/*.txt "$out/fuzz_ge_text/"
cp "$root"/tests/data/ge/*.om "$out/fuzz_ge_om/"

cli=$root/build/graphmem
if [ -x "$cli" ]; then
  for f in "$out"/fuzz_json/scn_*.json; do
    b=$(basename "$f" .json)
    "$cli" convert "$f" "$out/fuzz_ge_text/$b.txt" --to ge >/dev/null 2>&1 || rm -f "$out/fuzz_ge_text/$b.txt"
    "$cli" convert "$f" "$out/fuzz_onnx/$b.onnx" --to onnx >/dev/null 2>&1 || rm -f "$out/fuzz_onnx/$b.onnx"
  done
else
  echo "seed.sh: $cli not built (make), so no GE/ONNX seeds converted from the scenarios" >&2
fi

cp "$root"/tests/data/dsa_small.csv "$out/fuzz_dsa_csv/"
# The traces have up to 60,000 rows; a dozen rows keep each one's shape of values and ids.
if [ -d "$shared/dsa" ]; then
  find "$shared/dsa" -name '*.csv' | sort | while read -r f; do
    head -n 13 "$f" >"$out/fuzz_dsa_csv/$(basename "$(dirname "$f")")_$(basename "$f")"
  done
fi

for t in "$out"/*; do
  printf '%-14s %5d files %8d bytes\n' "$(basename "$t")" "$(ls "$t" | wc -l)" "$(cat "$t"/* | wc -c)"
done
