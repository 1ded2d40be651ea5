#!/usr/bin/env python3
"""The Quick, Draw! figures of a shape recipe that trains on the Quick, Draw! dev drawings, by k-fold over drawings:
each fold's drawings are answered by a model trained without them (issue 32: "on drawings that did not train").

    scripts/shape_kfold.py [--folds 4] [--classify PATH] [--realdata DIR] [--keep DIR] -- TRAIN-OPTIONS...

TRAIN-OPTIONS are those of `classify train shape` for the recipe, exactly as for the shipped model, --out left out:

    scripts/shape_kfold.py -- --data Datasets/shapes/train.csv --data Datasets/real/shapes-quickdraw.csv \\
        --data Datasets/real/shapes-other-quickdraw.csv ... --epochs 60 --augment 12 --seed 1 --quantize int8

Drawing i of each dev file (shapes-quickdraw-dev.csv, shapes-other-quickdraw-dev.csv, in file order) is in fold
i mod FOLDS. For each fold, every --data file that holds dev drawings (Datasets/real/shapes-quickdraw.csv,
Datasets/real/shapes-other-quickdraw.csv) is rewritten to a temporary folder without that fold's drawings, the
recipe trains a model there, and `classify shape --dataset` answers the fold's drawings of the dev files with its
int8 weights. Over all folds: right (the label is the drawing's; `unknown` for a non-shape), flagged (`unknown` or
uncertain), confidently a shape, and the expected calibration error with the bins `classify evaluate` uses. The
drawings the import leaves out of training (moons drawn as circles) are answered too: every dev drawing counts.

Prints one Markdown table. Standard library only; about FOLDS times one training run (a minute each for the shipped
recipe in a release build on the 2-core machine). Exit 0 when printed, 1 when a command fails; skips (exit 0) when
the real-data folder is absent.
"""
import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDGES = [0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1]  # ReliabilityTable's default edges, as `classify evaluate` uses them
DEV = {  # dev file -> the training copy in Datasets/real
    "shapes-quickdraw-dev.csv": "Datasets/real/shapes-quickdraw.csv",
    "shapes-other-quickdraw-dev.csv": "Datasets/real/shapes-other-quickdraw.csv",
}


def drawings(path):
    """The drawing ids of a shape CSV in file order, with each one's label."""
    order, labels = [], {}
    with open(path, newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            if row["drawing"] not in labels:
                order.append(row["drawing"])
                labels[row["drawing"]] = row["label"]
    return order, labels


def copy_rows(path, out, keep):
    """Writes the rows of `path` whose drawing `keep` accepts to `out`, under the same header."""
    with open(path, newline="", encoding="utf-8") as src, open(out, "w", newline="", encoding="utf-8") as dst:
        reader = csv.DictReader(src)
        writer = csv.DictWriter(dst, reader.fieldnames, lineterminator="\n")
        writer.writeheader()
        for row in reader:
            if keep(row["drawing"]):
                writer.writerow(row)


def calibration_error(pairs):
    """Expected calibration error of (confidence, right) pairs over EDGES, as ReliabilityTable computes it."""
    total = 0.0
    for index in range(len(EDGES) - 1):
        low, high = EDGES[index], EDGES[index + 1]
        members = [(c, r) for c, r in pairs if (c > low or (index == 0 and c >= low)) and c <= high]
        if members:
            mean = sum(c for c, _ in members) / len(members)
            accuracy = sum(r for _, r in members) / len(members)
            total += len(members) * abs(accuracy - mean)
    return total / len(pairs) if pairs else 0.0


def run(argv):
    started = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"error: {shlex.join(argv)} exited {result.returncode}:\n{result.stderr[-2000:]}")
    print(f"  {time.monotonic() - started:6.1f} s  {shlex.join(argv)[:160]}", file=sys.stderr)
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build", "release", "classify"))
    parser.add_argument("--realdata", default=os.environ.get("ONDEVICEML_REALDATA")
                        or os.path.join(ROOT, "..", "shared", "realdata"))
    parser.add_argument("--keep", help="keep each fold's weights in this folder (default: deleted)")
    parser.add_argument("train", nargs=argparse.REMAINDER, help="-- then the options of classify train shape")
    args = parser.parse_args()
    train = args.train[1:] if args.train[:1] == ["--"] else args.train
    if not train or "--out" in train:
        parser.error("give the recipe's classify train shape options after --, without --out")
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    if not os.path.isdir(args.realdata):
        print(f"skipped: no {args.realdata} (the real-data folder)")
        return 0
    data = [train[i + 1] for i, word in enumerate(train[:-1]) if word == "--data"]
    folded = {dev: copy for dev, copy in DEV.items() if copy in data}
    if not folded:
        sys.exit(f"error: none of {', '.join(DEV.values())} is a --data file of the recipe: no k-fold needed")

    dev = {name: drawings(os.path.join(args.realdata, name)) for name in folded}
    answers = {}  # drawing -> answer
    with tempfile.TemporaryDirectory(prefix="shape-kfold-") as tmp:
        for fold in range(args.folds):
            held = {name: {d for i, d in enumerate(order) if i % args.folds == fold} for name, (order, _) in dev.items()}
            argv = list(train)
            for name, copy in folded.items():
                reduced = os.path.join(tmp, f"fold{fold}-{os.path.basename(copy)}")
                copy_rows(os.path.join(ROOT, copy), reduced, lambda drawing, held=held[name]: drawing not in held)
                argv[argv.index(copy)] = reduced
            out = os.path.join(args.keep or tmp, f"fold{fold}")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
            run([args.classify, "train", "shape"] + argv + ["--out", out])
            weights = out + ".int8.weights" if os.path.exists(out + ".int8.weights") else out + ".f32.weights"
            for name in folded:
                questions = os.path.join(tmp, f"fold{fold}-questions-{name}")
                copy_rows(os.path.join(args.realdata, name), questions, held[name].__contains__)
                for line in run([args.classify, "shape", "--dataset", questions, "--weights", weights, "--json"]).splitlines():
                    answer = json.loads(line)
                    answers[answer["input"].rsplit("#", 1)[-1]] = answer

    print(f"## Quick, Draw! figures by {args.folds}-fold over drawings\n")
    print(f"- recipe: `classify train shape {shlex.join(train)}` (each fold: its drawings out of "
          f"{', '.join(folded.values())})")
    print("- right: the label is the drawing's (`unknown` for a non-shape); flagged: `unknown` or uncertain\n")
    print("| file | drawings | right | flagged | confidently a shape | expected calibration error |")
    print("|---|---|---|---|---|---|")
    for name, (order, labels) in dev.items():
        pairs, right, flagged, shaped = [], 0, 0, 0
        for drawing in order:
            answer = answers[drawing]
            truth = labels[drawing]
            correct = answer["label"] == (("unknown" if truth == "other" else truth))
            is_flagged = answer["label"] == "unknown" or answer.get("uncertain", False)
            right += correct
            flagged += is_flagged
            shaped += not is_flagged
            pairs.append((answer["confidence"], correct))
        n = len(order)
        print(f"| {name} | {n} | {100 * right / n:.2f}% ({right}) | {100 * flagged / n:.2f}% ({flagged}) | "
              f"{100 * shaped / n:.2f}% ({shaped}) | {100 * calibration_error(pairs):.2f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
