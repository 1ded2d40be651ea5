#!/usr/bin/env python3
"""Copies the real drawings and recordings whose licence lets them train (Quick, Draw! and WISDM: CC BY 4.0;
Omniglot: MIT) from ../shared/realdata into Datasets/real/, held-out people left out (issue 32).

    scripts/realdata_import.py [--realdata ../shared/realdata] [--out Datasets/real]

What goes in, and what stays out for validation (Datasets/README.md says the same):
- shapes-quickdraw.csv: every drawing of shapes-quickdraw-dev.csv (92 circles, squares, triangles and stars). The
  file is the only real set of Quick, Draw! shapes: a model that trains on it reports it by k-fold over drawings.
- shapes-other-quickdraw.csv: the drawings of shapes-other-quickdraw-dev.csv (lines, zigzags, moons, clouds), the
  same way, but the 4 moons drawn as a plain circle or ellipse (QUICKDRAW_SHAPE_DRAWINGS).
- shapes-other-quickdraw-objects.csv: shapes-other-quickdraw-objects-train.csv but its 14 drawings that are a plain
  shape as drawn (QUICKDRAW_SHAPE_DRAWINGS); the objects dev file (other drawings of the same categories) stays out
  and validates.
- shapes-other-omniglot.csv: Omniglot drawers 1–15 of every character but the ones a person calls a plain shape
  (OMNIGLOT_SHAPES: circles and ellipses, and sigma, looked at drawing by drawing) and single drawings that are one
  (OMNIGLOT_SHAPE_DRAWINGS); drawers 16–20 stay out and validate.
- shapes-omniglot-circles.csv: drawers 1–15 of the characters that are circles (OMNIGLOT_CIRCLES), labelled `circle`.
- omniglot-left-out.json: the Omniglot characters and single drawings left out as plain shapes, with why (the
  real-data figures and tests leave them out too).
- motion-wisdm-watch.csv, motion-wisdm-watch-stairs.csv: every WISDM watch subject, 1600–1624 (issue 48: until
  then 1600–1611, with 1612–1624 left out to validate); a recipe is measured on people who did not train it by
  k-fold over people (scripts/motion_kfold.py leaves each fold's people out of every file here).
- motion-wisdm-watch-transitions.csv: per subject, standing still then walking, standing then running, and each the
  other way round (1.5–4 s of standing, 20 s of the gait, drawn from TRANSITION_SEED), labelled with the gait: a
  window with steps in it is walking or running, and a live feed must not show a brief `walking` between standing
  and running (issue 48). Sessions are named w<subject>-<gait>-<order> so that the k-fold finds their person.
The $1 and MotionSense files are validation only and are never read here.

Only the columns that train are kept (drawing,label,stroke,x,y,t; session,label,timestamp,acc.x,acc.y,acc.z), and
only the digits that matter: coordinates to 0.1 px (Omniglot's to 0.01 of its ~100-unit box, as given), times to
1 ms or 0.01 s, accelerations to 0.001 m/s² (a thousandth of the sensor's noise). The output is the same bytes for
the same input; each file is written whole to a temporary name and then renamed.
"""
import argparse
import csv
import io
import json
import os
import random
import sys

