#!/usr/bin/env python3
"""The crafted files of issue 31 ("hostile models, round four"), and the table of what classify does with each.

    scripts/onnx/hostile_round4.py write DIR          # the .onnx files (with sidecars) and inputs, into DIR
    scripts/onnx/hostile_round4.py table [--classify .build/release/classify]

`write` makes the files the tests and the fuzzer's seeds use (Tests/ONNXTests/Hostile, Fuzz/Corpus/onnx).
`table` makes them in a temporary folder, runs every case through the binary under `ulimit -v 4000000` and a
60 s limit, and prints one Markdown row per case: exit code (or signal), first stderr line, peak RSS (GNU time's
maximum resident set) and wall time. Needs the onnx and numpy packages and GNU time at /usr/bin/time; outside
`make test` (each case is a test of its own there).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIDECAR = '{"labels": ["walking", "running", "still"], "task": "motion"}'


def chain_model(nodes, initializers, weight="w", opset=13, extra_opsets=()):
    """input [N, 194] → Gemm(input, WEIGHT, b) → output [N, 3], with `nodes` computing constants beside it."""
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 194])]
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 3])]
    gemm = helper.make_node("Gemm", ["input", weight, "b"], ["output"], name="gemm")
    graph = helper.make_graph(list(nodes) + [gemm], "hostile", inputs, outputs,
                              list(initializers) + [numpy_helper.from_array(np.zeros(3, np.float32), "b")])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model.SerializeToString()


def weight():
    return numpy_helper.from_array(np.full((194, 3), 0.01, np.float32), "w")


def files():
    """name → bytes of every crafted file."""
    out = {}
    # 1: a constant Reshape to [2^22, 2^22, 2^22], each axis within the per-axis limit; its result is the weight.
    big = 1 << 22
    out["reshape-2p66.onnx"] = chain_model(
        [helper.make_node("Reshape", ["one", "target"], ["w"], name="huge_reshape")],
        [numpy_helper.from_array(np.ones(1, np.float32), "one"),
         numpy_helper.from_array(np.array([big, big, big], np.int64), "target")])
    # 2: Concat of an int8 and an int64 constant (value 1000), dequantized, reshaped into the weight.
    out["concat-int8-int64.onnx"] = chain_model(
        [helper.make_node("Concat", ["i8", "i64"], ["mixed"], axis=0, name="mixed_concat"),
         helper.make_node("DequantizeLinear", ["mixed", "scale"], ["dq"], name="dq"),
         helper.make_node("Reshape", ["dq", "shape"], ["w"], name="to_weight")],
        [numpy_helper.from_array(np.ones(1, np.int8), "i8"),
         numpy_helper.from_array(np.array([1000] * 581, np.int64), "i64"),
         numpy_helper.from_array(np.array(0.01, np.float32), "scale"),
         numpy_helper.from_array(np.array([194, 3], np.int64), "shape")])
    # 4: 8 unused Concat nodes, each 16 copies of the one before: 16^8 = 2^32 floats.
    concats = [helper.make_node("Concat", [f"c{level}"] * 16, [f"c{level + 1}"], axis=0, name=f"concat{level}") for level in range(8)]
    out["concat-2p32-unused.onnx"] = chain_model(concats, [weight(), numpy_helper.from_array(np.ones(1, np.float32), "c0")])
    # 4, used: the same growth on the way to the weight (a Slice of the last keeps the shape right).
    used = [helper.make_node("Concat", [f"c{level}"] * 16, [f"c{level + 1}"], axis=0, name=f"concat{level}") for level in range(8)]
    used += [helper.make_node("Slice", ["c8", "start", "end"], ["flat"], name="slice"),
             helper.make_node("Reshape", ["flat", "shape"], ["w"], name="to_weight")]
    out["concat-2p32-used.onnx"] = chain_model(
        used, [numpy_helper.from_array(np.ones(1, np.float32), "c0"), numpy_helper.from_array(np.array([0], np.int64), "start"),
               numpy_helper.from_array(np.array([582], np.int64), "end"), numpy_helper.from_array(np.array([194, 3], np.int64), "shape")])
    # 5: a 1 MiB int8 initializer and 150 / 1,000 unused Transposes of it.
    mib = numpy_helper.from_array(np.ones((1024, 1024), np.int8), "mib")
    for count in (150, 1000):
        nodes = [helper.make_node("Transpose", ["mib"], [f"t{i}"], perm=[1, 0], name=f"transpose{i}") for i in range(count)]
        out[f"transpose-1mib-x{count}-unused.onnx"] = chain_model(nodes, [weight(), mib])
    # 5, used: 150 Transposes in a row on the way to the weight (their budget, not their count, stops them).
    nodes = [helper.make_node("Transpose", ["mib" if i == 0 else f"t{i - 1}"], [f"t{i}"], perm=[1, 0], name=f"transpose{i}")
             for i in range(150)]
    nodes += [helper.make_node("Cast", ["t149"], ["f"], to=TensorProto.FLOAT, name="cast"),
              helper.make_node("Slice", ["flat_f", "start", "end"], ["sliced"], name="slice"),
              helper.make_node("Reshape", ["f", "minus_one"], ["flat_f"], name="flatten"),
              helper.make_node("Reshape", ["sliced", "shape"], ["w"], name="to_weight")]
    out["transpose-1mib-x150-used.onnx"] = chain_model(
        nodes, [mib, numpy_helper.from_array(np.array([0], np.int64), "start"), numpy_helper.from_array(np.array([582], np.int64), "end"),
                numpy_helper.from_array(np.array([-1], np.int64), "minus_one"), numpy_helper.from_array(np.array([194, 3], np.int64), "shape")])
    # 11: the default opset declared twice, in both orders.
    out["opset-twice-13-11.onnx"] = chain_model([], [weight()], opset=13, extra_opsets=[("", 11)])
    out["opset-twice-11-13.onnx"] = chain_model([], [weight()], opset=11, extra_opsets=[("", 13)])
    # 11: 2 million empty nodes in 4 MB (each the field tag 0x0A and a length of 0, appended to the graph).
    base = onnx.load_from_string(chain_model([], [weight()]))
    graph = base.graph.SerializeToString() + b"\x0a\x00" * 2_000_000
    model = onnx.ModelProto()
    model.CopyFrom(base)
    model.ClearField("graph")
    body = model.SerializeToString()
    length = len(graph)
    varint = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        varint.append(byte | (0x80 if length else 0))
        if not length:
            break
    out["nodes-2m-empty.onnx"] = body + b"\x3a" + bytes(varint) + graph
    # 8: escape sequences and a forged line in an operator, a node name and the model's metadata.
    node = helper.make_node("\x1b]0;pwned\x07Elu", ["input"], ["elu"], name="\r\nFAKE: ok\x1b[2J")
    model = onnx.load_from_string(chain_model([node], [weight()]))
    model.graph.node[1].input[0] = "elu"
    out["escapes.onnx"] = model.SerializeToString()
    model = onnx.load_from_string(chain_model([], [weight()]))
    model.metadata_props.add(key="name", value=json.dumps("\x1b[31mred\r\nFAKE: ok"))
    model.metadata_props.add(key="description", value=json.dumps("\x1b]0;title\x07"))
    out["escapes-metadata.onnx"] = model.SerializeToString()
    return out


def npy(shape_text, payload=b"", descr="<f4", extra=""):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, %s}" % (descr, shape_text, extra)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + payload


def write(folder):
    os.makedirs(folder, exist_ok=True)
    for name, data in files().items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        with open(os.path.join(folder, name + ".json"), "w") as f:
            f.write(SIDECAR)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("write").add_argument("folder")
    table = sub.add_parser("table")
    table.add_argument("--classify", default=".build/release/classify")
    arguments = parser.parse_args()
    if arguments.command == "write":
        write(arguments.folder)
        return
    classify = os.path.abspath(arguments.classify)
    root = os.getcwd()
    weights = os.path.abspath("Weights/motion-state.f32.weights")
    work = tempfile.mkdtemp()
    try:
        write(work)
        os.chdir(work)
        with open("big-shape.npy", "wb") as f:
            f.write(npy("(0, 2147483648, 2147483648, 2147483648)"))
        with open("decoy.npy", "wb") as f:
            f.write(npy("(1, 194)", np.full(194, 0.5, ">f4").tobytes(), descr=">f4", extra="'x': \"'descr': '<f4'\", "))
        with open("rows.csv", "w") as f:
            row = ",".join(["0.5"] * 194) + "\n"
            f.write(row * 250_000)
        with open("long-line.csv", "w") as f:
            f.write("0.5," * (100_000_000 // 4))
        with open("crlf.csv", "w", newline="") as f:
            f.write(",".join(["0.5"] * 194) + "\r\n" + ",".join(["0.5"] * 194) + "\r\n")
        with open("bom.csv", "w") as f:
            f.write("\ufeff" + ",".join(["0.5"] * 194) + "\n")
        with open("overflow.csv", "w") as f:
            f.write(",".join(["3.4e38"] * 194) + "\n")
        shutil.copy(weights, "w.weights")
        shutil.copy(os.path.join(root, "Datasets/examples/walking.csv"), "walking.csv")
        shutil.copy("reshape-2p66.onnx", "m.onnx")
        shutil.copy("reshape-2p66.onnx.json", "m.onnx.json")
        os.mkdir("folder.onnx")
        with open("folder.onnx.json", "w"):
            pass
        shutil.copy("opset-twice-13-11.onnx", "sidecar-dir.onnx")
        os.mkdir("sidecar-dir.onnx.json")
        shutil.copy("opset-twice-13-11.onnx", "sidecar-fifo.onnx")
        os.mkfifo("sidecar-fifo.onnx.json")
        with open("drawing.csv", "w") as f:
            f.write("x,y\n" + "".join(f"{100 * np.cos(a)},{100 * np.sin(a)}\n" for a in np.linspace(0, 2 * np.pi, 40)))
        cases = [
            ("1", "import onnx reshape-2p66.onnx -o out.weights"),
            ("1", "inspect reshape-2p66.onnx"),
            ("1", "export onnx reshape-2p66.onnx -o out.onnx"),
            ("1", "run reshape-2p66.onnx --input crlf.csv"),
            ("1", "motion walking.csv --weights reshape-2p66.onnx --fallback"),
            ("2", "import onnx concat-int8-int64.onnx -o out.weights"),
            ("3", "run w.weights --input big-shape.npy"),
            ("4", "import onnx concat-2p32-unused.onnx -o out.weights"),
            ("4", "import onnx concat-2p32-used.onnx -o out.weights"),
            ("5", "import onnx transpose-1mib-x150-unused.onnx -o out.weights"),
            ("5", "import onnx transpose-1mib-x1000-unused.onnx -o out.weights"),
            ("5", "import onnx transpose-1mib-x150-used.onnx -o out.weights"),
            ("6", "run w.weights --input rows.csv"),
            ("6", "run w.weights --input long-line.csv"),
            ("6", "run w.weights --input - < crlf.csv"),
            ("6", "run w.weights --input /dev/stdin < crlf.csv"),
            ("6", "run w.weights --input - (from a pipe)"),
            ("7", "import onnx m.onnx -o m.onnx"),
            ("7", "export onnx w.weights -o w.weights"),
            ("8", "import onnx escapes.onnx -o out.weights"),
            ("8", "motion walking.csv --weights escapes.onnx --fallback"),
            ("8", "inspect escapes-metadata.onnx"),
            ("9", "run w.weights --input crlf.csv"),
            ("9", "run w.weights --input bom.csv"),
            ("10", "run w.weights --input overflow.csv"),
            ("10", "run w.weights --input overflow.csv --json"),
            ("11", "import onnx opset-twice-13-11.onnx -o out.weights"),
            ("11", "import onnx opset-twice-11-13.onnx -o out.weights"),
            ("11", "run w.weights --input decoy.npy"),
            ("11", "import onnx sidecar-dir.onnx -o out.weights"),
            ("11", "import onnx sidecar-fifo.onnx -o out.weights"),
            ("11", "import onnx nodes-2m-empty.onnx -o out.weights"),
        ]
        print("| # | command | exit | first stderr line | peak RSS | wall |")
        print("|---|---|---|---|---|---|")
        for number, command in cases:
            before = {p: open(p, "rb").read() for p in ("m.onnx", "w.weights")}
            shell = command.replace("(from a pipe)", "").strip()
            if "(from a pipe)" in command:
                shell = f"cat crlf.csv | {classify} {shell}"
            else:
                shell = f"{classify} {shell}"
            timed = f"ulimit -v 4000000; exec /usr/bin/time -o time.txt -f '%M %e' timeout 60 {shell}" if "|" not in shell else \
                f"ulimit -v 4000000; /usr/bin/time -o time.txt -f '%M %e' timeout 60 sh -c '{shell}'"
            result = subprocess.run(["bash", "-c", timed], capture_output=True, text=True, errors="replace")
            kilobytes, seconds = open("time.txt").read().split()[-2:]
            code = result.returncode
            shown = f"signal {code - 128}" if code > 128 and code != 255 else str(code)
            first = (result.stderr.strip().split("\n") or [""])[0].replace(work + "/", "")[:150].replace("|", "\\|")
            if command.startswith("inspect") and code == 0:
                first = "stdout: " + " / ".join(line for line in result.stdout.split("\n") if "red" in line or "title" in line)[:140]
            if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in result.stdout + result.stderr if c not in "\n"):
                first += " (CONTROL CHARACTERS PRINTED)"
            changed = [p for p, data in before.items() if open(p, "rb").read() != data]
            note = f" (changed: {', '.join(changed)})" if changed else ""
            print(f"| {number} | `classify {command}` | {shown} | {first}{note} | {int(kilobytes) / 1024:.0f} MB | {float(seconds):.2f} s |")
            sys.stdout.flush()
            for path in ("m.onnx", "w.weights"):
                with open(path, "wb") as f:
                    f.write(before[path])
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
