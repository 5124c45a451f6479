#!/usr/bin/env python3
"""onnx_outputs.py - the shapes graphmem gives a model's outputs are the shapes they have.

Every model of ONNX's backend test suite (Debian's libonnx-testdata) comes with the tensors a
run produces (test_data_set_0/output_<i>.pb). graphmem sizes every tensor from the declared
types and its own shape inference; `graphmem info --json` lists the outputs as it sized them.
Each tensor output is held against the real tensor: the rank must be the same and every dim
graphmem knows (>= 0) must be the real one. A dim graphmem leaves to run time (-1) is not
wrong, only unknown; sequence and optional outputs, and outputs whose rank graphmem leaves
unknown, are counted apart. python3-onnx reads the tensors (a test dependency: without it, or
without the suite, this test fails).

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


def main():
    gm = sys.argv[1]
    data = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
    models = sorted(glob.glob(os.path.join(data, "**", "model.onnx"), recursive=True))
    if len(models) < MIN_MODELS:
        sys.exit(f"onnx_outputs: only {len(models)} models under {data} (apt-get install libonnx-testdata)")
    checked = unknown_rank = not_tensors = fails = 0
    for m in models:
        ds = os.path.join(os.path.dirname(m), "test_data_set_0")
        model = onnx.load(m, load_external_data=False)
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
    print(f"onnx_outputs: {len(models)} models, {checked} tensor outputs held against the run's, "
          f"{unknown_rank} of unknown rank, {not_tensors} sequences/optionals; {fails} failures")
    print(f"{checked - fails if checked >= fails else 0} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
