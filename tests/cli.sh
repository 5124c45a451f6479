#!/usr/bin/env bash
# cli.sh — the graphmem command end to end: output, exit codes (0 ok, 1 problem, 2 bad
# usage/input), and that a failed command never damages the user's files.
# usage: cli.sh PATH/TO/graphmem SOURCE_DIR
set -u
GM=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 passes=0

# expect CODE "description" command... : runs it, keeps stdout/stderr in $TMP/out, $TMP/err
expect() {
  local want=$1 what=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"
    sed 's/^/  stdout: /' "$TMP/out" | head -5
    sed 's/^/  stderr: /' "$TMP/err" | head -5
    fails=$((fails + 1))
    return 1
  fi
  passes=$((passes + 1))
}

# has FILE "text" "description"
has() {
  if grep -q -F -- "$2" "$1"; then passes=$((passes + 1)); else
    echo "FAIL: $3: '$2' not in $(basename "$1"):"
    sed 's/^/  | /' "$1" | head -8
    fails=$((fails + 1))
  fi
}

expect 0 "version" "$GM" --version && has "$TMP/out" "graphmem 0." "version text"
expect 0 "help" "$GM" help && has "$TMP/out" "graphmem plan" "help lists plan"
expect 0 "help plan" "$GM" help plan && has "$TMP/out" "--passes LIST" "plan help lists options"
expect 0 "plan --help" "$GM" plan --help && has "$TMP/out" "--dump-graph" "plan --help"
expect 2 "no command" "$GM"
expect 2 "unknown command" "$GM" frobnicate && has "$TMP/err" "unknown command 'frobnicate'" "names the command"

