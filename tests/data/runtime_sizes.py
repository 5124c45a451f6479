#!/usr/bin/env python3
"""Writes runtime_sizes.onnx next to this script (tests/data/README.md): a small graph shaped like
PaddleOCR's PP-OCR text detector, for the count of tensors of run-time size that `graphmem info`,
`plan` and `run` must agree on (tests/cli.sh). Input x is [N, 3, H, W] with N, H and W symbolic;
a backbone of two strided convolutions; an FPN-like neck whose upsamples are Resize with an empty
roi, by constant scales and by sizes computed from Shape(x) (Paddle2ONNX's forms); a DB-like head
with ConvTranspose; and an empty tensor (a Slice past the end: 0 bytes, a known size), like the
Resize's empty roi and scales. With N, H and W open, 12 tensors are of run-time size; with
--dim N=1 --dim H=64 --dim W=64, none. Run with python3 and the onnx module."""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def w(name, *shape):
    return nh.from_array(np.full(shape, 0.01, np.float32), name)


def i64(name, v):
    return nh.from_array(np.array(v, np.int64), name)


inits = [w("w1", 8, 3, 3, 3), w("w2", 8, 8, 3, 3), w("w3", 8, 8, 1, 1), w("wt", 8, 4, 2, 2), w("wh", 1, 4, 1, 1),
         nh.from_array(np.zeros((0,), np.float32), "roi"), nh.from_array(np.zeros((0,), np.float32), "no_scales"),
         nh.from_array(np.array([1, 1, 2, 2], np.float32), "x2"),
         i64("b0", [0]), i64("b1", [1]), i64("b2", [2]), i64("b4", [4]), i64("big", [100]), i64("c8", [8])]
n = h.make_node
nodes = [
    n("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),  # N, 8, H/2, W/2
    n("Relu", ["c1"], ["r1"]),
    n("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),  # N, 8, H/4, W/4
    n("Relu", ["c2"], ["r2"]),
    n("Resize", ["r2", "roi", "x2"], ["up2"], mode="nearest"),  # by scales, back to r1's size
    n("Add", ["up2", "r1"], ["p1"]),
    n("Shape", ["x"], ["sx"]),  # sizes [N, 8, H, W] from the input's shape
    n("Slice", ["sx", "b0", "b1"], ["sx_n"]),
    n("Slice", ["sx", "b2", "b4"], ["sx_hw"]),
    n("Concat", ["sx_n", "c8", "sx_hw"], ["sizes"], axis=0),
    n("Resize", ["p1", "roi", "no_scales", "sizes"], ["up1"], mode="nearest"),
    n("Conv", ["up1", "w3"], ["f"]),
    n("ConvTranspose", ["r1", "wt"], ["t"], strides=[2, 2]),  # N, 4, H, W
    n("Conv", ["t", "wh"], ["th"]),
    n("Sigmoid", ["th"], ["prob"]),
    n("Slice", ["c8", "big", "big"], ["empty"]),  # [0]
]
g = h.make_graph(nodes, "runtime_sizes", [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"])],
                 [h.make_tensor_value_info("prob", T.FLOAT, ["N", 1, "H", "W"]),
                  h.make_tensor_value_info("f", T.FLOAT, ["N", 8, "H", "W"]),
                  h.make_tensor_value_info("empty", T.INT64, [0])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="graphmem tests")
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime_sizes.onnx"))
