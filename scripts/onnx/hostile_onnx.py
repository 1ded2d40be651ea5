#!/usr/bin/env python3
"""Hostile .onnx files under 1 MB through `classify import onnx`: each must exit 65 with one precise error line,
and peak memory (GNU time's maximum resident set) must stay under 100 MB. Needs the onnx package (to build the
files) and GNU time at /usr/bin/time; outside `make test`.

    scripts/onnx/hostile_onnx.py [--classify .build/release/classify]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper


def model(nodes, initializers=(), inputs=None, outputs=None, opset=13, metadata=True):
    inputs = inputs or [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 194])]
    outputs = outputs or [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 3])]
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if metadata:
        m.metadata_props.add(key="labels", value='["walking","running","still"]')
        m.metadata_props.add(key="task", value='"motion"')
    return m.SerializeToString()


def cases():
    rng = random.Random(3)
    yield "random bytes (1 MB)", bytes(rng.getrandbits(8) for _ in range(1 << 20))
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40])
    yield "an initializer of 2^40 elements, no data", model([helper.make_node("Gemm", ["input", "w"], ["output"])], [huge])
    wide = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4096, 4096], raw_data=b"\0" * 16)
    yield "an initializer of 4096x4096 with 16 bytes", model([helper.make_node("Gemm", ["input", "w"], ["output"])], [wide])
    many_dims = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1] * 100000, float_data=[0.0])
    yield "an initializer of 100,000 axes", model([helper.make_node("Gemm", ["input", "w"], ["output"])], [many_dims])
    chain = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(9999)]
    chain[0].input[0] = "v9999"
    yield "a cycle of 9,999 nodes", model(chain + [helper.make_node("Identity", ["v1"], ["output"])])
    too_many = [helper.make_node("Relu", ["input"], [f"r{i}"]) for i in range(20000)]
    yield "20,000 nodes", model(too_many)
    branch = [helper.make_node("Relu", ["input"], ["a"]), helper.make_node("Relu", ["input"], ["b"]),
              helper.make_node("Add", ["a", "b"], ["output"])]
    yield "a branch", model(branch)
    deep = helper.make_graph([], "g0", [], [])
    for level in range(200):
        deep = helper.make_graph([helper.make_node("If", ["c"], ["o"], then_branch=deep, else_branch=deep)], f"g{level}", [], [])
        if len(deep.SerializeToString()) > 500_000:
            break
    yield "graphs nested in attributes", model([helper.make_node("If", ["c"], ["output"], then_branch=deep, else_branch=deep)])
    yield "an unknown operator", model([helper.make_node("Elu", ["input"], ["output"])])
    yield "a dangling input", model([helper.make_node("Gemm", ["input", "nowhere"], ["output"])])
    yield "no labels, no sidecar", model([helper.make_node("Relu", ["input"], ["output"])], metadata=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--classify", default=".build/release/classify")
    arguments = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for name, data in cases():
            path = os.path.join(work, "hostile.onnx")
            with open(path, "wb") as file:
                file.write(data)
            out = os.path.join(work, "out.weights")
            timing = os.path.join(work, "time")
            result = subprocess.run(["/usr/bin/time", "-o", timing, "-f", "%M %e", arguments.classify, "import", "onnx", path, "-o", out],
                                    capture_output=True, text=True)
            kilobytes, seconds = open(timing).read().split()[-2:]
            megabytes = int(kilobytes) / 1024
            ok = result.returncode == 65 and megabytes < 100 and not os.path.exists(out) and result.stderr.count("\n") == 1
            failed |= not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(data)} bytes, exit {result.returncode}, {megabytes:.0f} MB, {float(seconds):.2f} s: "
                  f"{result.stderr.strip().split(': ', 2)[-1][:110]}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
