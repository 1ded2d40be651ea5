#!/bin/sh
# Every answer the shipped weights give on the bundled data and, when ../shared/realdata is beside the repository,
# on the dev files, as JSON (full precision) in one folder: run it with two builds and `diff -r` the folders to show
# that a change left the answers byte-identical.
#
#   scripts/answer_snapshot.sh OUT [CLASSIFY]     (CLASSIFY defaults to .build/release/classify)
set -eu
out=$1
classify=${2:-.build/release/classify}
cd "$(dirname "$0")/.."
mkdir -p "$out"
realdata=../shared/realdata
run() {  # name, then classify's arguments
    name=$1
    shift
    "$classify" "$@" --json >"$out/$name.json" 2>"$out/$name.stderr" || echo "exit $?" >>"$out/$name.stderr"
}
run_text() {  # the same, as text
    name=$1
    shift
    "$classify" "$@" >"$out/$name.txt" 2>"$out/$name.stderr" || echo "exit $?" >>"$out/$name.stderr"
}
shapes=$(ls Datasets/examples/*.csv | grep -v -e walking -e running -e still)
# shellcheck disable=SC2086
run examples-batch shape $shapes
# shellcheck disable=SC2086
run_text examples-batch-text shape $shapes
run_text shapes-test-text shape --dataset Datasets/shapes/test.csv
run_text motion-test-text motion --dataset Datasets/motion/test.csv
run shapes-test shape --dataset Datasets/shapes/test.csv
run motion-test motion --dataset Datasets/motion/test.csv
run motion-test-f32 motion --dataset Datasets/motion/test.csv --weights Weights/motion-state.f32.weights
for f in Datasets/real/*.csv; do
    b=$(basename "$f" .csv)
    case $b in motion-*) run "real-$b" motion --dataset "$f" ;; shapes-*) run "real-$b" shape --dataset "$f" ;; esac
done
for f in Datasets/examples/*.csv; do
    b=$(basename "$f" .csv)
    case $b in walking | running | still) run "example-$b" motion "$f" ;; *) run "example-$b" shape "$f" ;; esac
done
if [ -d "$realdata" ]; then
    for f in "$realdata"/*.csv; do
        b=$(basename "$f" .csv)
        case $b in
            motion-*)
                run "dev-$b" motion --dataset "$f"
                run "dev-$b-f32" motion --dataset "$f" --weights Weights/motion-state.f32.weights
                ;;
            shapes-*) run "dev-$b" shape --dataset "$f" ;;
        esac
    done
fi
