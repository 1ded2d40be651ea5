#!/usr/bin/env python3
"""Checks classify's ONNX export and import against ONNX Runtime (outside `make test`; needs onnx, onnxruntime).

For each weights file: export it, check the file with onnx.checker, make inputs from a dataset with the model's
own preprocessing (`classify run --dataset --save-inputs`), run them through ONNX Runtime, through our weights
file and through our import of the exported file, and compare. f32 must agree within 1e-5; int8 (ONNX Runtime's
QDQ arithmetic against our integer kernels) within the int8 tolerance, 0.02 on a probability; our import of the
export must give exactly our outputs.

    scripts/onnx/check_ort.py [--classify .build/release/classify]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

CASES = [
    ("Weights/shape-classifier.f32.weights", "Datasets/shapes/test.csv", 1e-5),
    ("Weights/shape-classifier.int8.weights", "Datasets/shapes/test.csv", 0.02),
    ("Weights/motion-state.f32.weights", "Datasets/motion/test.csv", 1e-5),
    ("Weights/motion-state.int8.weights", "Datasets/motion/test.csv", 0.02),
]


def run(classify, *arguments):
    result = subprocess.run([classify, *arguments], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"classify {' '.join(arguments)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def outputs(text):
    return np.array([[float(v) for v in line.split()] for line in text.strip().split("\n")])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--classify", default=".build/release/classify")
    arguments = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for weights, dataset, tolerance in CASES:
            exported = os.path.join(work, os.path.basename(weights).replace(".weights", ".onnx"))
            inputs = os.path.join(work, "inputs.npy")
            run(arguments.classify, "export", "onnx", weights, "-o", exported)
            model = onnx.load(exported)
            onnx.checker.check_model(model, full_check=True)
            metadata = {entry.key: json.loads(entry.value) for entry in model.metadata_props}
            ours = outputs(run(arguments.classify, "run", weights, "--dataset", dataset, "--save-inputs", inputs))
            imported = outputs(run(arguments.classify, "run", exported, "--input", inputs))
            x = np.load(inputs)
            session = ort.InferenceSession(exported, providers=["CPUExecutionProvider"])
            declared = session.get_inputs()[0].shape
            x = x.reshape([x.shape[0]] + [int(d) for d in declared[1:]]) if len(declared) == 4 else x.reshape(x.shape[0], -1)
            reference = session.run(None, {"input": x})[0]
            difference = float(np.abs(ours - reference).max())
            same_import = float(np.abs(ours - imported).max())
            agree = float((ours.argmax(1) == reference.argmax(1)).mean())
            ok = difference <= tolerance and same_import == 0.0
            failed |= not ok
            print(f"{'ok  ' if ok else 'FAIL'} {weights}: {x.shape[0]} inputs from {dataset}; ORT vs ours max |diff| "
                  f"{difference:.3g} (tolerance {tolerance:g}), answers agree {agree:.2%}; our import of the export vs "
                  f"ours {same_import:.3g}; metadata labels {metadata.get('labels')}, preprocessing "
                  f"{metadata.get('preprocessing', {}).get('kind')}; {os.path.getsize(exported)} bytes")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
