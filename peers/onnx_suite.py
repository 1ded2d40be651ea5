#!/usr/bin/env python3
"""ONNX's own importer test models through `classify run`: matched, refused (with the reason) or mismatched.

The `onnx` wheel ships, under onnx/backend/test/data/, folders of single-node and single-module models, each with
test_data_set_*/input_*.pb and output_*.pb (TensorProto files). For every case with one input and one output, this
writes the input as .npy, runs `classify run MODEL --input IN.npy --json`, and compares what it prints with the
expected output: matched when every value is within rtol 1e-3 / atol 1e-4 (numpy.allclose), mismatched otherwise
(with the largest difference), refused when classify exits 64–74 (with its error line), crashed on any other exit
(a signal included).

  $HOME/.venvs/onnx/bin/python peers/onnx_suite.py [--suite pytorch-converted] [--classify .build/release/classify]
(python3 -m venv $HOME/.venvs/onnx && $HOME/.venvs/onnx/bin/pip install onnx numpy)
Exit 1 when any case crashed, else 0.
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tensor(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return numpy_helper.to_array(proto)


def run_case(classify, folder, work):
    """('matched' | 'mismatched' | 'refused' | 'crashed' | 'skipped', detail)."""
    model = os.path.join(folder, "model.onnx")
    sets = sorted(glob.glob(os.path.join(folder, "test_data_set_*")))
    if not sets:
        return "skipped", "no test data"
    inputs = sorted(glob.glob(os.path.join(sets[0], "input_*.pb")))
    outputs = sorted(glob.glob(os.path.join(sets[0], "output_*.pb")))
    if len(inputs) != 1 or len(outputs) != 1:
        return "skipped", f"{len(inputs)} inputs, {len(outputs)} outputs"
    given, expected = tensor(inputs[0]), tensor(outputs[0])
    if given.dtype != numpy.float32 or expected.dtype != numpy.float32:
        return "skipped", f"{given.dtype} in, {expected.dtype} out"
    path = os.path.join(work, os.path.basename(folder) + ".npy")
    numpy.save(path, numpy.ascontiguousarray(given))
    try:
        run = subprocess.run([classify, "run", model, "--input", path, "--json"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "crashed", "no answer within 120 s"
    if run.returncode in (64, 65, 66, 70, 74):
        lines = [line for line in run.stderr.splitlines() if line.startswith("error:")] or run.stderr.splitlines() or ["?"]
        return "refused", f"exit {run.returncode}: {lines[-1].replace(model, 'model.onnx')[:220]}"
    if run.returncode != 0:
        return "crashed", f"exit {run.returncode}: {run.stderr.strip()[-300:]}"
    try:
        got = numpy.array([value for line in run.stdout.splitlines() for value in json.loads(line)["outputs"]], dtype=numpy.float64)
    except (ValueError, KeyError, TypeError) as error:
        return "mismatched", f"unreadable output ({error}): {run.stdout[:120]!r}"
    want = expected.astype(numpy.float64).ravel()
    if got.shape != want.shape:
        return "mismatched", f"{got.size} values, expected {want.size} (shape {list(expected.shape)})"
    if numpy.allclose(got, want, rtol=1e-3, atol=1e-4):
        return "matched", f"largest difference {numpy.max(numpy.abs(got - want)) if want.size else 0:.2e}"
    return "mismatched", f"largest difference {numpy.max(numpy.abs(got - want)):.3g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="pytorch-converted", help="a folder of onnx/backend/test/data/")
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build/release/classify"))
    parser.add_argument("--quiet", action="store_true", help="only the counts and the cases that are not matched")
    args = parser.parse_args()
    suite = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", args.suite)
    cases = sorted(d for d in glob.glob(os.path.join(suite, "*")) if os.path.isdir(d))
    counts, by_operators = collections.Counter(), collections.Counter()
    with tempfile.TemporaryDirectory() as work:
        for folder in cases:
            outcome, detail = run_case(args.classify, folder, work)
            counts[outcome] += 1
            graph = onnx.load(os.path.join(folder, "model.onnx")).graph
            operators = sorted({node.op_type for node in graph.node})
            by_operators[" ".join(operators)] += 1
            if not (args.quiet and outcome == "matched"):
                print(f"{outcome:10}  {os.path.basename(folder)} [{', '.join(operators)}]: {detail}", flush=True)
    print(f"{args.suite} (onnx {onnx.__version__}): {len(cases)} cases: " + ", ".join(
        f"{counts[k]} {k}" for k in ("matched", "refused", "mismatched", "crashed", "skipped")))
    if not args.quiet:
        print("cases by their set of operators: " + "; ".join(f"{ops or '(none)'} {n}" for ops, n in by_operators.most_common()))
    return 1 if counts["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())