# Omniglot characters that are a plain shape to a person, looked at drawing by drawing (a grid of all 20 drawers
# of each): each is a circle or an ellipse for most drawers. Letters with a loop (Latin a, d, q; Greek σ) stay
# `other`: a recognizer must not call them circles.
OMNIGLOT_SHAPES = {
    ("Early_Aramaic", "character09"): "a circle",
    ("Early_Aramaic", "character16"): "a circle",
    ("Early_Aramaic", "character19"): "a flat ellipse (a circle) for 14 of 20 drawers, a bar for the others",
    ("Greek", "character08"): "an upright ellipse",
    ("Greek", "character15"): "a circle (omicron)",
    ("Korean", "character33"): "a circle (ieung)",
    ("Latin", "character15"): "a circle (O)",
    ("Greek", "character18"): "a circle with a short tail at its top (sigma), for most drawers: as real circles drawn "
                              "fast end ($1's s02 circles); as `other` it taught the reject class to take them",
}
# Of those, the characters trained as what they are: `circle` (drawers 1-15, in shapes-omniglot-circles.csv). Early
# Aramaic character19 (a bar for 6 of 20 drawers) and sigma (a circle with a tail, not quite one) train as neither.
OMNIGLOT_CIRCLES = {key for key in OMNIGLOT_SHAPES if key not in {("Early_Aramaic", "character19"), ("Greek", "character18")}}
# Single drawings of a character that are a plain shape where the character is not: Korean character40 is a
# horizontal bar (eu), and these four drawers drew a closed loop instead.
OMNIGLOT_SHAPE_DRAWINGS = {
    "omni-Korean-character40-02", "omni-Korean-character40-04", "omni-Korean-character40-07", "omni-Korean-character40-09",
    # Latin a, b, d, g, p, q drawn as a closed loop alone, without the stem (a circle to a person); found among the
    # training drawers' drawings that a model trained on generated drawings alone called a shape, each looked at.
    "omni-Latin-character01-08", "omni-Latin-character01-10", "omni-Latin-character01-11", "omni-Latin-character01-12",
    "omni-Latin-character01-14", "omni-Latin-character02-12", "omni-Latin-character02-14", "omni-Latin-character04-12",
    "omni-Latin-character04-13", "omni-Latin-character04-14", "omni-Latin-character07-10", "omni-Latin-character07-11",
    "omni-Latin-character16-14", "omni-Latin-character17-08", "omni-Latin-character17-10", "omni-Latin-character17-11",
    "omni-Latin-character17-12", "omni-Latin-character17-13", "omni-Latin-character17-14",
}
# Quick, Draw! drawings of objects, moons and clouds that are a plain shape as drawn (a potato drawn as an ellipse, a
# moon as a full circle, a skyscraper as a bare rectangle), found and looked at the same way: left out of the
# `other` training files (the dev files keep them, and the figures count them).
QUICKDRAW_SHAPE_DRAWINGS = {
    "qdo-bird-28", "qdo-canoe-16", "qdo-flip_flops-14", "qdo-hockey_puck-23", "qdo-nose-35", "qdo-peanut-23",
    "qdo-peanut-39", "qdo-potato-20", "qdo-potato-22", "qdo-potato-29", "qdo-potato-32", "qdo-potato-35",
    "qdo-spreadsheet-12", "qdo-skyscraper-38",
    "qd-moon-001", "qd-moon-010", "qd-moon-034", "qd-moon-035",
}
OMNIGLOT_TRAIN_DRAWERS = range(1, 16)
WISDM_TRAIN_SUBJECTS = range(1600, 1625)
TRANSITION_SEED = 48

SHAPE_COLUMNS = ["drawing", "label", "stroke", "x", "y", "t"]
MOTION_COLUMNS = ["session", "label", "timestamp", "acc.x", "acc.y", "acc.z"]


def number(text, digits):
    """`text` rounded to `digits` decimals, without trailing zeros ("12.30" → "12.3", "-0.0" → "0")."""
    value = round(float(text), digits)
    shown = f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else str(int(value))
    return "0" if shown in ("-0", "") else shown


def rows(path):
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        for line, row in enumerate(reader, start=2):
            yield line, row


def write(out, name, header, records):
    """Writes `records` (lists of fields) under `header` to OUT/NAME atomically; returns the count of data rows."""
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    count = 0
    for record in records:
        writer.writerow(record)
        count += 1
    path = os.path.join(out, name)
    temporary = f"{path}.partial-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8", newline="") as file:
        file.write(text.getvalue())
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    return count


def shapes(path, digits, keep=lambda row: True):
    """The kept drawings of `path`, each whole (its rows are contiguous); a drawing whose points are all at one
    place (a dot: nothing a recognizer or its training can use, and refused by both) is left out, in `skipped`."""
    drawing, pending = None, []
    for line, row in rows(path):
        if not keep(row):
            continue
        try:
            record = [row["drawing"], row["label"], str(int(row["stroke"])), number(row["x"], digits), number(row["y"], digits),
                      number(row["t"], 0)]
        except (KeyError, ValueError) as error:
            sys.exit(f"error: {path}:{line}: {error}")
        if record[0] != drawing:
            yield from flush(pending)
            drawing, pending = record[0], []
        pending.append(record)
    yield from flush(pending)


skipped = []


def flush(records):
    if len({(record[3], record[4]) for record in records}) >= 2:
        yield from records
    elif records:
        skipped.append(records[0][0])


def motion(path, keep):
    for line, row in rows(path):
        if not keep(row):
            continue
        try:
            yield [row["session"], row["label"], number(row["timestamp"], 2)] + [number(row[c], 3) for c in MOTION_COLUMNS[3:]]
        except (KeyError, ValueError) as error:
            sys.exit(f"error: {path}:{line}: {error}")


def transitions(path, keep):
    """The spliced sessions of motion-wisdm-watch-transitions.csv, from the watch file's rows (20 Hz)."""
    sessions = {}
    for record in motion(path, keep):
        sessions.setdefault(record[0], []).append(record)
    draw = random.Random(TRANSITION_SEED)
    for subject in sorted({name[1:5] for name in sessions}):
        still = sessions.get(f"w{subject}-E") or sessions.get(f"w{subject}-D")
        for activity, label in (("A", "walking"), ("B", "running")):
            gait = sessions.get(f"w{subject}-{activity}")
            if not still or not gait:
                continue
            stand = int(draw.uniform(1.5, 4) * 20)
            for order, rows in (("after-standing", still[:stand] + gait[:400]), ("before-standing", gait[:400] + still[:stand])):
                for k, row in enumerate(rows):
                    yield [f"w{subject}-{label}-{order}", label, number(str(k / 20), 2)] + row[3:]


