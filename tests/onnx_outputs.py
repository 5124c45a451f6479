#!/usr/bin/env python3
"""onnx_outputs.py - the shapes graphmem gives a model's outputs are the shapes they have, and
a model converted to ONNX is still that model.

Every model of ONNX's backend test suite (Debian's libonnx-testdata) comes with the tensors a
run produces (test_data_set_0/output_<i>.pb). graphmem sizes every tensor from the declared
types and its own shape inference; `graphmem info --json` lists the outputs as it sized them.
Each tensor output is held against the real tensor: the rank must be the same and every dim
graphmem knows (>= 0) must be the real one. A dim graphmem leaves to run time (-1) is not
wrong, only unknown; sequence and optional outputs, and outputs whose rank graphmem leaves
unknown, are counted apart.

Each model is also converted (`graphmem convert model.onnx out.onnx`): onnx.checker must accept
the result with its full check (shape inference included), its weights (initializers and Constant
values: data type, dims and data) must be the model's own, and so must its input and output
names and every node's attributes (graphmem's own, `__graphmem.*` and `__gm_*`, aside). The full
check is asked of a converted model when the model itself passes it (three of the suite's old
pytorch exports do not: a Constant of int64 their opset does not allow). A model known to fail the checker is named in KNOWN with the reason (none is
now); any other failure, and a known one that passes, fails the test.

python3-onnx reads the tensors and checks the models (a test dependency: without it, or without
the suite, this test fails).

    tests/onnx_outputs.py GRAPHMEM_BINARY [DATA_DIR]
"""
import glob
import json
import os
import subprocess
import sys

try:
    import onnx
except ImportError:
    sys.exit("onnx_outputs: python3-onnx is missing (apt-get install python3-onnx)")

MIN_MODELS = 1000  # fewer means a broken install, not a pass

# Converted models onnx.checker refuses, and why (each is work still to do).
KNOWN = {
}


def weights(model):
    """The model's weights as a sorted list of their bytes, names and notes left out."""
    out = []
    def add(t):
        t = onnx.TensorProto.FromString(t.SerializeToString())
        t.name = ""
        t.doc_string = ""
        out.append(t.SerializeToString())
    def walk(g):
        for t in g.initializer:
            add(t)
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Constant" and a.name == "value" and a.HasField("t"):
                    add(a.t)
                if a.HasField("g"):
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(model.graph)
    return sorted(out)


def node_attrs(model):
    """Every node's op type and attribute names, over all graphs, as a sorted list."""
    out = []

    def walk(g):
        for n in g.node:
            names = sorted(a.name for a in n.attribute if not a.name.startswith("__"))
            out.append((n.domain, n.op_type, tuple(names)))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(model.graph)
    return sorted(out)


def converted_ok(gm, m, model, tmp):
    """None when the converted model passes onnx.checker with the model's weights, names and
    attributes, else why."""
    r = subprocess.run([gm, "convert", m, tmp, "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"convert exit {r.returncode}: {r.stderr.strip()[:200]}"
    conv = onnx.load(tmp, load_external_data=False)
    try:
        onnx.checker.check_model(model, full_check=True)
        full = True
    except Exception:  # the checker's own error type differs across versions
        full = False
    try:
        onnx.checker.check_model(conv, full_check=full)
    except Exception as e:
        return "onnx.checker: " + str(e).split("\n")[0][:200]
    if weights(conv) != weights(model):
        return "the weights changed"
    for what in ("input", "output"):
        want = [v.name for v in getattr(model.graph, what)]
        got = [v.name for v in getattr(conv.graph, what)]
        if what == "input":  # an initializer listed as an input is written as an initializer only
            inits = {t.name for t in model.graph.initializer}
            want = [x for x in want if x not in inits]
            got = [x for x in got if x not in inits]
        if want != got:
            return f"the graph's {what} names changed: {want[:4]} -> {got[:4]}"
    if node_attrs(conv) != node_attrs(model):
        return "a node's attributes changed"
    return None


def main():
    gm = sys.argv[1]
    data = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
    models = sorted(glob.glob(os.path.join(data, "**", "model.onnx"), recursive=True))
    if len(models) < MIN_MODELS:
        sys.exit(f"onnx_outputs: only {len(models)} models under {data} (apt-get install libonnx-testdata)")
    checked = unknown_rank = not_tensors = fails = converted = 0
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"onnx_outputs_{os.getpid()}.onnx")
    for m in models:
        ds = os.path.join(os.path.dirname(m), "test_data_set_0")
        model = onnx.load(m, load_external_data=False)
        name = os.path.basename(os.path.dirname(m))
        why = converted_ok(gm, m, model, tmp)
        if why and name not in KNOWN:
            print(f"FAIL convert {m}: {why}")
            fails += 1
        elif not why and name in KNOWN:
            print(f"FAIL convert {m}: passes now; take it out of KNOWN ({KNOWN[name]})")
            fails += 1
        elif not why:
            converted += 1
        r = subprocess.run([gm, "info", m, "--json", "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL info (exit {r.returncode}): {m}: {r.stderr.strip()[:200]}")
            fails += 1
            continue
        outs = json.loads(r.stdout)["outputs"]
        if len(outs) != len(model.graph.output):
            print(f"FAIL {m}: graphmem lists {len(outs)} outputs, the model has {len(model.graph.output)}")
            fails += 1
            continue
        for i, vi in enumerate(model.graph.output):
            path = os.path.join(ds, f"output_{i}.pb")
            if not os.path.exists(path):
                continue
            if not vi.type.HasField("tensor_type"):
                not_tensors += 1
                continue
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            real = list(t.dims)
            shape = outs[i].get("shape")
            if shape is None:
                unknown_rank += 1
                continue
            checked += 1
            if len(shape) != len(real) or any(g >= 0 and g != w for g, w in zip(shape, real)):
                print(f"FAIL {m}: output {i} ({vi.name}): graphmem {shape}, the run's tensor {real}")
                fails += 1
    if os.path.exists(tmp):
        os.unlink(tmp)
    print(f"onnx_outputs: {len(models)} models, {checked} tensor outputs held against the run's, "
          f"{unknown_rank} of unknown rank, {not_tensors} sequences/optionals; {converted} converted "
          f"models pass onnx.checker with their weights, names and attributes, {len(KNOWN)} known not to; {fails} failures")
    print(f"{checked + converted} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
