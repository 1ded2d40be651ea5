#!/usr/bin/env python3
"""The WISDM watch figures of a motion recipe by k-fold over people: every window is answered by a model trained
without its person (issue 48: "every figure you report comes from people who did not train it").

    scripts/motion_kfold.py [--folds 5] [--seeds 1,2,3,4,5] [--rates 20,10,26] [--classify PATH]
                            [--realdata DIR] -- TRAIN-OPTIONS...

TRAIN-OPTIONS are those of `classify train motion` for the recipe, exactly as for the shipped model, --out and
--seed left out (each seed of --seeds is trained):

    scripts/motion_kfold.py -- --data Datasets/motion/train.csv --data Datasets/real/motion-wisdm-watch.csv \\
        --data Datasets/real/motion-wisdm-watch-stairs.csv --quantize int8

The 25 WISDM watch people (motion-wisdm-watch-dev.csv and motion-wisdm-watch-stairs-dev.csv, subjects 1600–1624)
are dealt to the folds in order of subject: subject s is in fold (s - 1600) mod FOLDS. For each fold and seed,
every --data file under Datasets/real/ that holds WISDM watch sessions is rewritten to a temporary folder without
the fold's people (sessions are named w<subject>-<activity>), and the recipe trains there. Its int8 weights then
answer the fold's people from the dev files, person by person (`classify evaluate motion --data FILE --json`):
at the recorded 20 Hz and at each other rate of --rates, the same recordings resampled by the script (a lower
rate keeps every k-th sample when 20 is a multiple of it, as a sensor at that rate samples; otherwise each axis
is interpolated linearly at the new times). A recipe whose files hold only some of the people trains on those
minus the fold: the same folds measure every recipe.

Prints one Markdown table per seed set: per rate, the accuracy of each label (running, walking, still; stairs as
walking), running answered `walking`, the worst person's accuracy, the expected calibration error (the bins of
`classify evaluate`, pooled), each as the mean over seeds and the worst seed. With --per-person, each person's
accuracy too. Standard library only; about FOLDS × SEEDS training runs (5–10 s each for the shipped recipe in a
release build on the 2-core machine) and their evaluations. Exit 0 when printed, 1 when a command fails; skips
(exit 0) when the real-data folder is absent.
"""
import argparse
import csv
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBJECTS = range(1600, 1625)
DEV = {"watch": "motion-wisdm-watch-dev.csv", "stairs": "motion-wisdm-watch-stairs-dev.csv"}
AXES = ("acc.x", "acc.y", "acc.z")


