#!/usr/bin/env bash
# gen_graph_shapes.sh — the scale benchmark's two graph shapes (issue 28) are what they claim,
# and the command plans both the same way at any thread count.
#
# The shapes: `--shape bench` (the default: one all-reduce per block, updates on stream 0) and
# `--shape sched` (a stream-scheduled graph: While in 1 of 72 blocks, one all-reduce over every
# 50 blocks, atomic gradients every 71st block, stream-order control edges on 40% of the ops,
# the optimizer's Assign updates on the side stream). Each is checked node by node with
# python3's json, then planned with -o at 1 and 2 threads (--reproducible): the files must be
# the same bytes, verify must accept them, and no staged file may be left beside them. At
# 20,000 nodes the plan's text is over 4 MB, so the command stages it while the verifier runs
# (src/cli/plan_stager.c); at 70,000 the planner also writes and scans it on two threads
# (src/plan/verify_follow.c).
# usage: gen_graph_shapes.sh PATH/TO/graphmem PATH/TO/gen_graph
set -u
GM=$1
GEN=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# shape_facts FILE: prints "nodes blocks whiles allreduces atomic_outputs ctrl updates_on_side
# updates" from the model.
shape_facts() {
  /usr/bin/python3 - "$1" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
nodes = blocks = whiles = ars = atomic = ctrl = side = upd = 0
for g in d["graphs"]:
    for n in g["nodes"]:
        nodes += 1
        t = n["type"]
        if re.fullmatch(r"g/b\d+/done", n["name"]): blocks += 1
        if t == "While": whiles += 1
        if t == "HcomAllReduce": ars += 1
        atomic += len(n.get("attrs", {}).get("atomic_output_index", []))
        ctrl += len(n.get("control_inputs", []))
        if t in ("Assign", "AssignAdd"):
            upd += 1
            if n.get("stream", 0) != 0: side += 1
print(nodes, blocks, whiles, ars, atomic, ctrl, side, upd)
EOF
}

bench_ctrl_per_node=0 # set by the bench shape, which goes first
for shape in bench sched; do
  M=$TMP/$shape.json
  if ! "$GEN" --nodes 20000 --shape $shape -o "$M" 2>"$TMP/err"; then
    bad "gen_graph --shape $shape: $(cat "$TMP/err")"
    continue
  fi
  read -r nodes blocks whiles ars atomic ctrl side upd <<<"$(shape_facts "$M")"
  [ "$nodes" = 20000 ] && ok || bad "$shape: $nodes nodes, expected exactly 20000"
  [ "$blocks" -gt 100 ] && ok || bad "$shape: $blocks blocks"
  [ "$whiles" -gt 0 ] && ok || bad "$shape: no While"
  if [ $shape = bench ]; then
    # one all-reduce per block and the head's; no atomics; updates on stream 0
    [ "$ars" = $((blocks + 1)) ] && ok || bad "bench: $ars all-reduces for $blocks blocks"
    [ "$atomic" = 0 ] && ok || bad "bench: $atomic atomic outputs"
    [ "$side" = 0 ] && ok || bad "bench: $side updates on a side stream"
    bench_ctrl_per_node=$((ctrl * 100 / nodes))
  else
    # one all-reduce per 50 blocks (the lowest block of each group closes it) and the head's
    [ "$ars" = $(((blocks + 49) / 50 + 1)) ] && ok || bad "sched: $ars all-reduces for $blocks blocks"
    # 10 atomic outputs (6 MatMuls, 2 x 2 LayerNorm gradients) in each block b with b % 71 == 0
    [ "$atomic" = $((10 * ((blocks + 70) / 71))) ] && ok || bad "sched: $atomic atomic outputs for $blocks blocks"
    [ "$side" = "$upd" ] && [ "$upd" -gt 0 ] && ok || bad "sched: $side of $upd updates on a side stream"
    # stream-order edges: about 0.4 more per op than the bench shape's
    per=$((ctrl * 100 / nodes))
    [ "$per" -ge $((bench_ctrl_per_node + 30)) ] && ok ||
      bad "sched: $per control edges per 100 nodes, the bench shape $bench_ctrl_per_node"
  fi

  for t in 1 2; do
    if "$GM" plan "$M" -q --reproducible --threads $t -o "$TMP/$shape.t$t.plan.json" 2>"$TMP/err"; then ok; else
      bad "$shape: plan --threads $t: $(head -3 "$TMP/err")"
    fi
  done
  cmp -s "$TMP/$shape.t1.plan.json" "$TMP/$shape.t2.plan.json" && ok || bad "$shape: plans differ at 1 and 2 threads"
  size=$(stat -c %s "$TMP/$shape.t1.plan.json" 2>/dev/null || echo 0)
  [ "$size" -gt $((4 << 20)) ] && ok || bad "$shape: plan text $size bytes, under the 4 MB the stager starts at"
  if "$GM" verify "$M" "$TMP/$shape.t1.plan.json" -q 2>"$TMP/err"; then ok; else
    bad "$shape: verify rejects the plan: $(head -3 "$TMP/err")"
  fi
done

# Planner threads (write and scan) and the stager together, on the second shape.
"$GEN" --nodes 70000 --shape sched -o "$TMP/big.json" || bad "gen_graph --nodes 70000"
if "$GM" plan "$TMP/big.json" -q -o "$TMP/big.plan.json" 2>"$TMP/err"; then ok; else
  bad "70,000 nodes: plan: $(head -3 "$TMP/err")"
fi
"$GM" verify "$TMP/big.json" "$TMP/big.plan.json" -q 2>"$TMP/err" && ok || bad "70,000 nodes: verify: $(head -3 "$TMP/err")"

# Staged files never outlive the command.
left=$(find "$TMP" -name '*.tmp*' | head -3)
[ -z "$left" ] && ok || bad "staged files left behind: $left"

# Bad arguments are refused with exit 2.
"$GEN" --nodes 1000 --shape nope -o "$TMP/x.json" 2>/dev/zero
[ $? = 2 ] && ok || bad "gen_graph --shape nope: not exit 2"
"$GEN" --nodes 1000 --order-edges 101 -o "$TMP/x.json" 2>/dev/zero
[ $? = 2 ] && ok || bad "gen_graph --order-edges 101: not exit 2"

echo "gen_graph_shapes: $passes passed, $fails failed"
[ "$fails" = 0 ]
