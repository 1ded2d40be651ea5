#!/usr/bin/env bash
# Kills `classify train` (SIGKILL) at random moments during training and export, KILLS times, and checks that the
# files at --out are then exactly the old set or exactly the new set (cmp), or a mixed set that `classify shape`
# refuses with the "different training runs" message. Anything else is a bug: the script says so and exits 1.
# Not part of `make test` (it takes minutes).
#
#   scripts/kill-training.sh [KILLS]          KILLS defaults to 200
#   CLASSIFY=.build/release/classify scripts/kill-training.sh 50
set -euo pipefail

kills=${1:-200}
classify=$(realpath "${CLASSIFY:-.build/debug/classify}")
[ -x "$classify" ] || { echo "error: no classify at $classify; run swift build first (or set CLASSIFY)" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1  # the same thread count every run: byte-identical files for one seed
unset CLASSIFY_WEIGHTS

work=$(mktemp -d "${TMPDIR:-/tmp}/kill-training.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$classify" generate shape --out data --count 40 --seed 1 >/dev/null
files=(shape-classifier.f32.weights shape-classifier.int8.weights shape-classifier.curves.svg)
options=(train shape --data data/shapes/train.csv --epochs 3 --batch-size 16 --quantize int8)
train() {  # train SEED PREFIX
    "$classify" "${options[@]}" --seed "$1" --out "$2"
}
mkdir -p old new Weights
train 1 old/shape-classifier >/dev/null 2>&1
start=$(date +%s%N)
train 2 new/shape-classifier >/dev/null 2>&1
duration=$(( ($(date +%s%N) - start) / 1000 ))  # microseconds
echo "one run takes $((duration / 1000)) ms; killing $kills runs at random moments up to 110% of that"

old=0 new=0 refused=0 other=0 finished=0 partial=0
for ((i = 1; i <= kills; i++)); do
    for f in "${files[@]}"; do cp old/"$f" Weights/"$f"; done
    # Half the kills anywhere in the run, half in its second half, where export happens.
    if (( i % 2 )); then delay=$(( RANDOM * RANDOM % (duration * 11 / 10) )); else delay=$(( duration / 2 + RANDOM * RANDOM % (duration * 6 / 10) )); fi
    (exec "$classify" "${options[@]}" --seed 2 --out Weights/shape-classifier >/dev/null 2>&1) &
    pid=$!  # classify itself (exec), not a subshell around it
    sleep "$(printf '%d.%06d' $((delay / 1000000)) $((delay % 1000000)))"
    if kill -KILL "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null || true; else wait "$pid" 2>/dev/null || true; finished=$((finished + 1)); fi
    leftovers=$(find Weights -name '.*.partial-*' | wc -l)
    partial=$((partial + leftovers))
    find Weights -name '.*.partial-*' -delete
    same_old=0 same_new=0
    for f in "${files[@]}"; do
        cmp -s Weights/"$f" old/"$f" && same_old=$((same_old + 1))
        cmp -s Weights/"$f" new/"$f" && same_new=$((same_new + 1))
    done
    if (( same_old == ${#files[@]} )); then old=$((old + 1))
    elif (( same_new == ${#files[@]} )); then new=$((new + 1))
    else
        status=0
        "$classify" shape data/examples/circle.csv --no-fallback >/dev/null 2>shape.err || status=$?
        if [ "$status" = 70 ] && grep -q "are from different training runs" shape.err; then
            refused=$((refused + 1))
            echo "kill $i at $((delay / 1000)) ms: mixed set, refused: $(grep -o 'warning: [^;]*' shape.err | head -1 | cut -c1-160)…"
        else
            other=$((other + 1))
            echo "kill $i at $((delay / 1000)) ms: NEITHER old nor new set, and classify shape exited $status:" >&2
            for f in "${files[@]}"; do echo "  $f: $(cmp -s Weights/"$f" old/"$f" && echo old || (cmp -s Weights/"$f" new/"$f" && echo new || echo other))" >&2; done
            cat shape.err >&2
        fi
    fi
done
echo "kills $kills: old set $old, new set $new (of which $finished finished before the kill), mixed and refused $refused, anything else $other; temporary files left by kills $partial (removed)"
[ "$other" = 0 ]