def load_import_script():
    """scripts/realdata_import.py as a module: the training copies are written the way it writes them."""
    spec = importlib.util.spec_from_file_location("realdata_import", os.path.join(ROOT, "scripts", "realdata_import.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session_subject(session):
    """The WISDM subject of a session id `w<subject>-<activity>`, or None."""
    if session.startswith("w") and "-" in session:
        head = session[1:].split("-", 1)[0]
        if head.isdigit():
            return int(head)
    return None


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        return reader.fieldnames, list(reader)


def write_rows(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, header, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def resample(rows, rate):
    """The rows of one file's sessions at `rate` Hz (from the recorded 20 Hz), in session order. A rate written with
    a trailing `a` ("10a") averages the samples each new one stands for, as a sensor filtering before it samples does."""
    average = isinstance(rate, str) and rate.endswith("a")
    rate = int(rate[:-1]) if average else int(rate)
    sessions, order = {}, []
    for row in rows:
        if row["session"] not in sessions:
            order.append(row["session"])
        sessions.setdefault(row["session"], []).append(row)
    out = []
    for name in order:
        part = sessions[name]
        times = [float(r["timestamp"]) for r in part]
        if rate == 20:
            out += part
        elif 20 % rate == 0:
            k = 20 // rate
            for start in range(0, len(part) - k + 1, k):
                row = dict(part[start])
                if average:
                    for axis in AXES:
                        row[axis] = f"{sum(float(r[axis]) for r in part[start:start + k]) / k:.6g}"
                out.append(row)
        else:
            k, t, step = 0, times[0], 1 / rate
            while t <= times[-1] + 1e-9:
                while k + 1 < len(times) and times[k + 1] <= t:
                    k += 1
                j = min(k + 1, len(times) - 1)
                f = 0 if j == k else (t - times[k]) / (times[j] - times[k])
                row = dict(part[k])
                row["timestamp"] = f"{t:.4f}"
                for axis in AXES:
                    a, b = float(part[k][axis]), float(part[j][axis])
                    row[axis] = f"{a + f * (b - a):.6g}"
                out.append(row)
                t += step
    return out


class Bins:
    """Reliability bins pooled over evaluations (count, summed confidence, summed right)."""

    def __init__(self):
        self.bins = {}

    def add(self, report):
        for b in report["reliability"]["bins"]:
            key = (b["low"], b["high"])
            count, conf, right = self.bins.get(key, (0, 0.0, 0.0))
            self.bins[key] = (count + b["count"], conf + b["count"] * b["meanConfidence"], right + b["count"] * b["accuracy"])

    def error(self):
        total = sum(c for c, _, _ in self.bins.values())
        return sum(abs(conf - right) for c, conf, right in self.bins.values() if c) / total if total else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--rates", default="20,10,26")
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build", "release", "classify"))
    parser.add_argument("--realdata", default=os.environ.get("ONDEVICEML_REALDATA") or os.path.join(ROOT, "..", "shared", "realdata"))
    parser.add_argument("--per-person", action="store_true")
    parser.add_argument("--keep", help="keep each fold's weights in this folder")
    parser.add_argument("--also", action="append", default=[], metavar="FILE",
                        help="also answer this labelled file (a name in the real-data folder, or a path) with every "
                             "fold's model; repeatable")
    parser.add_argument("train", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    train = args.train[1:] if args.train[:1] == ["--"] else args.train
    if not train or "--out" in train or "--seed" in train:
        parser.error("give the recipe's `classify train motion` options after --, without --out and --seed")
    seeds = [int(s) for s in args.seeds.split(",")]
    rates = [r if r.endswith("a") else int(r) for r in args.rates.split(",")]
    if not os.path.isdir(args.realdata):
        print(f"skipped: {args.realdata}: no real-data folder", file=sys.stderr)
        return 0
    importer = load_import_script()
    dev = {kind: read_rows(os.path.join(args.realdata, name)) for kind, name in DEV.items()}
    fold_of = {s: (s - SUBJECTS.start) % args.folds for s in SUBJECTS}
    started = time.monotonic()

    def run(argv):
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        if done.returncode not in (0, 65):
            sys.stderr.write(done.stderr)
            sys.exit(f"error: exit {done.returncode} from: {' '.join(map(shlex.quote, argv))}")
        return done.stdout

    # results[seed][rate][kind] = {"confusion": {(truth, answer): n}, "bins": Bins, "person": {s: (right, n)}}
    results, also = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        # The held-out people's files, per person and rate, written once.
        person_files = {}
        for kind, (header, rows) in dev.items():
            by_person = {}
            for row in rows:
                by_person.setdefault(int(row["subject"]), []).append(row)
            for subject, part in by_person.items():
                for rate in rates:
                    path = os.path.join(tmp, f"{kind}-{subject}-{rate}hz.csv")
                    write_rows(path, header, resample(part, rate))
                    person_files[(kind, subject, rate)] = path
        for fold in range(args.folds):
            held = {s for s in SUBJECTS if fold_of[s] == fold}
            folder = os.path.join(tmp, f"fold{fold}")
            os.makedirs(folder)
            argv, k = [], 0
            while k < len(train):
                word = train[k]
                argv.append(word)
                if word == "--data" and k + 1 < len(train):
                    path = train[k + 1]
                    full = path if os.path.isabs(path) else os.path.join(ROOT, path)
                    header, rows = read_rows(full)
                    kept = [r for r in rows if session_subject(r["session"]) not in held]
                    if len(kept) != len(rows):
                        path = os.path.join(folder, os.path.basename(full))
                        write_rows(path, header, kept)
                    argv.append(path)
                    k += 1
                k += 1
            for seed in seeds:
                out = os.path.join(folder, f"seed{seed}", "motion-state")
                t0 = time.monotonic()
                run([args.classify, "train", "motion"] + argv + ["--seed", str(seed), "--out", out])
                weights = out + ".int8.weights"
                if not os.path.isfile(weights):
                    weights = out + ".f32.weights"
                print(f"fold {fold} (people {sorted(held)}), seed {seed}: trained in {time.monotonic() - t0:.1f} s",
                      file=sys.stderr)
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    import shutil
                    shutil.copy(weights, os.path.join(args.keep, f"fold{fold}-seed{seed}-{os.path.basename(weights)}"))
                for name in args.also:
                    path = name if os.path.isfile(name) else os.path.join(args.realdata, name)
                    report = json.loads(run([args.classify, "evaluate", "motion", "--data", path, "--weights", weights, "--json"]))
                    also.setdefault(name, []).append(report)
                for (kind, subject, rate), path in person_files.items():
                    if subject not in held:
                        continue
                    report = json.loads(run([args.classify, "evaluate", "motion", "--data", path, "--weights", weights, "--json"]))
                    cell = results.setdefault(seed, {}).setdefault(rate, {}).setdefault(
                        kind, {"confusion": {}, "bins": Bins(), "person": {}})
                    labels = report["labels"]
                    right = 0
                    for i, t in enumerate(labels):
                        for j, a in enumerate(labels):
                            n = report["confusion"][i][j]
                            if n:
                                cell["confusion"][(t, a)] = cell["confusion"].get((t, a), 0) + n
                                if i == j:
                                    right += n
                    cell["bins"].add(report)
                    cell["person"][subject] = (right, report["count"])

    def figures(cell):
        conf = cell["confusion"]
        out = {}
        for label in ("running", "walking", "still"):
            n = sum(v for (t, _), v in conf.items() if t == label)
            if n:
                out[f"{label} right"] = conf.get((label, label), 0) / n
        n_run = sum(v for (t, _), v in conf.items() if t == "running")
        if n_run:
            out["running → walking"] = conf.get(("running", "walking"), 0) / n_run
        out["worst person"] = min(r / n for r, n in cell["person"].values() if n)
        total = sum(conf.values())
        out["all right"] = sum(v for (t, a), v in conf.items() if t == a) / total
        out["calibration error"] = cell["bins"].error()
        return out

    lower_is_better = {"running → walking", "calibration error"}
    print(f"## WISDM watch by person: {args.folds} folds, seeds {args.seeds} ({time.monotonic() - started:.0f} s)\n")
    print(f"Recipe: `classify train motion {' '.join(map(shlex.quote, train))}`\n")
    for kind in ("watch", "stairs"):
        print(f"| {'WISDM watch' if kind == 'watch' else 'WISDM watch stairs (walking)'} | "
              + " | ".join(f"{r} Hz: mean / worst seed" for r in rates) + " |")
        print("|---|" + "---|" * len(rates))
        names = list(figures(results[seeds[0]][rates[0]][kind]).keys())
        for name in names:
            cells = []
            for rate in rates:
                values = [figures(results[s][rate][kind]).get(name) for s in seeds]
                values = [v for v in values if v is not None]
                worst = max(values) if name in lower_is_better else min(values)
                cells.append(f"{100 * sum(values) / len(values):.2f}% / {100 * worst:.2f}%")
            print(f"| {name} | " + " | ".join(cells) + " |")
        print()
        if args.per_person:
            for rate in rates:
                row = []
                for subject in SUBJECTS:
                    values = [results[s][rate][kind]["person"].get(subject) for s in seeds]
                    values = [r / n for r, n in values if n] if all(values) else []
                    if values:
                        row.append(f"{subject} {100 * sum(values) / len(values):.1f}")
                print(f"- {kind} {rate} Hz, per person (mean over seeds): " + ", ".join(row))
            print()
    if also:
        print(f"| other files, each answered by every fold's model ({args.folds} × {len(seeds)}) | accuracy: mean / worst | "
              "calibration error: mean / worst | commonest error |")
        print("|---|---|---|---|")
        for name, reports in also.items():
            accuracy = [r["accuracy"] for r in reports]
            errors = [r["reliability"]["expectedCalibrationError"] for r in reports]
            wrong = {}
            for r in reports:
                for i, t in enumerate(r["labels"]):
                    for j, a in enumerate(r["labels"]):
                        if i != j and r["confusion"][i][j]:
                            wrong[(t, a)] = wrong.get((t, a), 0) + r["confusion"][i][j]
            common = max(wrong.items(), key=lambda kv: kv[1]) if wrong else None
            text = f"{common[0][0]} → {common[0][1]} {100 * common[1] / sum(r['count'] for r in reports):.2f}%" if common else "none"
            print(f"| {os.path.basename(name)} | {100 * sum(accuracy) / len(accuracy):.2f}% / {100 * min(accuracy):.2f}% | "
                  f"{100 * sum(errors) / len(errors):.2f}% / {100 * max(errors):.2f}% | {text} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
