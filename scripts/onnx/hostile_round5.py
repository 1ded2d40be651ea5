#!/usr/bin/env python3
"""The crafted ONNX files of issue 46 ("hostile use, round five"), for the fuzzer's seeds.

    scripts/onnx/hostile_round5.py write DIR     # the .onnx files (a sidecar beside the recognizer), into DIR

H1: small files whose layers each hold the chain's whole size or an expanded weight (before issue 46: 2 GB for
1 KB, SIGABRT for 11 KB; now refused at the node that passes the import's budget). L6: graphs ONNX Runtime refuses
at load (or the spec rules out) that the import read as something else. `Tests/ONNXTests/ONNXAmplificationTests`
and `ONNXInvalidGraphTests` build the same graphs, smaller, in Swift; the reproductions with their measurements are
`../shared/adversarial/round5/h1*.sh` and `l6*.sh`. Needs the onnx and numpy packages; outside `make test`.
"""
import json
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

SIDECAR = {"labels": ["circle", "triangle", "square", "star", "other"], "task": "shape"}


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(initializers))
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    made.ir_version = 8 if opset >= 7 else 3
    return made.SerializeToString()


def negations(count, features):
    """input [N, features] → `count` Negs → output."""
    nodes = [helper.make_node("Neg", ["x" if i == 0 else f"v{i - 1}"], [f"v{i}" if i < count - 1 else "y"], name=f"Neg_{i}")
             for i in range(count)]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, features])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, features])])


def recognizer_bomb(count):
    """A shape recognizer: the 16x16 raster padded to 1024x1024 (a pad holds no tensor), `count` Negs, a mean, Gemm."""
    nodes = [helper.make_node("Pad", ["x", "p"], ["v0"], name="pad")]
    nodes += [helper.make_node("Neg", [f"v{i}"], [f"v{i + 1}"], name=f"Neg_{i}") for i in range(count)]
    nodes += [helper.make_node("ReduceMean", [f"v{count}"], ["m"], axes=[2, 3], keepdims=0, name="mean"),
              helper.make_node("Gemm", ["m", "W", "B"], ["y"], transB=1, name="gemm")]
    initializers = [numpy_helper.from_array(np.array([0, 0, 504, 504, 0, 0, 504, 504], np.int64), "p"),
                    numpy_helper.from_array(np.ones((5, 1), np.float32), "W"),
                    numpy_helper.from_array(np.zeros(5, np.float32), "B")]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 1, 16, 16])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 5])], initializers)


def shared_depthwise(count, channels):
    """input [N, channels, 1, 1] → `count` depthwise Convs sharing one [channels, 1, 1, 1] weight (each expanded to
    a dense [channels, channels, 1, 1] one)."""
    nodes = [helper.make_node("Conv", ["x" if i == 0 else f"v{i - 1}", "w"], [f"v{i}" if i < count - 1 else "y"],
                              group=channels, name=f"conv{i}") for i in range(count)]
    shape = [None, channels, 1, 1]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                 [numpy_helper.from_array(np.full((channels, 1, 1, 1), 0.5, np.float32), "w")])


def invalid(name, nodes, initializers, opset):
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2, 8, 8])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers, opset)


def files():
    """name → bytes of every crafted file."""
    return {
        "h1-neg60-4m.onnx": negations(60, 1 << 22),
        "h1-neg600-1m.onnx": negations(600, 1 << 20),
        "h1b-pad-neg500.onnx": recognizer_bomb(500),
        "h1-depthwise-shared-100.onnx": shared_depthwise(100, 1024),
        "l6-reshape-minus1-twice.onnx": invalid(
            "reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
            [numpy_helper.from_array(np.array([-1, -1], np.int64), "s")], 13),
        "l6-pad-repeated-axes.onnx": invalid(
            "pad", [helper.make_node("Pad", ["x", "p", "v", "a"], ["y"], name="pad")],
            [numpy_helper.from_array(np.array([1, 2, 1, 2], np.int64), "p"), numpy_helper.from_array(np.array(0, np.float32), "v"),
             numpy_helper.from_array(np.array([2, 2], np.int64), "a")], 18),
        "l6-add6-broadcast-2.onnx": invalid(
            "add", [helper.make_node("Add", ["x", "c"], ["y"], broadcast=2, name="add")],
            [numpy_helper.from_array(np.ones(8, np.float32), "c")], 6),
    }


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "write":
        sys.exit(__doc__)
    folder = sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    for name, data in files().items():
        with open(os.path.join(folder, name), "wb") as out:
            out.write(data)
        if name.startswith("h1b"):
            with open(os.path.join(folder, name + ".json"), "w") as out:
                json.dump(SIDECAR, out)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