def omniglot_keeps(row):
    drawer = int(row["drawer"])
    return (drawer in OMNIGLOT_TRAIN_DRAWERS and (row["alphabet"], row["character"]) not in OMNIGLOT_SHAPES
            and row["drawing"] not in OMNIGLOT_SHAPE_DRAWINGS)


def omniglot_circle(row):
    """The training drawers' drawings of the characters that are circles, relabelled `circle`."""
    if int(row["drawer"]) in OMNIGLOT_TRAIN_DRAWERS and (row["alphabet"], row["character"]) in OMNIGLOT_CIRCLES:
        row["label"] = "circle"
        return True
    return False


def quickdraw_keeps(row):
    return row["drawing"] not in QUICKDRAW_SHAPE_DRAWINGS


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realdata", default=os.path.join(root, "..", "shared", "realdata"))
    parser.add_argument("--out", default=os.path.join(root, "Datasets", "real"))
    arguments = parser.parse_args()
    source = lambda name: os.path.join(arguments.realdata, name)
    if not os.path.isdir(arguments.realdata):
        sys.exit(f"error: {arguments.realdata}: no such folder (../shared/realdata; see its README)")
    sources = ["shapes-quickdraw-dev.csv", "shapes-other-quickdraw-dev.csv", "shapes-other-quickdraw-objects-train.csv",
               "shapes-other-omniglot-train.csv", "motion-wisdm-watch-dev.csv", "motion-wisdm-watch-stairs-dev.csv"]
    missing = [name for name in sources if not os.path.isfile(source(name))]
    if missing:
        # Checked before anything is written, so a partial folder never leaves a partial Datasets/real.
        print(f"error: {arguments.realdata}: no {', '.join(missing)} (see ../shared/realdata/README.md)", file=sys.stderr)
        sys.exit(66)
    os.makedirs(arguments.out, exist_ok=True)
    subject = lambda row: int(row["subject"]) in WISDM_TRAIN_SUBJECTS
    made = [
        ("shapes-quickdraw.csv", SHAPE_COLUMNS, shapes(source("shapes-quickdraw-dev.csv"), 1)),
        ("shapes-other-quickdraw.csv", SHAPE_COLUMNS, shapes(source("shapes-other-quickdraw-dev.csv"), 1, quickdraw_keeps)),
        ("shapes-other-quickdraw-objects.csv", SHAPE_COLUMNS,
         shapes(source("shapes-other-quickdraw-objects-train.csv"), 1, quickdraw_keeps)),
        ("shapes-other-omniglot.csv", SHAPE_COLUMNS, shapes(source("shapes-other-omniglot-train.csv"), 2, omniglot_keeps)),
        ("shapes-omniglot-circles.csv", SHAPE_COLUMNS, shapes(source("shapes-other-omniglot-train.csv"), 2, omniglot_circle)),
        ("motion-wisdm-watch.csv", MOTION_COLUMNS, motion(source("motion-wisdm-watch-dev.csv"), subject)),
        ("motion-wisdm-watch-stairs.csv", MOTION_COLUMNS, motion(source("motion-wisdm-watch-stairs-dev.csv"), subject)),
        ("motion-wisdm-watch-transitions.csv", MOTION_COLUMNS, transitions(source("motion-wisdm-watch-dev.csv"), subject)),
    ]
    for name, header, records in made:
        count = write(arguments.out, name, header, records)
        size = os.path.getsize(os.path.join(arguments.out, name))
        print(f"wrote {os.path.relpath(os.path.join(arguments.out, name))}: {count} rows, {size} bytes")
    # What the Omniglot figures leave out (the tests read it): the characters that are plain shapes and the single
    # drawings that are one, with why.
    left_out = {
        "characters": [{"alphabet": a, "character": c, "why": why} for (a, c), why in sorted(OMNIGLOT_SHAPES.items())],
        "drawings": sorted(OMNIGLOT_SHAPE_DRAWINGS),
        "trainDrawers": [OMNIGLOT_TRAIN_DRAWERS.start, OMNIGLOT_TRAIN_DRAWERS.stop - 1],
    }
    text = json.dumps(left_out, indent=1, ensure_ascii=False) + "\n"
    path = os.path.join(arguments.out, "omniglot-left-out.json")
    with open(f"{path}.partial-{os.getpid()}", "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(f"{path}.partial-{os.getpid()}", path)
    print(f"wrote {os.path.relpath(path)}: {len(OMNIGLOT_SHAPES)} characters, {len(OMNIGLOT_SHAPE_DRAWINGS)} drawings")
    if skipped:
        print(f"left out {len(skipped)} drawings whose points are all at one place: {', '.join(skipped)}")


if __name__ == "__main__":
    main()
