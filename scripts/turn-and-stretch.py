#!/usr/bin/env python3
"""Writes turned and stretched copies of a shape dataset (drawing,label,stroke,x,y), for checking rotation and
stretch invariance with `classify evaluate shape`. Each drawing is turned by a random angle, and (in the second
file) stretched 1.3-1.6x along a random axis; the angles come from Python's random.Random(SEED), so the copies
are the same on every run.

    scripts/turn-and-stretch.py ../shared/realdata/shapes-dollar1-dev.csv /tmp/turned.csv /tmp/stretched.csv
"""
import csv
import math
import random
import sys

if len(sys.argv) not in (4, 5):
    sys.exit("usage: turn-and-stretch.py DATASET TURNED_OUT STRETCHED_OUT [SEED]")
source, turned_path, stretched_path = sys.argv[1:4]
rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else 2026)
drawings = {}
with open(source, newline="") as f:
    for row in csv.DictReader(f):
        drawings.setdefault(row["drawing"], []).append(row)
with open(turned_path, "w") as turned, open(stretched_path, "w") as stretched:
    for out in (turned, stretched):
        out.write("drawing,label,stroke,x,y\n")
    for name, rows in drawings.items():
        angle, factor, axis = rng.uniform(0, 2 * math.pi), rng.uniform(1.3, 1.6), rng.uniform(0, math.pi)
        c, s, ca, sa = math.cos(angle), math.sin(angle), math.cos(axis), math.sin(axis)
        for row in rows:
            x, y = float(row["x"]), float(row["y"])
            turned.write(f"{name},{row['label']},{row['stroke']},{x * c - y * s:.3f},{x * s + y * c:.3f}\n")
            u, v = (x * ca + y * sa) * factor, -x * sa + y * ca
            stretched.write(f"{name},{row['label']},{row['stroke']},{u * ca - v * sa:.3f},{u * sa + v * ca:.3f}\n")
