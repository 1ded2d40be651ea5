#!/usr/bin/env python3
"""Measures every dev-file figure of the "It must show" lists of issues 32 (motion) and 47 (shapes) for the given
weights and prints them as one Markdown table: figure, value, the issue's target, whether it meets it, and the
command behind the figure.
Run it once on the weights before a change and once after, for a before/after table.

    scripts/realdata_figures.py                                   # the shipped weights (./Weights, as classify finds them)
    scripts/realdata_figures.py --weights-shape Weights/shape-classifier.f32.weights \\
                                --weights-motion Weights/motion-state.f32.weights
    scripts/realdata_figures.py --classify /path/to/classify --realdata /path/to/realdata --omniglot-drawers 16-20

Options:
  --classify PATH        the classify binary (default .build/release/classify; a relative path is taken from the
                         current folder, else from the repository root)
  --weights-shape W      passed to every shape command as --weights W (default: none, classify's own lookup)
  --weights-motion W     passed to every motion command as --weights W (default: none)
  --realdata DIR         the real-data folder (default $ONDEVICEML_REALDATA, else ../shared/realdata beside the
                         repository); when it is absent the script prints "skipped: ..." and exits 0
  --omniglot-drawers R   measure Omniglot only on these drawers (e.g. 16-20 or 1,5,9-12): the ones that did not
                         train (default: all 20)
  --tasks T              measure only these tasks: shape, motion or shape,motion (default: both)
  --details              also list, per non-shape file, the categories most often taken confidently for a shape

Everything goes through the classify CLI as a user runs it, from the repository root (so ./Weights is found as in
the README): `classify evaluate shape|motion --data FILE --json` for accuracy, confusion, uncertain counts and the
expected calibration error (`reliability.expectedCalibrationError`, the number `evaluate` prints as "expected
calibration error"), and `classify shape --dataset FILE --json` (one answer per drawing) for the flagged shares:
a drawing is flagged when its answer is `unknown` or `uncertain: true`; "confidently a shape" is the rest. Shape
accuracy ("right") is evaluate's accuracy: the label is right, uncertain or not. Motion figures are per window.

Files (read from the real-data folder, never copied into the repository; derived files go to a temporary folder,
shown as $TMP in the commands, and are deleted at the end):
  $1 shapes          shapes-dollar1-dev.csv, upright and turned/stretched by scripts/turn-and-stretch.py (seed 2026)
  Quick, Draw!       shapes-quickdraw-dev.csv
  MMG                shapes-mmg-star-dev.csv (stars by 10 people) and shapes-other-mmg-dev.csv (their letters and
                     symbols; D and P each on their own row)
  non-shapes         shapes-other-quickdraw-dev.csv (lines, moons, clouds), shapes-other-quickdraw-objects-dev.csv,
                     shapes-other-dollar1-dev.csv ($1 gestures), shapes-other-omniglot-train.csv (per alphabet too;
                     its drawings of a single point cannot be classified and are left out, as evaluate does);
                     shapes-other-quickdraw-objects-train.csv too when present, without a target (it may train)
  MotionSense        motion-motionsense-dev.csv (walk/run), -still-dev.csv (sitting/standing), -stairs-dev.csv
  WISDM watch        motion-wisdm-watch-dev.csv and motion-wisdm-watch-stairs-dev.csv, whole and without a target:
                     since issue 48 all 25 people train the shipped model, so their figures by person come from
                     scripts/motion_kfold.py (k-fold over people)
  weights sizes      the size of each weights file the answers came from (int8: the issue's 64 KB)

Exit 0 when the table is printed (whether or not targets are met) or the folder is absent; 1 when a command fails.
Standard library only. Takes about 20 s on a 2-core machine (the motion files are most of it).
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


def parse_ranges(text):
    chosen = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        chosen.update(range(int(low), int(high or low) + 1))
    if not chosen:
        raise argparse.ArgumentTypeError(f"no drawers in {text!r}")
    return chosen


def pct(x):
    return f"{100 * x:.2f}%"


class Runner:
    def __init__(self, args, tmp):
        self.classify = args.classify
        self.weights = {"shape": args.weights_shape, "motion": args.weights_motion}
        self.realdata = args.realdata
        self.tmp = tmp
        self.models = {}  # task -> set of (model, weights) seen in the answers

    def show(self, path):
        """A path as the command column shows it: $TMP/..., or relative to the repository root."""
        if path.startswith(self.tmp + os.sep):
            return "$TMP/" + os.path.relpath(path, self.tmp)
        rel = os.path.relpath(path, ROOT)
        return rel if len(rel) <= len(path) else path

    def command(self, argv):
        return " ".join(a if a.startswith("$TMP/") else shlex.quote(a) for a in argv)

    def run(self, argv, shown=None, ok=(0,)):
        started = time.monotonic()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        if done.returncode not in ok:
            sys.stderr.write(done.stderr)
            sys.exit(f"error: exit {done.returncode} from: {self.command(shown or argv)}")
        print(f"  {time.monotonic() - started:5.1f} s  {self.command(shown or argv)}", file=sys.stderr)
        return done.stdout

    def classify_argv(self, task, words, data):
        argv = [self.classify] + words + [data, "--json"]
        if self.weights[task]:
            argv += ["--weights", self.weights[task]]
        shown = [self.show(self.classify)] + words + [self.show(data), "--json"]
        if self.weights[task]:
            shown += ["--weights", self.show(self.weights[task])]
        return argv, shown

    def note_model(self, task, answer):
        if "model" in answer:
            self.models.setdefault(task, set()).add((answer["model"], answer.get("weights", "?")))

    def evaluate(self, task, data):
        """classify evaluate TASK --data DATA --json: the report, and the command as shown."""
        argv, shown = self.classify_argv(task, ["evaluate", task, "--data"], data)
        # 65: some drawings or sessions could not be used; the report covers the rest and says how many ("failed").
        report = json.loads(self.run(argv, shown, ok=(0, 65)))
        self.note_model(task, report)
        return report, self.command(shown)

    def answers(self, data):
        """classify shape --dataset DATA --json: {drawing id: answer} (answers that are errors left out)."""
        argv, shown = self.classify_argv("shape", ["shape", "--dataset"], data)
        out = {}
        for line in self.run(argv, shown, ok=(0, 65)).splitlines():
            answer = json.loads(line)
            if "error" in answer:
                continue
            self.note_model("shape", answer)
            out[answer["input"].rpartition("#")[2]] = answer
        return out, self.command(shown)


def flagged(answer):
    return answer["label"] == "unknown" or answer.get("uncertain") is True


def column(path, key):
    """{drawing: value of column KEY} of a shape dataset."""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["drawing"], row[key])
    return out


def unknown_share(report):
    labels = report["labels"]
    if "unknown" not in labels:
        return 0, report["count"]
    k = labels.index("unknown")
    return sum(row[k] for row in report["confusion"]), report["count"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classify", default=".build/release/classify")
    parser.add_argument("--weights-shape")
    parser.add_argument("--weights-motion")
    parser.add_argument("--realdata", default=os.environ.get("ONDEVICEML_REALDATA")
                        or os.path.join(ROOT, "..", "shared", "realdata"))
    parser.add_argument("--omniglot-drawers", type=parse_ranges)
    parser.add_argument("--tasks", default="shape,motion",
                        type=lambda t: set(t.split(",")) if set(t.split(",")) <= {"shape", "motion"}
                        else parser.error(f"--tasks: {t}: give shape, motion or shape,motion"))
    parser.add_argument("--details", action="store_true")
    args = parser.parse_args()

    def resolve(p):
        return p if p is None or os.path.isabs(p) else os.path.normpath(os.path.join(os.getcwd(), p))

    # Paths given relative to where the script is run from; classify itself runs from the repository root.
    args.classify = resolve(args.classify) if os.path.exists(resolve(args.classify)) \
        else os.path.join(ROOT, args.classify)
    args.weights_shape, args.weights_motion = resolve(args.weights_shape), resolve(args.weights_motion)
    given = args.realdata
    args.realdata = os.path.normpath(resolve(args.realdata))
    if not os.path.isdir(args.realdata):
        shown = os.path.relpath(args.realdata, ROOT) if given.startswith(ROOT) else given
        print(f"skipped: no {shown} (the real-data folder, kept beside the repository on the development "
              "machines; --realdata or $ONDEVICEML_REALDATA name another)")
        return 0
    if not os.access(args.classify, os.X_OK):
        sys.exit(f"error: {args.classify}: no classify binary (build it with swift build -c release, or --classify)")
    for w in (args.weights_shape, args.weights_motion):
        if w and not os.path.isfile(w):
            sys.exit(f"error: {w}: no such weights file")

    needed = ["shapes-dollar1-dev.csv", "shapes-quickdraw-dev.csv", "shapes-other-quickdraw-dev.csv",
              "shapes-other-quickdraw-objects-dev.csv", "shapes-other-dollar1-dev.csv",
              "shapes-other-omniglot-train.csv", "shapes-mmg-star-dev.csv", "shapes-other-mmg-dev.csv",
              "motion-motionsense-dev.csv", "motion-motionsense-still-dev.csv",
              "motion-motionsense-stairs-dev.csv", "motion-wisdm-watch-dev.csv", "motion-wisdm-watch-stairs-dev.csv"]
    missing = [f for f in needed if not os.path.isfile(os.path.join(args.realdata, f))]
    if missing:
        sys.exit(f"error: {args.realdata}: no {', '.join(missing)} (see its README.md)")

    rows = []  # (figure, value, target, meets, command)
    details = []

    def row(figure, value, target="—", meets=None, command=""):
        mark = "—" if meets is None else ("yes" if meets else "**no**")
        rows.append((figure, value, target, mark, f"`{command}`" if command else ""))

    def wrong_row(name, report, command, target=True):
        # Issue 47: answers that are a wrong label (or `unknown` for a shape) and not uncertain, from evaluate's
        # `reject` counts.
        r = report.get("reject")
        if r is None:
            return
        share = r["confidentlyWrong"] / max(1, r["count"])
        row(f"{name}: confidently wrong", f"{pct(share)} ({r['confidentlyWrong']}/{r['count']})",
            "≤ 0.5%" if target else "—", share <= 0.005 + 1e-12 if target else None, command)

    def ece_row(name, report, command, target=True):
        e = report["reliability"]["expectedCalibrationError"]
        row(f"{name}: expected calibration error", pct(e), "≤ 3%" if target else "—", e <= 0.03 if target else None,
            command)

    with tempfile.TemporaryDirectory(prefix="realdata-figures-") as tmp:
        run = Runner(args, tmp)
        rd = lambda name: os.path.join(args.realdata, name)  # noqa: E731
        started = time.monotonic()

        if "shape" in args.tasks:
            # $1 shapes: upright, turned, stretched.
            dollar = rd("shapes-dollar1-dev.csv")
            turned, stretched = os.path.join(tmp, "turned.csv"), os.path.join(tmp, "stretched.csv")
            tas = [sys.executable, os.path.join(ROOT, "scripts", "turn-and-stretch.py"), dollar, turned, stretched]
            tas_shown = run.command(["scripts/turn-and-stretch.py", run.show(dollar), "$TMP/turned.csv",
                                     "$TMP/stretched.csv"])
            run.run(tas, ["scripts/turn-and-stretch.py", run.show(dollar), "$TMP/turned.csv", "$TMP/stretched.csv"])
            for name, path, target, prefix in (("$1 upright", dollar, 0.997, ""),
                                               ("$1 turned", turned, 0.997, tas_shown + "; "),
                                               ("$1 stretched", stretched, 0.997, tas_shown + "; ")):
                report, cmd = run.evaluate("shape", path)
                acc, n = report["accuracy"], report["count"]
                right = round(acc * n)
                row(f"{name}: accuracy", f"{pct(acc)} ({right}/{n})", f"≥ {100 * target:g}%", acc >= target - 1e-12,
                    prefix + cmd)
                unk, n = unknown_share(report)
                row(f"{name}: `unknown` share", f"{pct(unk / n)} ({unk}/{n}; uncertain {report['uncertain']})",
                    "≤ 0.2%", unk / n <= 0.002, prefix + cmd)
                ece_row(name, report, prefix + cmd)
                wrong_row(name, report, prefix + cmd)

            # MMG five-point stars (issue 47): right, turned away, calibration.
            mmg_stars = rd("shapes-mmg-star-dev.csv")
            report, cmd = run.evaluate("shape", mmg_stars)
            acc, n = report["accuracy"], report["count"]
            row("MMG stars: right (star)", f"{pct(acc)} ({round(acc * n)}/{n})", "≥ 99.5%", acc >= 0.995 - 1e-12, cmd)
            unk, n = unknown_share(report)
            row("MMG stars: `unknown` share", f"{pct(unk / n)} ({unk}/{n}; uncertain {report['uncertain']})", "—", None,
                cmd)
            ece_row("MMG stars", report, cmd)
            wrong_row("MMG stars", report, cmd)

            # Quick, Draw! shapes: right, flagged.
            qd = rd("shapes-quickdraw-dev.csv")
            report, cmd = run.evaluate("shape", qd)
            acc, n = report["accuracy"], report["count"]
            row("Quick, Draw! shapes: right", f"{pct(acc)} ({round(acc * n)}/{n})", "≥ 96%", acc >= 0.96, cmd)
            answers, cmd_answers = run.answers(qd)
            f = sum(flagged(a) for a in answers.values())
            row("Quick, Draw! shapes: flagged (`unknown` or uncertain)", f"{pct(f / len(answers))} ({f}/{len(answers)})",
                "≤ 3%", f / len(answers) <= 0.03, cmd_answers)
            ece_row("Quick, Draw! shapes", report, cmd)
            wrong_row("Quick, Draw! shapes", report, cmd)

            # Non-shapes: flagged, confidently a shape, calibration; Omniglot per alphabet.
            non_shapes = [
                ("lines, moons, clouds (QD)", "shapes-other-quickdraw-dev.csv", 0.97, "category"),
                ("objects dev (QD)", "shapes-other-quickdraw-objects-dev.csv", 0.98, "category"),
                ("objects train (QD; may train)", "shapes-other-quickdraw-objects-train.csv", None, "category"),
                ("$1 gestures", "shapes-other-dollar1-dev.csv", 0.995, "category"),
                ("MMG letters and symbols", "shapes-other-mmg-dev.csv", 0.99, "category"),
                ("Omniglot", "shapes-other-omniglot-train.csv", 0.99, "alphabet"),
            ]
            for name, file, target, key in non_shapes:
                path = rd(file)
                if not os.path.isfile(path):
                    row(f"{name}: flagged", f"no {file}", "—" if target is None else f"≥ {100 * target:g}%",
                        None if target is None else False)
                    continue
                if key == "alphabet":
                    # The characters that are a plain shape to a person (and single such drawings), as
                    # scripts/realdata_import.py lists them in Datasets/real/omniglot-left-out.json: left out of the
                    # figure, as they are of the training data.
                    with open(os.path.join(ROOT, "Datasets", "real", "omniglot-left-out.json"), encoding="utf-8") as handle:
                        listed = json.load(handle)
                    characters = {(c["alphabet"], c["character"]) for c in listed["characters"]}
                    single = set(listed["drawings"])
                    drawers = sorted(args.omniglot_drawers or range(1, 21))
                    filtered = os.path.join(tmp, "omniglot-drawers.csv")
                    with open(path, newline="") as src, open(filtered, "w", newline="") as dst:
                        reader = csv.DictReader(src)
                        writer = csv.DictWriter(dst, reader.fieldnames, lineterminator="\n")
                        writer.writeheader()
                        for r in reader:
                            shape_like = (r["alphabet"], r["character"]) in characters or r["drawing"] in single
                            if not shape_like and int(r["drawer"]) in drawers:
                                writer.writerow(r)
                    shapes = ", ".join(f"{a} {c}" for a, c in sorted(characters))
                    which = "all 20 drawers" if drawers == list(range(1, 21)) else f"drawers {','.join(map(str, drawers))}"
                    name = f"Omniglot, {which}"
                    shown_filter = (f"(rows of {run.show(path)} whose drawer is one of {','.join(map(str, drawers))}, "
                                    f"without the characters that are plain shapes ({shapes}) and "
                                    f"{len(single)} single drawings listed in Datasets/real/omniglot-left-out.json → "
                                    "$TMP/omniglot-drawers.csv) ")
                    path = filtered
                else:
                    shown_filter = ""
                report, cmd = run.evaluate("shape", path)
                answers, cmd_answers = run.answers(path)
                n = len(answers)
                f = sum(flagged(a) for a in answers.values())
                failed = f"; {report['failed']} not readable, left out" if report.get("failed") else ""
                t = None if target is None else f"≥ {100 * target:g}%"
                row(f"{name}: flagged", f"{pct(f / n)} ({f}/{n}{failed})", t or "—",
                    None if target is None else f / n >= target - 1e-12, shown_filter + cmd_answers)
                row(f"{name}: confidently a shape", f"{pct((n - f) / n)} ({n - f}/{n})",
                    "—" if target is None else f"≤ {100 * (1 - target):.3g}%",
                    None if target is None else (n - f) / n <= 1 - target + 1e-12, shown_filter + cmd_answers)
                ece_row(name, report, shown_filter + cmd, target is not None)
                wrong_row(name, report, shown_filter + cmd, target is not None)
                groups = column(path, key)
                per = {}
                for drawing, a in answers.items():
                    g = per.setdefault(groups.get(drawing, "?"), [0, 0, {}])
                    g[0] += 1
                    if flagged(a):
                        g[1] += 1
                    else:
                        g[2][a["label"]] = g[2].get(a["label"], 0) + 1
                if key == "alphabet":
                    for alphabet in sorted(per):
                        total, fl, shapes = per[alphabet]
                        taken = ", ".join(f"{k} {v}" for k, v in sorted(shapes.items(), key=lambda kv: -kv[1]))
                        row(f"{name}, {alphabet}: flagged", f"{pct(fl / total)} ({fl}/{total})"
                            + (f"; taken for {taken}" if taken else ""), "—", None, shown_filter + cmd_answers)
                else:
                    worst = sorted(((total - fl, cat, shapes) for cat, (total, fl, shapes) in per.items() if total > fl),
                                   reverse=True)
                    details.append((name, worst, cmd_answers))
                if file == "shapes-other-mmg-dev.csv":
                    # Issue 47: D and P, the letters most like a shape, each at most 1% confidently a shape.
                    for letter in ("D", "P"):
                        total, fl, shapes = per.get(letter, [0, 0, {}])
                        taken = ", ".join(f"{k} {v}" for k, v in sorted(shapes.items(), key=lambda kv: -kv[1]))
                        share = (total - fl) / max(1, total)
                        row(f"{name}, {letter}: confidently a shape", f"{pct(share)} ({total - fl}/{total})"
                            + (f"; {taken}" if taken else ""), "≤ 1%", total > 0 and share <= 0.01 + 1e-12, cmd_answers)

        if "motion" in args.tasks:
            # Motion: window accuracy, wrong labels, calibration.
            watch, watch_stairs = rd("motion-wisdm-watch-dev.csv"), rd("motion-wisdm-watch-stairs-dev.csv")
            # Since issue 48 every WISDM watch person trains the shipped model: these rows are a regression check, and
            # the figures on people who did not train it come from scripts/motion_kfold.py (k-fold over people).
            motion = [
                ("MotionSense walk/run", rd("motion-motionsense-dev.csv"), 0.994, ""),
                ("MotionSense sitting/standing", rd("motion-motionsense-still-dev.csv"), 0.995, ""),
                ("MotionSense stairs", rd("motion-motionsense-stairs-dev.csv"), 0.96, ""),
                ("WISDM watch, people 1600–1624 (trained; by person: scripts/motion_kfold.py)", watch, None, ""),
                ("WISDM watch stairs, people 1600–1624 (trained)", watch_stairs, None, ""),
            ]
            for name, path, target, prefix in motion:
                report, cmd = run.evaluate("motion", path)
                cmd = prefix + cmd
                labels, confusion, n = report["labels"], report["confusion"], report["count"]
                acc = report["accuracy"]
                right = sum(confusion[i][i] for i in range(len(labels)))
                row(f"{name}: window accuracy", f"{pct(acc)} ({right}/{n} windows)",
                    "—" if target is None else f"≥ {100 * target:g}%", None if target is None else acc >= target - 1e-12,
                    cmd)
                wrong = {}
                for i, true_label in enumerate(labels):
                    for j, answered in enumerate(labels):
                        if i != j and confusion[i][j]:
                            wrong[(true_label, answered)] = confusion[i][j]
                text = ", ".join(f"{t} → `{a}` {pct(c / n)} ({c})" for (t, a), c in
                                 sorted(wrong.items(), key=lambda kv: -kv[1])) or "none"
                row(f"{name}: wrong labels (share of all windows)",
                    f"{text}; uncertain {pct(report['uncertain'] / n)} of windows", "—", None, cmd)
                ece_row(name, report, cmd, target is not None)

        elapsed = time.monotonic() - started
        # Sizes of the weights files the answers came from (the issue: int8 files ≤ 64 KB each).
        for task in ("shape", "motion"):
            for model, weights in sorted(run.models.get(task, ())):
                path = weights if os.path.isabs(weights) else os.path.join(ROOT, weights)
                if os.path.isfile(path):
                    size = os.path.getsize(path)
                    int8 = ".int8" in model
                    row(f"{model} weights file size", f"{size:,} bytes ({run.show(path)})",
                        "≤ 64 KB" if int8 else "—", size <= 65536 if int8 else None, f"wc -c {run.show(path)}")

    version = subprocess.run([args.classify, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"## Real-data figures ({time.strftime('%Y-%m-%d %H:%M')})\n")
    print(f"- classify: `{run.show(args.classify)}` ({version or 'version unknown'}), run from the repository root"
          f" ({ROOT}); real data: `{run.show(args.realdata)}`; $TMP: a temporary folder, deleted afterwards")
    for task in ("shape", "motion"):
        seen = sorted(run.models.get(task, ()))
        named = ", ".join(f"{m} (`{run.show(w) if os.path.isabs(w) else w}`)" for m, w in seen)
        warn = "  **warning: the answers came from more than one model**" if len(seen) > 1 else ""
        print(f"- {task} model: {named}{warn}")
    if os.environ.get("CLASSIFY_WEIGHTS"):
        print(f"- $CLASSIFY_WEIGHTS={os.environ['CLASSIFY_WEIGHTS']} (classify looks there first)")
    print(f"- flagged = answered `unknown` or `uncertain: true` in `classify shape --dataset FILE --json`; right and "
          f"calibration error from `classify evaluate ... --json` (`accuracy`, `reliability.expectedCalibrationError`)."
          f" Measured in {elapsed:.0f} s.\n")
    print("| figure | value | target (issues 32, 47) | meets | command |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    if "shape" in args.tasks:
        print("\nThe Quick, Draw! shapes and the lines, moons and clouds are in the shipped shape model's training data"
              " (Datasets/real/): their rows above are of drawings it trained on; scripts/shape_kfold.py gives their"
              " figures on drawings that did not train (k-fold over drawings).")
    met = sum(r[3] == "yes" for r in rows)
    missed = [r[0] for r in rows if r[3] == "**no**"]
    print(f"\n{met} of {met + len(missed)} targets met" + (f"; not met: {'; '.join(missed)}" if missed else "") + ".")
    if args.details:
        print("\n### Non-shapes taken confidently for a shape, by category\n")
        for name, worst, cmd in details:
            listed = "; ".join(f"{cat} {k} ({', '.join(f'{s} {c}' for s, c in sorted(sh.items()))})"
                               for k, cat, sh in worst[:12])
            print(f"- {name}: {listed or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
