#!/bin/bash
# The code a drawing, a dataset, a recording and a --follow stream go through, from input to printed answer:
# builds classify with coverage (in .build-cov), runs each command once, and prints, per command, the package's
# source files it executed and the recognition functions it called (the decision, the worker, the readers).
# Usage: scripts/code-paths.sh [REPO]   (REPO: the checkout to trace, default this one; run from this one)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "${1:-$here}" && pwd)"
tools=$(dirname "$(readlink -f "$(command -v swift)")")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$repo" && swift build --product classify --enable-code-coverage --scratch-path "$repo/.build-cov" >&2)
binary="$repo/.build-cov/debug/classify"
cd "$here"

trace() {
    local tag=$1
    shift
    LLVM_PROFILE_FILE="$out/$tag.profraw" "$@" > /dev/null 2>&1 || true
    "$tools/llvm-profdata" merge -o "$out/$tag.profdata" "$out/$tag.profraw"
    "$tools/llvm-cov" export "$binary" -instr-profile="$out/$tag.profdata" > "$out/$tag.json"
    python3 - "$out/$tag.json" "$repo/" "$tools/swift-demangle" "$tag" << 'EOF'
import json, subprocess, sys
path, root, demangle, tag = sys.argv[1:5]
data = json.load(open(path))["data"][0]
ours = lambda name: name.startswith(root) and "/.build" not in name
files = sorted(f["filename"][len(root):] for f in data["files"] if ours(f["filename"]) and f["summary"]["lines"]["covered"] > 0)
keys = ("DecisionRule.swift", "ShapeRecognizer", "ShapeClassifier.swift", "ShapeBatch.swift", "DrawingReader+Dataset",
        "ShapeDataset", "MotionFollow.swift", "MotionClassifier.swift", "MotionRecognizer.swift", "MotionStream.swift")
calls = [(f["filenames"][0].split("/")[-1], f["name"]) for f in data["functions"]
         if f["count"] > 0 and all(ours(n) for n in f["filenames"]) and any(k in f["filenames"][0] for k in keys)]
names = subprocess.run([demangle, "--simplified", "--compact"], input="\n".join(n for _, n in calls),
                       capture_output=True, text=True).stdout.split("\n")
functions = sorted({f"{file}: {name.split(' in ')[0]}" for (file, _), name in zip(calls, names)
                    if "closure" not in name and "variable initialization" not in name})
print(f"== {tag}: {len(files)} files")
print("   " + " ".join(f for f in files if f.startswith(("Sources/classify", "Sources/Models"))))
for line in functions: print("   " + line)
EOF
}

trace "classify shape ONE.csv" "$binary" shape Datasets/examples/star.csv
trace "classify shape A.csv B.csv" "$binary" shape Datasets/examples/star.csv Datasets/examples/circle.csv
trace "classify shape --dataset" "$binary" shape --dataset Datasets/shapes/test.csv
trace "classify shape --dataset --json" "$binary" shape --dataset Datasets/shapes/test.csv --json
trace "classify evaluate shape" "$binary" evaluate shape --data Datasets/shapes/test.csv
trace "classify motion ONE.csv" "$binary" motion Datasets/examples/walking.csv
trace "classify motion --follow -" sh -c "exec \"$binary\" motion --follow - < Datasets/examples/walking.csv"
