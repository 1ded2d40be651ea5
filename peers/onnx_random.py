#!/usr/bin/env python3
"""Random small ONNX graphs of the operators the importer reads, run by ONNX Runtime and by `classify run`.

Each case is a chain of 1 to 3 nodes drawn from Conv and ConvTranspose (1-D, 2-D, 3-D; groups, dilations, strides,
pads, output_padding), MaxPool and
AveragePool (pads, ceil_mode, count_include_pad), GlobalAveragePool, the activations, Softmax / LogSoftmax over a random axis, Pad
(constant, reflect, edge; negative pads crop), ReduceMean / ReduceSum, Transpose, BatchNormalization, PRelu and arithmetic with a
broadcast constant, at opset 11, 13 or 17, on a random channel-first input. ONNX Runtime's output is the expected
one; a case is matched within rtol 1e-3 / atol 1e-4, refused (classify exits 64-74, with its reason), mismatched or
crashed. Nothing here is tuned to a case: the graphs come from the seed.

  $HOME/.venvs/onnx/bin/python peers/onnx_random.py [--seed 1] [--cases 150] [--classify .build/release/classify]
(python3 -m venv $HOME/.venvs/onnx && $HOME/.venvs/onnx/bin/pip install onnx onnxruntime numpy)
Writes each mismatched or crashed model to the working folder as mismatch-N.onnx / crash-N.onnx. Exit 1 when any
case mismatched or crashed.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--cases", type=int, default=150)
parser.add_argument("--classify", default=os.path.join(ROOT, ".build/release/classify"))
args = parser.parse_args()
rng = random.Random(args.seed)
np.random.seed(args.seed)
work = tempfile.mkdtemp()


def f32(n, v): return nh.from_array(np.asarray(v, dtype=np.float32), n)
def i64(n, v): return nh.from_array(np.asarray(v, dtype=np.int64), n)


results = {"match": 0, "refused": 0, "mismatch": 0, "crash": 0, "skipped": 0}
for case in range(args.cases):
    spatial = rng.choice([1, 2, 3])
    C = rng.choice([1, 2, 3, 4])
    dims = [rng.randint(4, 7) for _ in range(spatial)]
    shape = [1, C] + dims
    nodes, inits, cur, opset = [], [], "x", rng.choice([11, 13, 17])
    desc = []
    for step in range(rng.randint(1, 3)):
        kind = rng.choice(["conv", "convT", "pool", "act", "softmax", "pad", "reduce", "transpose", "bn", "prelu", "arith", "gap"])
        out = f"v{step}"
        r = len(shape)
        if kind == "conv":
            g = rng.choice([g for g in [1, 2, 3, 4] if shape[1] % g == 0])
            O = g * rng.randint(1, 2)
            k = [rng.randint(1, 3) for _ in range(r - 2)]
            d = [rng.choice([1, 1, 2]) for _ in range(r - 2)]
            s = [rng.choice([1, 2]) for _ in range(r - 2)]
            p = [rng.randint(0, 1) for _ in range(2 * (r - 2))]
            if any(shape[2 + i] + p[i] + p[i + r - 2] < (k[i] - 1) * d[i] + 1 for i in range(r - 2)): continue
            w = np.random.randn(O, shape[1] // g, *k).astype(np.float32)
            inits += [f32(out + "w", w), f32(out + "b", np.random.randn(O))]
            nodes.append(h.make_node("Conv", [cur, out + "w", out + "b"], [out], group=g, dilations=d, strides=s, pads=p))
            shape = [1, O] + [(shape[2 + i] + p[i] + p[i + r - 2] - ((k[i] - 1) * d[i] + 1)) // s[i] + 1 for i in range(r - 2)]
            desc.append(f"conv g{g} k{k} d{d} s{s} p{p}")
        elif kind == "convT":
            g = rng.choice([g for g in [1, 2, 3, 4] if shape[1] % g == 0])
            O = g * rng.randint(1, 2)
            k = [rng.randint(1, 3) for _ in range(r - 2)]
            d = [rng.choice([1, 1, 2]) for _ in range(r - 2)]
            s = [rng.choice([1, 2, 3]) for _ in range(r - 2)]
            p = [rng.randint(0, 1) for _ in range(2 * (r - 2))]
            op = [rng.randint(0, max(s[i], d[i]) - 1) for i in range(r - 2)]
            out_sizes = [s[i] * (shape[2 + i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - p[i] - p[i + r - 2] for i in range(r - 2)]
            if min(out_sizes) < 1: continue
            w = np.random.randn(shape[1], O // g, *k).astype(np.float32)
            inits += [f32(out + "w", w), f32(out + "b", np.random.randn(O))]
            nodes.append(h.make_node("ConvTranspose", [cur, out + "w", out + "b"], [out], group=g, dilations=d, strides=s, pads=p, output_padding=op))
            shape = [1, O] + out_sizes
            desc.append(f"convT g{g} k{k} d{d} s{s} p{p} op{op}")
        elif kind == "pool":
            op = rng.choice(["MaxPool", "AveragePool"])
            k = [rng.randint(1, 3) for _ in range(r - 2)]
            s = [rng.choice([1, 2]) for _ in range(r - 2)]
            p = [rng.randint(0, kk - 1) for kk in k] * 2
            cm = rng.choice([0, 0, 1])
            attrs = dict(kernel_shape=k, strides=s, pads=p, ceil_mode=cm)
            if op == "AveragePool": attrs["count_include_pad"] = rng.choice([0, 1])
            if any(shape[2 + i] + 2 * p[i] < k[i] for i in range(r - 2)): continue
            nodes.append(h.make_node(op, [cur], [out], **attrs))
            def o(i):
                L = shape[2 + i] + 2 * p[i] - k[i]
                n = (math.ceil(L / s[i]) if cm else L // s[i]) + 1
                if cm and (n - 1) * s[i] >= shape[2 + i] + p[i]: n -= 1
                return n
            shape = shape[:2] + [o(i) for i in range(r - 2)]
            desc.append(f"{op} k{k} s{s} p{p} ceil{cm} {attrs.get('count_include_pad')}")
        elif kind == "gap":
            nodes.append(h.make_node("GlobalAveragePool", [cur], [out])); desc.append("gap")
            shape = shape[:2] + [1] * (r - 2)
        elif kind == "act":
            op = rng.choice(["Relu", "Elu", "Selu", "Softplus", "Softsign", "Sigmoid", "Tanh", "LeakyRelu", "Neg"])
            nodes.append(h.make_node(op, [cur], [out])); desc.append(op)
        elif kind == "softmax":
            a = rng.randint(1, r - 1); op = rng.choice(["Softmax", "LogSoftmax"])
            nodes.append(h.make_node(op, [cur], [out], axis=a)); desc.append(f"{op} axis {a}")
        elif kind == "pad":
            mode = rng.choice(["constant", "reflect", "edge"])
            # Reflecting needs widths below the axis's length; the other modes take any, and crop (a negative one)
            # an axis of 3 or more by one.
            low = [-1 if mode != "reflect" and shape[2 + i] >= 3 else 0 for i in range(r - 2)]
            p = [0, 0] + [rng.randint(low[i], min(2, shape[2 + i] - 1) if mode == "reflect" else 2) for i in range(r - 2)]
            q = [0, 0] + [rng.randint(low[i], min(2, shape[2 + i] - 1) if mode == "reflect" else 2) for i in range(r - 2)]
            inits.append(i64(out + "p", p + q))
            nodes.append(h.make_node("Pad", [cur, out + "p"], [out], mode=mode)); desc.append(f"pad {mode} {p + q}")
            shape = [shape[i] + p[i] + q[i] for i in range(r)]
        elif kind == "reduce":
            axes = sorted(rng.sample(range(1, r), rng.randint(1, r - 1))); kd = rng.choice([0, 1])
            op = rng.choice(["ReduceMean", "ReduceSum"])
            if opset >= 18 or op == "ReduceSum" and opset >= 13:
                inits.append(i64(out + "a", axes)); nodes.append(h.make_node(op, [cur, out + "a"], [out], keepdims=kd))
            else:
                nodes.append(h.make_node(op, [cur], [out], axes=axes, keepdims=kd))
            desc.append(f"{op} {axes} keep{kd}")
            shape = [1 if i in axes else shape[i] for i in range(r)] if kd else [shape[i] for i in range(r) if i not in axes]
            if len(shape) < 3: 
                nodes.append(h.make_node("Relu", [out], ["tail"])); cur = "tail"; break
        elif kind == "transpose":
            perm = [0] + rng.sample(range(1, r), r - 1)
            nodes.append(h.make_node("Transpose", [cur], [out], perm=perm)); desc.append(f"transpose {perm}")
            shape = [shape[i] for i in perm]
        elif kind == "bn":
            c = shape[1]
            inits += [f32(out + n, np.random.rand(c) + 0.5) for n in "sbmv"]
            nodes.append(h.make_node("BatchNormalization", [cur] + [out + n for n in "sbmv"], [out])); desc.append("bn")
        elif kind == "prelu":
            sl = rng.choice([[1], [shape[1]] + [1] * (r - 2)])
            inits.append(f32(out + "s", np.random.randn(*sl)))
            nodes.append(h.make_node("PRelu", [cur, out + "s"], [out])); desc.append(f"prelu {sl}")
        elif kind == "arith":
            op = rng.choice(["Add", "Sub", "Mul", "Div", "Max", "Min"])
            cs = [d if rng.random() < 0.5 else 1 for d in shape[rng.randint(0, r - 1):]]
            inits.append(f32(out + "c", np.random.rand(*cs) + 0.5))
            ins = [cur, out + "c"] if rng.random() < 0.5 else [out + "c", cur]
            nodes.append(h.make_node(op, ins, [out])); desc.append(f"{op} {cs} {'first' if ins[0] == cur else 'second'}")
        cur = out
    if not nodes: continue
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, C] + dims)], [h.make_tensor_value_info(cur, T.FLOAT, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    model_path, input_path = os.path.join(work, "r.onnx"), os.path.join(work, "r.npy")
    onnx.save(m, model_path)
    x = np.random.randn(3, C, *dims).astype(np.float32)
    np.save(input_path, x)
    try:
        s = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        want = np.concatenate([s.run(None, {"x": x[i:i+1]})[0].ravel() for i in range(3)])
    except Exception:
        # A graph ONNX Runtime itself does not run (a shape the draw got wrong) is not a case.
        results["skipped"] += 1
        continue
    r = subprocess.run([args.classify, "run", model_path, "--input", input_path, "--json"], capture_output=True, text=True)
    if r.returncode in (64, 65, 70, 74):
        results["refused"] += 1; print("REFUSED", desc, r.stderr.strip().splitlines()[-1][-200:]); continue
    if r.returncode != 0:
        results["crash"] += 1; print("CRASH", desc, r.stderr[-300:]); onnx.save(m, f"crash-{case}.onnx"); continue
    got = np.array([v for l in r.stdout.splitlines() for v in json.loads(l)["outputs"]])
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-3, atol=1e-4):
        results["match"] += 1
    else:
        results["mismatch"] += 1; print("MISMATCH", opset, [1, C] + dims, desc, got.shape, want.shape, np.max(np.abs(got - want)) if got.shape == want.shape else ""); onnx.save(m, f"mismatch-{case}.onnx")
print(f"seed {args.seed}: {args.cases} drawn, " + ", ".join(f"{v} {k}" for k, v in results.items()))
sys.exit(1 if results["mismatch"] or results["crash"] else 0)