# The embedded example.
expect 0 "plan embedded" "$GM" plan
has "$TMP/out" "train_step (<embedded example>)" "summary names the model"
has "$TMP/out" "nodes before / after" "summary: nodes"
has "$TMP/out" "graphs                     5 (4 subgraphs)" "summary: graphs"
has "$TMP/out" "inserted nodes" "summary: inserted"
has "$TMP/out" "lint warnings" "summary: lint"
has "$TMP/out" "bytes by memory type" "summary: memory types"
has "$TMP/out" "streams, edges             2," "summary: two streams"
has "$TMP/out" "lower bound" "summary: lower bound"
has "$TMP/out" "verified                   yes" "summary: the plan is verified"
# -v: every stage's time, and every pass that ran with its own (no figure is asserted: a time)
expect 0 "plan -v" "$GM" plan -v
has "$TMP/out" "stages                     reading " "-v: the stages"
has "$TMP/out" "pass times (ms)            lint " "-v: the passes' times, GE's order from lint"
# the block the line wraps into: from its label to the re-sorts, each pass that ran named in it
sed -n '/pass times (ms)/,/the re-sorts among them/p' "$TMP/out" >"$TMP/pass_times"
has "$TMP/pass_times" "access_order " "-v: the passes' times reach the last pass"
has "$TMP/pass_times" "the re-sorts among them " "-v: the re-sorts on their own"
expect 0 "plan --json: times" "$GM" plan --json
python3 - "$TMP/out" <<'PY' && passes=$((passes + 1)) || { echo "FAIL: --json: stage_ms and pass_ms"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
stages = {"reading", "passes", "planning", "outputs", "lifetimes", "packing", "verifying", "re_sorts"}
assert set(j["stage_ms"]) == stages, j["stage_ms"]
assert list(j["pass_ms"]) == j["passes_run"], (j["pass_ms"], j["passes_run"])  # GE's order, every pass that ran
assert all(v >= 0 for v in list(j["stage_ms"].values()) + list(j["pass_ms"].values()))
PY
expect 0 "plan --json" "$GM" plan --json && has "$TMP/out" '"model":	"train_step"' "json summary"
expect 0 "plan -q" "$GM" plan -q
[ -s "$TMP/out" ] && { echo "FAIL: -q printed output"; fails=$((fails + 1)); }
expect 0 "check --passes none" "$GM" check "$SRC/examples/train_step.json" --passes none
expect 0 "check --passes list" "$GM" check "$SRC/examples/train_step.json" --passes hccl_memcpy,rw_conflict,lint --option ge.featureBaseRefreshable=1
# Without the passes a split's second output, through a view, is also the second input of a
# concat: two continuous groups that no layout satisfies. No valid plan exists, and plan says
# so with exit 1 instead of printing an unverified plan; with the passes it is fine.
cat >"$TMP/crossed.json" <<'JSON'
{"graphmem":1,"name":"crossed","graphs":[{"name":"root","nodes":[
{"name":"x","type":"Data","attrs":{"index":0},"outputs":[{"dtype":"float32","shape":[1024]}]},
{"name":"y","type":"Relu","inputs":["x:0"],"outputs":[{"dtype":"float32","shape":[512]}]},
{"name":"s","type":"SplitD","inputs":["x:0"],"attrs":{"continuous_output":true},"outputs":[{"dtype":"float32","shape":[512]},{"dtype":"float32","shape":[512]}]},
{"name":"v","type":"Reshape","inputs":["s:1"],"outputs":[{"dtype":"float32","shape":[512],"reuse_input":true,"reuse_input_index":0}]},
{"name":"c","type":"ConcatD","inputs":["y:0","v:0"],"attrs":{"continuous_input":true},"outputs":[{"dtype":"float32","shape":[1024]}]},
{"name":"o","type":"NetOutput","inputs":["c:0","s:0"]}]}]}
JSON
expect 1 "plan without the passes" "$GM" plan "$TMP/crossed.json" --passes none && has "$TMP/err" "did not verify" "says why"
expect 0 "plan with the passes" "$GM" plan "$TMP/crossed.json"
expect 0 "plan -o" "$GM" plan -o "$TMP/plan.json" -q --dump-graph "$TMP/planned.json"
expect 0 "the written plan verifies" "$GM" verify "$TMP/planned.json" "$TMP/plan.json"
has "$SRC/README.md" "graphmem plan" "README names the main command"

# Usage errors: exit 2, and the message names what is wrong.
# The access-order pass: a clone and an in-place ReLU6 of one buffer, ordered only by the list
# and on two streams. On by default (the edge listed, the run clean); left out it is GE's
# behaviour, and the verifier refuses the plan.
cat >"$TMP/race.json" <<'JSON'
{"graphmem": 1, "name": "race", "graphs": [{"name": "root", "nodes": [
 {"name": "x", "type": "Data", "attrs": {"index": 0}, "outputs": [{"dtype": "float32", "shape": [1024]}]},
 {"name": "mm", "type": "Exp", "inputs": ["x:0"], "outputs": [{"dtype": "float32", "shape": [1024]}]},
 {"name": "clone", "type": "aten.clone.default", "stream": 1, "inputs": ["mm:0"], "outputs": [{"dtype": "float32", "shape": [1024]}]},
 {"name": "relu6", "type": "aten.hardtanh_.default", "inputs": ["mm:0"], "input_names": ["self"], "output_names": ["self"], "attrs": {"reference": true}, "outputs": [{"dtype": "float32", "shape": [1024]}]},
 {"name": "out", "type": "NetOutput", "inputs": ["relu6:0", "clone:0"]}]}]}
JSON
expect 0 "check orders the race" "$GM" check "$TMP/race.json" && has "$TMP/out" "control edge clone -> relu6  [access_order]" "lists the edge"
has "$TMP/out" "ordered edges              1" "counts the edge"
expect 0 "plan the race" "$GM" plan "$TMP/race.json" -q -o "$TMP/race.plan.json" --dump-graph "$TMP/race.after.json"
has "$TMP/race.plan.json" '"edge":{"from":"clone","to":"relu6"}' "the plan lists the edge"
expect 0 "the graph after the passes verifies the plan" "$GM" verify "$TMP/race.after.json" "$TMP/race.plan.json"
expect 1 "GE's behaviour: the race refused" "$GM" plan "$TMP/race.json" --passes all,-access_order && has "$TMP/err" "are not ordered" "names the race"
expect 0 "run the race on 2 streams" "$GM" run "$TMP/race.json" --streams 2 --plan && has "$TMP/out" "verified                   yes" "clean"
# Mistakes are refused, not ignored: a second model, help on an unknown command, a planning
# option given to check.
M18="$SRC/tests/data/models/resnet18.onnx"
for c in plan check info run; do
  expect 2 "$c with two models" "$GM" $c "$M18" "$M18" && has "$TMP/err" "takes one MODEL; unexpected argument" "$c names the extra"
done
expect 2 "help on an unknown command" "$GM" help frobnicate && has "$TMP/err" "unknown command 'frobnicate'" "help names it"
expect 2 "help with two commands" "$GM" help plan run
for opt in "--strategy best_fit" "--threads 2" "--align 256" "--budget 1"; do
  expect 2 "check $opt refused" "$GM" check "$M18" $opt && has "$TMP/err" "check does not plan" "check: $opt"
done
expect 2 "unknown pass" "$GM" plan --passes rw_conflict,bogus && has "$TMP/err" "unknown pass 'bogus'" "names the pass"
expect 2 "unknown option" "$GM" plan --frobnicate && has "$TMP/err" "unknown option '--frobnicate'" "names the option"
expect 2 "option without value" "$GM" plan --passes
expect 2 "bad GE option" "$GM" plan --option featureBaseRefreshable=1 && has "$TMP/err" "start with 'ge.'" "GE keys"
expect 2 "bad align" "$GM" plan --align 300 && has "$TMP/err" "power of two" "align"
expect 2 "bad threads" "$GM" plan --threads 0
expect 2 "unknown strategy" "$GM" plan --strategy nope && has "$TMP/err" "unknown strategy 'nope'" "strategy"
expect 0 "plan --budget" "$GM" plan --budget 1 && has "$TMP/out" "verified                   yes" "a clock budget plans"
expect 0 "one strategy" "$GM" plan --strategy max-block && has "$TMP/out" "max-block, of 1 side by side" "one ran"

# run: the example executed on host streams, every read checked.
expect 0 "run --plan" "$GM" run --plan --streams 4 --iterations 2 && has "$TMP/out" "every read found its writer's data" "run clean"
expect 0 "run --plan --json" "$GM" run --plan --json && has "$TMP/out" '"corrupted_reads":	0' "run json"
expect 0 "run (allocator by default)" "$GM" run --streams 2 && has "$TMP/out" "recycles" "default run prints allocator stats"
expect 0 "run --dynamic" "$GM" run --dynamic --streams 4 --iterations 2 && has "$TMP/out" "recycles" "allocator stats" \
  && has "$TMP/out" "every read found its writer's data" "dynamic run clean"
expect 0 "run --dynamic --json" "$GM" run --dynamic --json --memory-limit 4000000 && has "$TMP/out" '"borrow_recycles":' "json allocator" \
  && has "$TMP/out" '"median_iteration_ns":' "json time"
expect 0 "run times iterations" "$GM" run --iterations 3 && has "$TMP/out" "then " "the others' median" \
  && has "$TMP/out" "(the median of the other 2)" "counted"
expect 0 "run times two iterations" "$GM" run --iterations 2 && has "$TMP/out" "ms (the second)" "the second alone"
expect 0 "run --memory-first" "$GM" run --memory-first --streams 4 --iterations 3 --json && has "$TMP/out" '"growth_recycles":' "json recycles before growth" \
  && has "$TMP/out" '"corrupted_reads":	0' "memory-first run clean"
expect 2 "run bad memory limit" "$GM" run --memory-limit 0 && has "$TMP/err" "--memory-limit" "names the option"
# A GPU's 2 MiB granule on the host: memory first maps whole granules, and says so in its peak.
expect 0 "run --vm-granularity" "$GM" run --memory-first --vm-granularity 2097152 --streams 2 --iterations 2 --json \
  && has "$TMP/out" '"device_peak_bytes":	2097152' "one 2 MiB granule" && has "$TMP/out" '"driver_peak_bytes":	0' "no driver on the host"
expect 2 "run granule not a power of two" "$GM" run --vm-granularity 3000 && has "$TMP/err" "--vm-granularity 3000" "names the option"
expect 2 "run granule finer than the page" "$GM" run --memory-first --vm-granularity 1024 && has "$TMP/err" "multiple of the device's granule" "says why"
expect 2 "run bad streams" "$GM" run --streams 0 && has "$TMP/err" "--streams" "names the option"
expect 0 "run --plan --devices 2" "$GM" run --plan --devices 2 --streams 2 && has "$TMP/out" "every read found" "two devices"
expect 0 "run --devices 2 (dynamic)" "$GM" run --devices 2 --streams 2 && has "$TMP/out" "every read found" "two devices, dynamic"
expect 2 "run bad backend" "$GM" run --backend tpu && has "$TMP/err" "host or cuda" "names the backends"
expect 2 "check needs a model" "$GM" check
expect 2 "too many arguments" "$GM" info a b c

# Models from files.
EX="$SRC/examples/train_step.json"
expect 0 "info" "$GM" info "$EX" && has "$TMP/out" "graphs            5" "info graphs"
has "$TMP/out" "refine_body" "info lists subgraphs"
expect 0 "check file" "$GM" check "$EX"
expect 2 "missing file" "$GM" plan "$TMP/missing.json" && has "$TMP/err" "missing.json" "names the file"
printf '{"graphmem": 1, "graphs": [ {"name": "root", "nodes": [ {"name": "a", "type": "Relu", "inputs": ["b:0"]} ] } ] }' >"$TMP/bad.json"
expect 2 "bad model" "$GM" plan "$TMP/bad.json"
has "$TMP/err" "bad.json: graph 'root': node 'a': input 0 names unknown node 'b'" "error names file and place"
printf '{"graphmem": 1, "graphs": [' >"$TMP/trunc.json"
expect 2 "truncated model" "$GM" info "$TMP/trunc.json" && has "$TMP/err" "trunc.json:1:" "line:column"

# convert: a round trip is stable, and a failure leaves the target untouched.
expect 0 "convert" "$GM" convert "$EX" "$TMP/a.json"
expect 0 "convert again" "$GM" convert "$TMP/a.json" "$TMP/b.json"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then passes=$((passes + 1)); else
  echo "FAIL: convert is not stable"; fails=$((fails + 1)); fi
echo "keep me" >"$TMP/keep.json"
expect 2 "convert bad input" "$GM" convert "$TMP/bad.json" "$TMP/keep.json"
if [ "$(cat "$TMP/keep.json")" = "keep me" ]; then passes=$((passes + 1)); else
  echo "FAIL: a failed convert damaged the output file"; fails=$((fails + 1)); fi
expect 2 "convert unknown extension" "$GM" convert "$EX" "$TMP/out.xyz" && has "$TMP/err" "--to" "suggests --to"
expect 0 "convert --to" "$GM" convert "$EX" "$TMP/out.xyz" --to json
expect 0 "dump graph" "$GM" plan "$EX" --dump-graph "$TMP/d.json" -q
expect 0 "dumped graph reads" "$GM" info "$TMP/d.json"

# Every format: JSON -> ONNX -> JSON and JSON -> GE dump -> JSON come back the same.
expect 0 "convert to onnx" "$GM" convert "$EX" "$TMP/x.onnx"
expect 0 "convert onnx back" "$GM" convert "$TMP/x.onnx" "$TMP/x_onnx.json"
if cmp -s "$TMP/a.json" "$TMP/x_onnx.json"; then passes=$((passes + 1)); else
  echo "FAIL: JSON -> ONNX -> JSON changed the model"; fails=$((fails + 1)); fi
expect 0 "convert to GE dump" "$GM" convert "$EX" "$TMP/ge_proto_x.txt"
has "$TMP/ge_proto_x.txt" 'type: "HcomAllReduce"' "GE dump holds the ops"
expect 0 "convert GE dump back" "$GM" convert "$TMP/ge_proto_x.txt" "$TMP/x_ge.json"
expect 0 "GE dump reads" "$GM" info "$TMP/ge_proto_x.txt"
# A plan made with --dim records the dims: verify takes them, and refuses others.
RS=$SRC/tests/data/runtime_sizes.onnx
expect 0 "plan --dim records dims" "$GM" plan "$RS" --dim N=1 --dim H=64 --dim W=64 -q -o "$TMP/rs_plan.json" &&
  has "$TMP/rs_plan.json" '"N=1"' "the plan lists the dims"
expect 0 "verify takes the plan's dims" "$GM" verify "$RS" "$TMP/rs_plan.json" && has "$TMP/out" "plan OK" "verified"
expect 0 "verify with the same dims" "$GM" verify "$RS" "$TMP/rs_plan.json" --dim W=64 --dim N=1 --dim H=64
expect 2 "verify with other dims" "$GM" verify "$RS" "$TMP/rs_plan.json" --dim N=2 &&
  has "$TMP/err" "was made with --dim N=1 --dim H=64 --dim W=64" "names the plan's dims"
# What graphmem declares unsupported (README): exit 2, the construct named.
expect 2 "ONNX local function" "$GM" info "$SRC/tests/data/unsupported/local_function.onnx" &&
  has "$TMP/err" "node 'call' calls the model's local function 'MyRelu'" "names the node and the function"
expect 2 "ONNX training_info" "$GM" plan "$SRC/tests/data/unsupported/training_info.onnx" &&
  has "$TMP/err" "training_info" "names training_info"
# GE's offline models: read like the dump they hold, planned, converted; never written.
OM=$SRC/tests/data/ge/small_all_kinds.om
expect 0 "info .om" "$GM" info "$OM" && has "$TMP/out" "6 nodes" "info .om counts the dump's nodes"
expect 0 "plan .om" "$GM" plan "$SRC/tests/data/ge/control_flow.om" -q -o "$TMP/om_plan.json"
expect 0 "verify .om" "$GM" verify "$SRC/tests/data/ge/control_flow.om" "$TMP/om_plan.json"
expect 0 "convert .om" "$GM" convert "$OM" "$TMP/om.txt" -q
expect 0 "convert .om's dump" "$GM" convert "$SRC/tests/data/ge/small_all_kinds.txt" "$TMP/om_dump.txt" -q
if cmp -s "$TMP/om.txt" "$TMP/om_dump.txt"; then passes=$((passes + 1)); else
  echo "FAIL: the .om and its dump convert to different GE dumps"; fails=$((fails + 1)); fi
has "$TMP/om.txt" 'key: "memory_size"' ".om's model attributes written back"
expect 2 "convert to .om" "$GM" convert "$EX" "$TMP/x.om" && has "$TMP/err" "does not write them" "no .om writer"
[ ! -e "$TMP/x.om" ] && passes=$((passes + 1)) || { echo "FAIL: a refused .om was written"; fails=$((fails + 1)); }
expect 2 "convert --to om" "$GM" convert "$EX" "$TMP/x.bin" --to om
head -c 300 "$OM" >"$TMP/cut.om"
expect 2 "truncated .om" "$GM" info "$TMP/cut.om" && has "$TMP/err" "cut.om: offset 256: the partition table" "names the file and place"
expect 2 "bad --dim" "$GM" info "$EX" --dim T && has "$TMP/err" "NAME=VALUE" "dim syntax"
head -c 100 "$SRC/tests/data/models/resnet18.onnx" >"$TMP/cut.onnx"
expect 2 "truncated onnx" "$GM" info "$TMP/cut.onnx" && has "$TMP/err" "cut.onnx" "names the file"
printf 'graph {\n  name: "g"\n  op { name: "a" type: "Data" \n' >"$TMP/cut.txt"
expect 2 "truncated GE dump" "$GM" info "$TMP/cut.txt" && has "$TMP/err" "cut.txt:" "names the file and line"

# verify: a plan checked against its graph (0 good, 1 wrong, 2 bad input).
P="$SRC/tests/data/plans"
expect 0 "verify good plan" "$GM" verify "$P/relu.json" "$P/relu.plan.json" && has "$TMP/out" "plan OK" "verdict"
expect 1 "verify overlapping plan" "$GM" verify "$P/relu.json" "$P/relu_overlap.plan.json"
has "$TMP/out" "symbols 'x_out_0'" "names the symbols"
expect 2 "verify needs two files" "$GM" verify "$P/relu.json"
expect 2 "verify bad plan file" "$GM" verify "$P/relu.json" "$EX" && has "$TMP/err" "train_step.json" "names the file"

# plan --dsa: the offset problem alone, checked, offsets written.
expect 0 "plan --dsa" "$GM" plan --dsa "$SRC/tests/data/dsa_small.csv" --budget 1 -o "$TMP/dsa.csv"
has "$TMP/out" "lower bound            8" "dsa bound"
has "$TMP/out" "checked                yes" "dsa checked"
has "$TMP/dsa.csv" "id,lower,upper,size,offset" "dsa offsets written"
printf 'id,lower,upper,size\na,3,1,4\n' >"$TMP/bad.csv"
expect 2 "plan --dsa bad file" "$GM" plan --dsa "$TMP/bad.csv" && has "$TMP/err" "bad.csv:2" "names file and line"
expect 2 "--dsa with check" "$GM" check "$EX" --dsa "$TMP/bad.csv"

# Real models that nobody here wrote (tests/data/models/README.md says where each comes from).
for f in "$SRC"/tests/data/models/*.onnx "$SRC"/tests/data/models/*.graphmem.json; do
  expect 0 "plan $(basename "$f")" "$GM" plan "$f" -q
  expect 0 "convert $(basename "$f") to onnx" "$GM" convert "$f" "$TMP/m.onnx" -q
  expect 0 "convert $(basename "$f") to GE" "$GM" convert "$f" "$TMP/m.txt" -q
  expect 0 "convert $(basename "$f") back" "$GM" convert "$TMP/m.onnx" "$TMP/m.json" -q
done

# Pictures (issue 8): plan --svg / --dot on the embedded example and an ONNX model, check --dot;
# check --svg refused (no plan); an unwritable path names itself. (Rendering: svg_chromium.sh.)
expect 0 "plan --svg --dot" "$GM" plan --svg "$TMP/t.svg" --dot "$TMP/t.dot" -q
has "$TMP/t.svg" '<svg xmlns="http://www.w3.org/2000/svg" version="1.1"' "svg root"
has "$TMP/t.svg" "<title>mm1_out_0" "svg box title names the symbol"
has "$TMP/t.svg" '<line class="lb"' "svg lower-bound line"
has "$TMP/t.svg" "stream 1</text>" "svg stream lanes"
has "$TMP/t.dot" 'subgraph cluster_g' "dot clusters"
has "$TMP/t.dot" 'tooltip="inserted by subgraph' "dot inserted node"
expect 0 "plan -o --svg" "$GM" plan -o "$TMP/t.plan.json" --svg "$TMP/t2.svg" -q
has "$TMP/t2.svg" "<title>mm1_out_0" "svg with -o"
expect 0 "plan onnx --svg --dot" "$GM" plan "$SRC/tests/data/models/control_flow.onnx" --svg "$TMP/o.svg" --dot "$TMP/o.dot" -q
has "$TMP/o.svg" '<rect class="b ' "onnx svg boxes"
has "$TMP/o.dot" 'subgraph cluster_g' "onnx dot clusters"
expect 0 "check --dot" "$GM" check "$EX" --dot "$TMP/c.dot" -q
has "$TMP/c.dot" 'digraph "train_step"' "check writes dot"
expect 2 "check --svg refused" "$GM" check "$EX" --svg "$TMP/c.svg"
has "$TMP/err" "--svg draws a memory plan" "check --svg says why"
[ -e "$TMP/c.svg" ] && { echo "FAIL: check --svg wrote a file"; fails=$((fails + 1)); }
expect 2 "--svg unwritable" "$GM" plan --svg "$TMP/no/such/dir/t.svg" -q && has "$TMP/err" "no/such/dir/t.svg" "names the svg path"
expect 2 "--dot unwritable" "$GM" plan --dot "$TMP/no/such/dir/t.dot" -q && has "$TMP/err" "no/such/dir/t.dot" "names the dot path"

# run, both modes, 1-8 streams, one and two devices: the embedded example and the shared
# models all verify clean (placement copies where "_device" / "_placement" ask for them), and the
# static runs print their regions, device peak, events and copies by kind.
# The shared models run one iteration (their tensors are large: the checks dominate the time).
run_all() { # run_all LABEL ITERATIONS STREAM_COUNTS [MODEL]
  local label=$1 it=$2 counts=$3
  shift 3
  for s in $counts; do
    expect 0 "run $label --streams $s" "$GM" run "$@" --streams $s --iterations "$it" \
      && has "$TMP/out" "every read found its writer's data" "run $label $s streams clean"
    expect 0 "run $label --plan --streams $s" "$GM" run "$@" --plan --streams $s --iterations "$it" \
      && has "$TMP/out" "every read found its writer's data" "run $label --plan $s streams clean"
  done
  for mode in --dynamic --plan; do
    expect 0 "run $label $mode --devices 2" "$GM" run "$@" $mode --devices 2 --streams 2 --iterations "$it" \
      && has "$TMP/out" "every read found its writer's data" "run $label $mode two devices clean"
  done
}
run_all "embedded" 3 "1 2 4 8"
# The models are large under the sanitizers (the read checks dominate the time): one stream and
# four, in both modes; the embedded example covers 2 and 8.
for f in "$SRC"/tests/data/models/*.graphmem.json "$SRC"/tests/data/models/*.onnx; do
  run_all "$(basename "$f")" 1 "1 4" "$f"
done
# Loops: carried and stacked outputs (src/ops/op_table.h). Every ONNX backend-test model with a
# Loop or Scan, and a small Loop of our own, plans to a verified plan and runs clean with the
# plan on 1 and 4 streams and with the runtime allocator on 4.
for f in "$SRC"/tests/data/onnx_loops/*.onnx "$SRC/tests/data/loop_stacked.json"; do
  n=$(basename "$f")
  expect 0 "plan $n" "$GM" plan "$f" && has "$TMP/out" "verified                   yes" "plan $n verified"
  for mode in "--plan --streams 1" "--plan --streams 4" "--streams 4"; do
    expect 0 "run $n $mode" "$GM" run "$f" $mode && has "$TMP/out" "every read found its writer's data" "run $n $mode"
  done
done
expect 0 "run --plan stats" "$GM" run --plan --streams 2
has "$TMP/out" "region feature_map/" "static run prints its regions"
has "$TMP/out" "device peak" "static run prints the device peak"
has "$TMP/out" "recorded," "static run prints its events"
has "$TMP/out" "placement copies" "static run prints copies by kind"
expect 0 "run --plan --json stats" "$GM" run --plan --json --streams 2
has "$TMP/out" '"device_peak_bytes":' "json device peak"
has "$TMP/out" '"regions":' "json regions"
has "$TMP/out" '"events_recorded":' "json events"
expect 0 "run dynamic copies by kind" "$GM" run --streams 2 && has "$TMP/out" "placement copies" "dynamic copies by kind"
# host tensors, a host node and a node on the second device, without a plan: copies of each kind
cat >"$TMP/place.json" <<'EOF'
{"graphmem":1,"name":"place","graphs":[{"name":"root","nodes":[
{"name":"x","type":"Data","attrs":{"index":0},"outputs":[{"dtype":"float32","shape":[256],"memory_type":"host"}]},
{"name":"a","type":"Relu","inputs":["x:0"],"outputs":[{"dtype":"float32","shape":[256]}]},
{"name":"h","type":"Relu","inputs":["a:0"],"attrs":{"_placement":"host"},"outputs":[{"dtype":"float32","shape":[256]}]},
{"name":"b","type":"Sigmoid","inputs":["a:0"],"attrs":{"_device":1},"outputs":[{"dtype":"float32","shape":[256]}]},
{"name":"c","type":"Add","inputs":["h:0","b:0"],"outputs":[{"dtype":"float32","shape":[256]}]},
{"name":"out","type":"NetOutput","inputs":["c:0"]}]}]}
EOF
for mode in --dynamic --plan; do
  expect 0 "run placement $mode" "$GM" run "$TMP/place.json" $mode --devices 2 --streams 2 --passes none --json
  has "$TMP/out" '"verified":	true' "placement $mode clean"
  has "$TMP/out" '"copies_h2d":	1' "placement $mode H2D"
  has "$TMP/out" '"copies_d2h":	1' "placement $mode D2H"
  has "$TMP/out" '"copies_p2p":	2' "placement $mode P2P"
done

# Summaries as JSON from every command; progress on stderr only on a terminal; --strategy all;
# the README's picture is what graphmem draws today.
expect 0 "info --json" "$GM" info --json "$EX" && has "$TMP/out" '"model":	"train_step"' "info json model" \
  && has "$TMP/out" '"op_types":' "info json op types"
expect 0 "convert --json" "$GM" convert --json "$EX" "$TMP/conv.onnx" && has "$TMP/out" '"format":	"onnx"' "convert json"
expect 0 "plan -o for verify --json" "$GM" plan -o "$TMP/v.plan.json" --dump-graph "$TMP/v.graph.json" -q
expect 0 "verify --json ok" "$GM" verify --json "$TMP/v.graph.json" "$TMP/v.plan.json" && has "$TMP/out" '"ok":	true' "verify json ok"
expect 1 "verify --json wrong" "$GM" verify --json "$SRC/tests/data/plans/relu.json" "$SRC/tests/data/plans/relu_overlap.plan.json" \
  && has "$TMP/out" '"kind":	"overlap"' "verify json names the problem"
expect 0 "dsa --json" "$GM" plan --dsa "$SRC/tests/data/dsa_small.csv" --json && has "$TMP/out" '"optimal":	true' "dsa json"
expect 0 "plan --strategy all" "$GM" plan --strategy all && has "$TMP/out" "of 8 side by side" "all strategies ran"
expect 0 "plan, stderr not a terminal" env GM_PROGRESS_AFTER=0 "$GM" plan "$SRC/tests/data/models/resnet50.onnx"
if grep -q "graphmem: " "$TMP/err"; then echo "FAIL: progress written to a file"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
if command -v script >/dev/null; then
  GM_PROGRESS_AFTER=0 script -qec "'$GM' plan '$SRC/tests/data/models/resnet50.onnx' --threads 1" /dev/null >"$TMP/tty" 2>&1
  has "$TMP/tty" "graphmem: " "progress on a terminal"
  has "$TMP/tty" "feature-map bytes" "the summary after the progress line"
  GM_PROGRESS_AFTER=0 script -qec "'$GM' run --streams 2" /dev/null >"$TMP/tty" 2>&1
  has "$TMP/tty" "graphmem: " "run: progress on a terminal"
  has "$TMP/tty" "every read found its writer's data" "run: the result after the progress line"
  for c in "info '$SRC/tests/data/models/resnet50.onnx'" "convert '$SRC/tests/data/models/resnet50.onnx' '$TMP/p.json'"; do
    GM_PROGRESS_AFTER=0 script -qec "'$GM' $c" /dev/null >"$TMP/tty" 2>&1
    has "$TMP/tty" "graphmem: " "${c%% *}: progress on a terminal"
  done
fi
expect 0 "plan --svg (README picture)" "$GM" plan --svg "$TMP/readme.svg" -q
if cmp -s "$TMP/readme.svg" "$SRC/docs/example.svg"; then passes=$((passes + 1)); else
  echo "FAIL: docs/example.svg is not what graphmem draws now: build/graphmem plan --svg docs/example.svg"
  fails=$((fails + 1))
fi

# The user's files are safe (issue 26): an output never replaces an input, outputs are distinct,
# and a command that fails writes nothing, not even the outputs it made before failing.
cp "$EX" "$TMP/m.json"
cp "$TMP/m.json" "$TMP/m.orig"
same_model() { if cmp -s "$TMP/m.json" "$TMP/m.orig"; then passes=$((passes + 1)); else
  echo "FAIL: $1 changed the model"; fails=$((fails + 1)); cp "$TMP/m.orig" "$TMP/m.json"; fi; }
expect 2 "plan -o onto its model" "$GM" plan "$TMP/m.json" -o "$TMP/m.json" \
  && has "$TMP/err" "would overwrite the input" "says the output is the input"
same_model "plan -o m.json"
ln -s m.json "$TMP/link.json"
expect 2 "plan -o onto a link to its model" "$GM" plan "$TMP/m.json" -o "$TMP/link.json"
same_model "plan -o through a symlink"
for opt in --svg --dot --dump-graph; do
  expect 2 "plan $opt onto its model" "$GM" plan "$TMP/m.json" $opt "$TMP/m.json" && has "$TMP/err" "$opt" "names $opt"
  same_model "plan $opt m.json"
done
cp "$M18" "$TMP/r.onnx"
expect 2 "plan --svg onto an ONNX model" "$GM" plan "$TMP/r.onnx" --svg "$TMP/r.onnx"
if cmp -s "$TMP/r.onnx" "$M18"; then passes=$((passes + 1)); else echo "FAIL: --svg r.onnx overwrote the model"; fails=$((fails + 1)); fi
expect 2 "convert onto itself" "$GM" convert "$TMP/m.json" "$TMP/./m.json" && has "$TMP/err" "would overwrite the input" "convert"
same_model "convert m.json m.json"
cp "$SRC/tests/data/dsa_small.csv" "$TMP/d.csv"
expect 2 "plan --dsa -o onto its input" "$GM" plan --dsa "$TMP/d.csv" -o "$TMP/d.csv"
if cmp -s "$TMP/d.csv" "$SRC/tests/data/dsa_small.csv"; then passes=$((passes + 1)); else
  echo "FAIL: plan --dsa -o replaced its input"; fails=$((fails + 1)); fi
expect 2 "two outputs, one file" "$GM" plan -o "$TMP/both" --svg "$TMP/both" && has "$TMP/err" "both name" "says which"
[ -e "$TMP/both" ] && { echo "FAIL: two outputs in one file wrote it"; fails=$((fails + 1)); }
# A failure after -o's plan was made: nothing is written, an existing file is kept, no temporary
# file is left behind.
echo "keep me" >"$TMP/kept.plan.json"
expect 2 "--svg into a missing directory" "$GM" plan -o "$TMP/kept.plan.json" --svg "$TMP/nodir/x.svg" \
  && has "$TMP/err" "no directory" "names the missing directory"
if [ "$(cat "$TMP/kept.plan.json")" = "keep me" ]; then passes=$((passes + 1)); else
  echo "FAIL: a failed plan replaced -o's file"; fails=$((fails + 1)); fi
if [ -d /proc ] && [ -e /proc/version ]; then
  expect 2 "--dot where no file can be made" "$GM" plan -o "$TMP/fresh.plan.json" --dot /proc/x.dot \
    && has "$TMP/err" "takes no new files" "says why"
  [ -e "$TMP/fresh.plan.json" ] && { echo "FAIL: a failed plan wrote -o's file"; fails=$((fails + 1)); }
  expect 2 "-o /proc/version" "$GM" plan -o /proc/version && has "$TMP/err" "takes no new files" "not 'No such file'"
  if grep -q "No such file" "$TMP/err"; then echo "FAIL: -o /proc/version says 'No such file'"; fails=$((fails + 1)); fi
fi
expect 1 "a plan that does not verify writes nothing" "$GM" plan "$TMP/race.json" --passes all,-access_order -o "$TMP/race2.plan.json"
[ -e "$TMP/race2.plan.json" ] && { echo "FAIL: an unverified plan was written"; fails=$((fails + 1)); }
if ls -a "$TMP" | grep -q '\.tmp'; then echo "FAIL: temporary files left: $(ls -a "$TMP" | grep '\.tmp')"; fails=$((fails + 1)); else
  passes=$((passes + 1)); fi
expect 0 "-o /dev/null" "$GM" plan -o /dev/null -q
# What was written is said, as convert does; -q says nothing; --json lists it.
expect 0 "plan says what it wrote" "$GM" plan -o "$TMP/w.plan.json" --svg "$TMP/w.svg" --dot "$TMP/w.dot" --dump-graph "$TMP/w.onnx"
for f in "w.plan.json (plan," "w.svg (memory timeline, svg," "w.dot (graph, dot," "w.onnx (graph, onnx,"; do
  has "$TMP/out" "wrote $TMP/$f" "plan names $f"
done
expect 0 "plan -q -o" "$GM" plan -q -o "$TMP/w.plan.json"
[ -s "$TMP/out" ] && { echo "FAIL: plan -q -o printed"; fails=$((fails + 1)); }
expect 0 "plan --json -o" "$GM" plan --json -o "$TMP/w.plan.json" && has "$TMP/out" '"wrote":' "json lists the outputs"
expect 0 "plan --dsa says what it wrote" "$GM" plan --dsa "$SRC/tests/data/dsa_small.csv" --budget 1 -o "$TMP/w.csv" \
  && has "$TMP/out" "wrote $TMP/w.csv (offsets, csv," "dsa names its output"

# --dim: one wording for a malformed one, a name the model lacks is refused naming those it has,
# a format without symbolic dims says so, and a dim left open is pointed out.
CF="$SRC/tests/data/models/control_flow.onnx"
expect 2 "--dim malformed (ONNX)" "$GM" info "$CF" --dim T && has "$TMP/err" "dim 'T': expected NAME=VALUE, VALUE a whole number >= 0" "one wording"
expect 2 "--dim malformed (JSON)" "$GM" info "$EX" --dim T && has "$TMP/err" "dim 'T': expected NAME=VALUE, VALUE a whole number >= 0" "same wording"
expect 2 "--dim negative" "$GM" info "$CF" --dim T=-1 && has "$TMP/err" "dim 'T=-1': expected NAME=VALUE, VALUE a whole number >= 0" "same wording"
expect 2 "--dim misspelt" "$GM" plan "$CF" --dim TT=4 && has "$TMP/err" "no symbolic dim 'TT' (its symbolic dims: T" "names the model's dims"
expect 2 "--dim on JSON" "$GM" plan "$EX" --dim T=4 && has "$TMP/err" "has no symbolic dims" "JSON has none"
expect 2 "--dim on the embedded example" "$GM" plan --dim T=4 && has "$TMP/err" "embedded example has no symbolic dims" "example has none"
expect 0 "a dim left open" "$GM" plan "$CF" && has "$TMP/err" "symbolic dim T not fixed" "points at the open dim" \
  && has "$TMP/err" "--dim T=N" "names the fix"
expect 0 "the dim fixed" "$GM" plan "$CF" --dim T=4 && has "$TMP/out" "0 dynamic symbols" "static once fixed"
if grep -q "not fixed" "$TMP/err"; then echo "FAIL: a note after the dim was fixed"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
expect 0 "-q hides the note" "$GM" plan "$CF" -q
[ -s "$TMP/err" ] && { echo "FAIL: plan -q printed the dim note"; fails=$((fails + 1)); }

# Tensors of run-time size (issue 27): info, plan and run count them by one rule (a size known
# only at run time), on a PP-OCR-detector-like model (tests/data/runtime_sizes.py): Resize with
# an empty roi, by scales and by sizes from Shape, ConvTranspose, an empty tensor, N, H and W
# symbolic. Open, 12 tensors of run-time size for all three (and 12 buffers the runtime
# allocator assumes a size for); with --dim, none — the empty tensors (0 bytes) are not of
# run-time size, where run once counted them. The same on 4 streams and with --plan.
jnum() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([0-9]*\),\{0,1\}$/\1/p" "$2" | head -1; }
same_count() { # same_count LABEL WANT VALUES...: every value is WANT
  local label=$1 want=$2 v
  shift 2
  for v in "$@"; do
    if [ "$v" != "$want" ]; then echo "FAIL: $label: $* (want $want each)"; fails=$((fails + 1)); return; fi
  done
  passes=$((passes + 1))
}
RS="$SRC/tests/data/runtime_sizes.onnx"
for dims in "" "--dim N=1 --dim H=64 --dim W=64"; do
  want=12
  [ -n "$dims" ] && want=0
  # shellcheck disable=SC2086
  expect 0 "info runtime_sizes $dims" "$GM" info "$RS" --json -q $dims && cp "$TMP/out" "$TMP/rs.info"
  # shellcheck disable=SC2086
  expect 0 "plan runtime_sizes $dims" "$GM" plan "$RS" --json -q $dims && cp "$TMP/out" "$TMP/rs.plan"
  for mode in "--streams 1" "--streams 4" "--plan"; do
    # shellcheck disable=SC2086
    expect 0 "run runtime_sizes $mode $dims" "$GM" run "$RS" --json -q $mode $dims && cp "$TMP/out" "$TMP/rs.run"
    same_count "tensors of run-time size, info/plan/run $mode $dims" "$want" "$(jnum dynamic_tensors "$TMP/rs.info")" \
      "$(jnum dynamic_tensors_before "$TMP/rs.plan")" "$(jnum dynamic_tensors "$TMP/rs.plan")" \
      "$(jnum dynamic_tensors_before "$TMP/rs.run")" "$(jnum dynamic_tensors "$TMP/rs.run")"
    same_count "tensors, info/plan/run $mode $dims" 31 "$(jnum tensors "$TMP/rs.info")" \
      "$(jnum tensors_before "$TMP/rs.plan")" "$(jnum tensors_before "$TMP/rs.run")"
    [ "$mode" = "--plan" ] || same_count "assumed sizes $mode $dims" "$want" "$(jnum assumed_sizes "$TMP/rs.run")"
  done
done
expect 0 "info says what run-time size means" "$GM" info "$RS" \
  && has "$TMP/out" "tensors           31 (12 of run-time size: a size known only at run time)" "info's line"
expect 0 "plan says the same" "$GM" plan "$RS" --dim N=1 --dim H=64 --dim W=64 \
  && has "$TMP/out" "tensors before / after     31 / 31 (0 / 0 of run-time size: a size known only at run time)" "plan's line"
expect 0 "run says the same" "$GM" run "$RS" --dim N=2 --dim H=32 --dim W=32 \
  && has "$TMP/out" "tensors before / after     31 / 31 (0 / 0 of run-time size: a size known only at run time)" "run's line"
if grep -q "assumed sizes" "$TMP/out"; then echo "FAIL: run assumed sizes with every dim fixed"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
expect 0 "run --plan counts its reads of run-time size" "$GM" run "$RS" --plan \
  && has "$TMP/out" "reads of run-time size not checked" "static run says what it did not check"

# Exit 3 is documented, and a run out of device memory says why without the allocator's own lines.
expect 3 "run out of device memory" "$GM" run --memory-limit 100000 && has "$TMP/err" "has no" "says what it lacked"
if grep -q "multi-stream allocator" "$TMP/err"; then echo "FAIL: internal allocator line on stderr"; fails=$((fails + 1)); else
  passes=$((passes + 1)); fi
# A plan for another model says so first, then only the first problems.
T_LM="$SRC/tests/data/models/transformer_lm_train_step.graphmem.json"
expect 0 "plan for another model" "$GM" plan "$T_LM" -q -o "$TMP/lm.plan.json"
expect 1 "verify against another model" "$GM" verify "$EX" "$TMP/lm.plan.json" \
  && has "$TMP/out" "a plan for another model" "says it first"
if head -1 "$TMP/out" | grep -q "a plan for another model"; then passes=$((passes + 1)); else
  echo "FAIL: the other-model line is not first"; fails=$((fails + 1)); fi
[ "$(wc -l <"$TMP/out")" -le 14 ] && passes=$((passes + 1)) || { echo "FAIL: verify against another model printed $(wc -l <"$TMP/out") lines"; fails=$((fails + 1)); }
# verify against the model as the user has it (issue 27): the passes the plan records run again
# on it and must insert what the plan lists; the graph --dump-graph wrote verifies as it is; a
# plan whose passes do not give its graph says so first.
expect 0 "plan the example" "$GM" plan "$EX" -q -o "$TMP/ex.plan.json" --dump-graph "$TMP/ex.after.json"
has "$TMP/ex.plan.json" '"passes": [' "the plan records its passes"
expect 0 "verify against the original" "$GM" verify "$EX" "$TMP/ex.plan.json" && has "$TMP/out" "plan OK" "valid" \
  && has "$TMP/out" "passes, run again: 7 nodes" "says the passes ran again"
expect 0 "verify against the graph after the passes" "$GM" verify "$TMP/ex.after.json" "$TMP/ex.plan.json" && has "$TMP/out" "plan OK" "valid too"
expect 0 "verify the race's plan against its model" "$GM" verify "$TMP/race.json" "$TMP/race.plan.json" \
  && has "$TMP/out" "and 1 control edges inserted" "the edge again"
grep -v '^  "subgraph",$' "$TMP/ex.plan.json" >"$TMP/ex.nosub.plan.json"
expect 1 "a plan whose passes do not give its graph" "$GM" verify "$EX" "$TMP/ex.nosub.plan.json" \
  && has "$TMP/out" "passes: the plan lists inserted node" "names the node"
if sed -n 1p "$TMP/out" | grep -q "passes: "; then passes=$((passes + 1)); else echo "FAIL: the passes' mismatch is not first"; fails=$((fails + 1)); fi
expect 0 "verify --json says the passes ran" "$GM" verify --json "$EX" "$TMP/ex.plan.json" && has "$TMP/out" '"passes_run_again":	true' "json"

# Help covers every command's options, the strategy names, the ranges and the exit status.
expect 0 "--help" "$GM" --help
for t in "Options of run:" "Options of convert:" "--memory-limit" "--to json|onnx|ge" "Exit status:" "  3  " \
  "range-binary-block-ascending-frlr" "docs/cli.md"; do has "$TMP/out" "$t" "--help: $t"; done
expect 0 "help plan" "$GM" help plan
for t in "best_fit" "dsa_search" "max-block" "1-1024" "(0, 3600]" "power of two" "Exit status:"; do has "$TMP/out" "$t" "help plan: $t"; done
expect 0 "help run" "$GM" help run && has "$TMP/out" "1-64" "run ranges" && has "$TMP/out" "Exit status:" "run exit status"
for c in check verify convert info; do
  expect 0 "help $c" "$GM" help $c && has "$TMP/out" "Exit status:" "help $c exit status"
done

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
