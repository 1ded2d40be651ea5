#!/usr/bin/env python3
"""What tells running from walking on a wrist, measured on the WISDM watch recordings (issue 48): per person and
activity, the medians over 5.12 s windows of what the motion model's input holds, computed the way it computes them
(gravity by a 0.3 Hz low-pass filter, user acceleration along it and across it, each window's mean removed):

- stride rate (Hz): the highest autocorrelation peak of the vertical signal at a period of 1/1.8–1/0.6 s, and how
  strongly it repeats there (the autocorrelation's value);
- vertical standard deviation and horizontal mean (g): the model's two intensities;
- clipped: the share of samples with an axis at the sensor's limit (|a| ≥ 19.5 m/s²: the watch's ±2 g range).

    scripts/wrist_gait.py [--realdata DIR] [--file motion-wisdm-watch-dev.csv]

Prints one Markdown table: per activity, the median over people of each figure, its range over people, and the
number of people whose walking and running windows overlap on it (the walking median above the running one's
10th percentile). Needs numpy. A record for docs/motion.md, not part of any test.
"""
import argparse
import csv
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE, WINDOW, HOP, G = 20.0, 102, 26, 9.80665  # 5.12 s windows and 1.28 s hops at the recording's 20 Hz


def sessions(path):
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["subject"]), row["label"], row["session"])
            out.setdefault(key, []).append([float(row["acc.x"]), float(row["acc.y"]), float(row["acc.z"])])
    return {k: np.array(v) for k, v in out.items()}


def windows(acc):
    """Per window: stride rate, its strength, vertical SD, horizontal mean, clipped share."""
    clipped = (np.abs(acc) >= 19.5).any(axis=1)
    a = acc / G
    alpha = 1 - np.exp(-2 * np.pi * 0.3 / RATE)
    gravity = np.empty_like(a)
    gravity[0] = a[:20].mean(axis=0)
    for i in range(1, len(a)):
        gravity[i] = gravity[i - 1] + alpha * (a[i] - gravity[i - 1])
    user = a - gravity
    unit = gravity / np.maximum(np.linalg.norm(gravity, axis=1, keepdims=True), 1e-9)
    vertical = (user * unit).sum(axis=1)
    horizontal = np.sqrt(np.maximum(0, (user * user).sum(axis=1) - vertical ** 2))
    rows = []
    shortest, longest = int(np.ceil(RATE / 1.8)), int(RATE / 0.6)
    for start in range(0, len(a) - WINDOW + 1, HOP):
        v = vertical[start:start + WINDOW] - vertical[start:start + WINDOW].mean()
        energy = (v * v).sum()
        ac = np.array([(v[:-lag] * v[lag:]).sum() / energy if energy > 0 else 0 for lag in range(1, longest + 2)])
        peaks = [lag for lag in range(shortest, longest + 1) if ac[lag - 1] >= ac[lag - 2] and ac[lag - 1] >= ac[lag]]
        best = max(peaks, key=lambda lag: ac[lag - 1]) if peaks else None
        rows.append((RATE / best if best else np.nan, ac[best - 1] if best else np.nan, v.std(),
                     horizontal[start:start + WINDOW].mean(), clipped[start:start + WINDOW].mean()))
    return np.array(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realdata", default=os.environ.get("ONDEVICEML_REALDATA") or os.path.join(ROOT, "..", "shared", "realdata"))
    parser.add_argument("--file", default="motion-wisdm-watch-dev.csv")
    args = parser.parse_args()
    path = os.path.join(args.realdata, args.file)
    if not os.path.isfile(path):
        print(f"skipped: {path}: no such file", file=sys.stderr)
        return 0
    per = {}  # (subject, label) -> window rows
    for (subject, label, _), acc in sessions(path).items():
        rows = windows(acc)
        per[(subject, label)] = np.vstack([per[(subject, label)], rows]) if (subject, label) in per else rows
    names = ["stride rate (Hz)", "repeats (autocorrelation)", "vertical SD (g)", "horizontal mean (g)", "clipped"]
    labels = ["walking", "running", "still"]
    people = sorted({s for s, _ in per})
    print(f"## {args.file}: {len(people)} people, medians over 5.12 s windows\n")
    print("| figure | " + " | ".join(f"{l}: median of people (range)" for l in labels) + " | people whose walking reaches their running |")
    print("|---|" + "---|" * (len(labels) + 1))
    for k, name in enumerate(names):
        cells = []
        for label in labels:
            medians = [np.nanmedian(per[(s, label)][:, k]) for s in people if (s, label) in per]
            cells.append(f"{np.median(medians):.3g} ({min(medians):.3g}–{max(medians):.3g})")
        overlap = 0
        for s in people:
            if (s, "walking") in per and (s, "running") in per:
                walk, run = per[(s, "walking")][:, k], per[(s, "running")][:, k]
                # walking's median at or beyond running's 10th percentile (90th where running is lower)
                if np.nanmedian(run) >= np.nanmedian(walk):
                    overlap += np.nanmedian(walk) >= np.nanpercentile(run, 10)
                else:
                    overlap += np.nanmedian(walk) <= np.nanpercentile(run, 90)
        print(f"| {name} | " + " | ".join(cells) + f" | {overlap} of {len(people)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
