#!/usr/bin/env python3
"""Which windows of a labelled walking/running file are mostly a person standing, and what the model answers on
them (issue 48): a trial labelled `walking` often starts, or pauses, with the person standing, and the model's
windows (5.12 s, every 1.28 s) that hold mostly standing are `still` by the product's own rule ("a window is `still`
only when the person is not going anywhere for most of it").

    scripts/motion_standing_windows.py [--weights W] [--file motion-motionsense-dev.csv] [--realdata DIR]

A window is "mostly standing" when fewer than half of its ten half-seconds have a vertical user acceleration whose
standard deviation exceeds 0.2 g (walking holds 0.35–0.6 g a second on these recordings, standing under 0.2 g). The
vertical signal is Core Motion's userAcceleration along gravity, at the file's 50 Hz, windows as the shipped
windowing lays them (256 samples, hop 64). Each session is answered by `classify motion --json` (with --weights W,
or the shipped weights), one window for one window.

Prints the accuracy on all windows, on mostly-moving windows and on mostly-standing ones, and lists the
mostly-standing windows with the model's answer. Needs numpy; only Core Motion files (MotionSense) are read.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WINDOW, HOP, HALF = 256, 64, 25


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights")
    parser.add_argument("--file", default="motion-motionsense-dev.csv")
    parser.add_argument("--realdata", default=os.environ.get("ONDEVICEML_REALDATA") or os.path.join(ROOT, "..", "shared", "realdata"))
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build", "release", "classify"))
    args = parser.parse_args()
    path = args.file if os.path.isfile(args.file) else os.path.join(args.realdata, args.file)
    if not os.path.isfile(path):
        print(f"skipped: {path}: no such file", file=sys.stderr)
        return 0
    sessions, order = {}, []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        for row in reader:
            if row["session"] not in sessions:
                order.append(row["session"])
            sessions.setdefault(row["session"], []).append(row)
    counts = {"moving": [0, 0], "standing": [0, 0]}  # right, total
    listed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in order:
            rows = sessions[name]
            label = rows[0]["label"]
            g = np.array([[float(r[f"gravity.{a}"]) for a in "xyz"] for r in rows])
            u = np.array([[float(r[f"userAcceleration.{a}"]) for a in "xyz"] for r in rows])
            vertical = (u * g / np.linalg.norm(g, axis=1, keepdims=True)).sum(axis=1)
            one = os.path.join(tmp, "session.csv")
            with open(one, "w", newline="") as f:
                writer = csv.DictWriter(f, header, lineterminator="\n")
                writer.writeheader()
                writer.writerows(rows)
            argv = [args.classify, "motion", one, "--json"] + (["--weights", args.weights] if args.weights else [])
            done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
            if done.returncode != 0:
                sys.exit(f"error: exit {done.returncode} from {' '.join(argv)}: {done.stderr.strip()}")
            windows = json.loads(done.stdout)["windows"]
            for index, window in enumerate(windows):
                start = index * HOP
                halves = [vertical[start + k * HALF:start + (k + 1) * HALF].std() for k in range(WINDOW // HALF)]
                moving = sum(h > 0.2 for h in halves) / len(halves)
                kind = "moving" if moving >= 0.5 else "standing"
                counts[kind][0] += window["label"] == label
                counts[kind][1] += 1
                if kind == "standing":
                    listed.append(f"{name} window {index} ({window['start']:.2f}–{window['end']:.2f} s, {moving:.0%} moving): "
                                  f"{window['label']} {100 * window['confidence']:.1f}%")
    total = [counts["moving"][i] + counts["standing"][i] for i in (0, 1)]
    print(f"## {os.path.basename(path)}, weights {args.weights or 'shipped'}\n")
    print("| windows | right | count |\n|---|---|---|")
    for kind, (right, n) in [("all", total)] + list(counts.items()):
        print(f"| {kind} | {100 * right / max(1, n):.2f}% | {right}/{n} |")
    print("\nMostly standing:")
    for line in listed:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
