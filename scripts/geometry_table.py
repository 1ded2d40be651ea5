#!/usr/bin/env python3
"""The fitted-geometry table: exact shapes in, fitted parameters out, through `classify serve`'s API.

For each class, exact outlines (200 points) turned by 7 angles and stretched 1x and 1.4x go to POST /v1/shape; the
table gives the largest error of the recovered parameters, as a share of the shape's larger side. Then 20 drawings a
class with a smooth random wobble of 1%, 3% and 6% of the size (RMS) give the mean neatness (and how many kept their
label). Last, drawings as people sketch them (issue 52): one stroke per side running past its corners, a rhombus, a
long rectangle, a star of five lines, a six-pointed star; each 10 times at random turns with a 1% wobble, giving the
answers, the fitted kinds, the corners' largest error and the neatness.
  scripts/geometry_table.py [--classify .build/release/classify]
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def along(corners, count=200):
    """About `count` points along the closed polygon `corners`, evenly on each side, every corner among them."""
    sides = list(zip(corners, corners[1:] + corners[:1]))
    total = sum(math.dist(a, b) for a, b in sides)
    points = []
    for a, b in sides:
        steps = max(1, round(count * math.dist(a, b) / total))
        points += [(a[0] + (b[0] - a[0]) * i / steps, a[1] + (b[1] - a[1]) * i / steps) for i in range(steps)]
    return points + [corners[0]]


def crossing(p, q, r, s):
    """Where line pq meets line rs."""
    d = (q[0] - p[0]) * (s[1] - r[1]) - (q[1] - p[1]) * (s[0] - r[0])
    t = ((r[0] - p[0]) * (s[1] - r[1]) - (r[1] - p[1]) * (s[0] - r[0])) / d
    return (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t)


def wobble(points, share, rng):
    """`points` moved by a smooth random wobble (white noise averaged over 15 neighbours along the outline) whose RMS
    is `share` of the drawing's size in each axis: a hand's unsteadiness rather than a scatter of dots."""
    size, n = size_of(points), len(points)
    moved = []
    for axis in (0, 1):
        white = [rng.gauss(0, 1) for _ in range(n)]
        smooth = [sum(white[(i + k) % n] for k in range(-7, 8)) for i in range(n)]
        scale = share * size / math.sqrt(sum(v * v for v in smooth) / n)
        moved.append([p[axis] + v * scale for p, v in zip(points, smooth)])
    return list(zip(*moved))


def shape(label, turn, stretch):
    """The exact outline (points), and the true parameters: centre, and corners or radii."""
    c, r = (400.0, 300.0), 100.0
    def place(x, y):
        x *= stretch
        return (c[0] + x * math.cos(turn) - y * math.sin(turn), c[1] + x * math.sin(turn) + y * math.cos(turn))
    if label == "circle":
        points = [place(r * math.cos(2 * math.pi * i / 200), r * math.sin(2 * math.pi * i / 200)) for i in range(201)]
        return points, {"centre": c, "radii": sorted([r * stretch, r])}
    if label == "square":
        corners = [place(x, y) for x, y in [(-r, -r), (r, -r), (r, r), (-r, r)]]
    elif label == "triangle":
        corners = [place(r * math.cos(a), r * math.sin(a)) for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)]
    else:
        tips = [place(r * math.cos(-math.pi / 2 + 2 * math.pi * k / 5), r * math.sin(-math.pi / 2 + 2 * math.pi * k / 5)) for k in range(5)]
        order = [tips[(2 * k) % 5] for k in range(5)]
        return along(order), {"centre": c, "corners": tips}
    return along(corners), {"centre": c, "corners": corners}


def size_of(points):
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return max(max(xs) - min(xs), max(ys) - min(ys))


def errors(fitted, truth, size):
    """The largest error of each recovered parameter, as a share of `size`."""
    out = {}
    if "centre" in fitted and "centre" in truth:
        out["centre"] = math.dist(fitted["centre"], truth["centre"]) / size
    if "radii" in truth:
        out["radii"] = max(abs(a - b) for a, b in zip(sorted(fitted["radii"]), truth["radii"])) / size
    if "corners" in truth:
        found = fitted.get("corners") or fitted["points"][0::2]
        out["corners"] = max(min(math.dist(t, f) for f in found) for t in truth["corners"]) / size
    if fitted["shape"] == "star":
        # The true inner points: where the chord from each tip to the tip two on meets the next such chord.
        tips = truth["corners"]
        chords = [(tips[k], tips[(k + 2) % 5]) for k in range(5)]
        inner = [crossing(*chords[k], *chords[(k + 1) % 5]) for k in range(5)]
        found = fitted["points"][1::2]
        out["inner points"] = max(min(math.dist(t, f) for f in found) for t in inner) / size
    return out


def strokes_of(corners, overshoot, rng):
    """One straight stroke per side of the closed polygon `corners`, each running `overshoot` (a share of its side)
    past both corners, with a 1% wobble."""
    strokes = []
    for a, b in zip(corners, corners[1:] + corners[:1]):
        line = [(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
                for t in [-overshoot + (1 + 2 * overshoot) * k / 40 for k in range(41)]]
        strokes.append(wobble(line, 0.01, rng))
    return strokes


def sketches(ask, rng):
    """The sketch table: each case 10 times at random turns."""
    def turned(points, turn):
        return [(400 + x * math.cos(turn) - y * math.sin(turn), 300 + x * math.sin(turn) + y * math.cos(turn)) for x, y in points]
    square = [(-100, -100), (100, -100), (100, 100), (-100, 100)]
    star = [(100 * math.cos(-math.pi / 2 + 4 * math.pi * k / 5), 100 * math.sin(-math.pi / 2 + 4 * math.pi * k / 5)) for k in range(5)]
    six = [(100 * math.cos(math.pi * k / 3), 100 * math.sin(math.pi * k / 3)) for k in range(6)]
    cases = [
        ("square, 4 strokes, 4% overshoot", square, lambda c: strokes_of(c, 0.04, rng)),
        ("square, 4 strokes, 8% overshoot", square, lambda c: strokes_of(c, 0.08, rng)),
        ("square, 4 strokes, 12% overshoot", square, lambda c: strokes_of(c, 0.12, rng)),
        ("triangle, 3 strokes, 8% overshoot", [(0, -100), (87, 50), (-87, 50)], lambda c: strokes_of(c, 0.08, rng)),
        ("rhombus (diagonals 2:1), one stroke", [(-150, 0), (0, -75), (150, 0), (0, 75)], lambda c: [wobble(along(c), 0.01, rng)]),
        ("rectangle 2:1, one stroke", [(-150, -75), (150, -75), (150, 75), (-150, 75)], lambda c: [wobble(along(c), 0.01, rng)]),
        ("star, 5 strokes (its lines), 5% overshoot", star, lambda c: strokes_of(c, 0.05, rng)),
        ("six-pointed star, two triangles", six, lambda c: [wobble(along(c[0::2]), 0.01, rng), wobble(along(c[1::2]), 0.01, rng)]),
    ]
    print("| drawing (10 at random turns, 1% wobble) | answers | fitted | corners' largest error | neatness (mean, min) |")
    print("|---|---|---|---|---|")
    for name, corners, draw in cases:
        labels, kinds, worst, neat = {}, {}, 0.0, []
        for _ in range(10):
            truth = turned(corners, rng.uniform(0, 2 * math.pi))
            strokes = draw(truth)
            answer = ask(None, strokes)
            labels[answer["label"]] = labels.get(answer["label"], 0) + 1
            fitted = answer.get("fitted")
            kind = fitted["shape"] if fitted else "none"
            kinds[kind] = kinds.get(kind, 0) + 1
            if fitted and ("corners" in fitted or "points" in fitted) and name.split(",")[0] != "six-pointed star":
                found = fitted.get("corners") or fitted["points"][0::2]
                worst = max(worst, max(min(math.dist(t, f) for f in found) for t in truth) / size_of(truth))
            if fitted:
                neat.append(fitted["neatness"])
        def tally(counts):
            return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        neatness = f"{100 * sum(neat) / len(neat):.1f}%, {100 * min(neat):.1f}%" if neat else "none shown"
        error = f"{100 * worst:.1f}%" if neat and worst > 0 else "–"
        print(f"| {name} | {tally(labels)} | {tally(kinds)} | {error} | {neatness} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build/release/classify"))
    args = parser.parse_args()
    server = subprocess.Popen([args.classify, "serve", "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    base = re.search(r"(http://[^/ ]+)/", server.stdout.readline()).group(1)

    def ask(points, strokes=None):
        strokes = strokes if strokes is not None else [points]
        body = json.dumps({"strokes": [[[round(x, 4), round(y, 4)] for x, y in stroke] for stroke in strokes]}).encode()
        request = urllib.request.Request(base + "/v1/shape", body, {"Content-Type": "application/json"})
        return json.load(urllib.request.urlopen(request))

    try:
        print("| class | shapes | label kept | largest error (share of size) | neatness |")
        print("|---|---|---|---|---|")
        for label in ["circle", "triangle", "square", "star"]:
            worst, kept, neat = {}, 0, []
            cases = [(k * math.pi / 7 + 0.05, s) for k in range(7) for s in (1.0, 1.4)]
            for turn, stretch in cases:
                points, truth = shape(label, turn, stretch)
                answer = ask(points)
                if answer.get("label") != label or "fitted" not in answer:
                    continue
                kept += 1
                neat.append(answer["fitted"]["neatness"])
                for name, value in errors(answer["fitted"], truth, size_of(points)).items():
                    worst[name] = max(worst.get(name, 0), value)
            text = ", ".join(f"{name} {100 * value:.2f}%" for name, value in worst.items())
            print(f"| {label} | {len(cases)} (7 turns x stretch 1, 1.4) | {kept} | {text} | min {100 * min(neat):.1f}% |")
        print()
        print("| class | wobble 1% | wobble 3% | wobble 6% |")
        print("|---|---|---|---|")
        rng = random.Random(36)
        for label in ["circle", "triangle", "square", "star"]:
            cells = []
            for noise in (0.01, 0.03, 0.06):
                values, kept = [], 0
                for i in range(20):
                    points, _ = shape(label, rng.uniform(0, math.pi), 1.0)
                    answer = ask(wobble(points, noise, rng))
                    if answer.get("label") == label and "fitted" in answer:
                        kept += 1
                        values.append(answer["fitted"]["neatness"])
                mean = sum(values) / len(values) if values else float("nan")
                cells.append(f"{100 * mean:.1f}% ({kept}/20 {label})")
            print(f"| {label} | " + " | ".join(cells) + " |")
        print()
        sketches(ask, random.Random(52))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
