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
# The export: from the last epoch's progress line (stderr) to the end of the run.
mkfifo progress
start=$(date +%s%N)
(exec "$classify" "${options[@]}" --seed 2 --out new/again 2>progress >/dev/null) &
exec 3<progress
while IFS= read -r line <&3; do [[ $line == "epoch 3/3"* ]] && break; done
export_start=$(( ($(date +%s%N) - start) / 1000 ))
cat <&3 >/dev/null; exec 3<&-
wait
export_time=$(( ($(date +%s%N) - start) / 1000 - export_start ))
echo "one run takes $((duration / 1000)) ms, its export (after the last epoch line) $((export_time / 1000)) ms"
echo "killing $kills runs: a third at random moments up to 110% of a run, two thirds at random moments of the export"

old=0 new=0 refused=0 other=0 finished=0 partial=0
exec 4>&2  # the loop's stderr goes to /dev/null (bash's "Killed" notes); its reports to fd 4
for ((i = 1; i <= kills; i++)); do
    for f in "${files[@]}"; do cp old/"$f" Weights/"$f"; done
    (exec "$classify" "${options[@]}" --seed 2 --out Weights/shape-classifier 2>progress >/dev/null) &
    pid=$!  # classify itself (exec), not a subshell around it
    exec 3<progress  # kept open and drained: a closed pipe would kill the run with SIGPIPE, not our SIGKILL
    if (( i % 3 == 0 )); then
        delay=$(( RANDOM * RANDOM % (duration * 11 / 10) ))
    else
        while IFS= read -r line <&3; do [[ $line == "epoch 3/3"* ]] && break; done
        delay=$(( RANDOM * RANDOM % (export_time * 12 / 10 + 1) ))
    fi
    sleep "$(printf '%d.%06d' $((delay / 1000000)) $((delay % 1000000)))"
    kill -KILL "$pid" 2>/dev/null || finished=$((finished + 1))
    cat <&3 >/dev/null; exec 3<&-
    wait "$pid" 2>/dev/null || true
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
            echo "kill $i ($((delay / 1000)) ms): mixed set, refused: $(grep -o 'warning: [^;]*' shape.err | head -1 | cut -c1-160)…"
        else
            other=$((other + 1))
            echo "kill $i at $((delay / 1000)) ms: NEITHER old nor new set, and classify shape exited $status:" >&4
            for f in "${files[@]}"; do echo "  $f: $(cmp -s Weights/"$f" old/"$f" && echo old || (cmp -s Weights/"$f" new/"$f" && echo new || echo other))" >&4; done
            cat shape.err >&4
        fi
    fi
done 2>/dev/null
echo "kills $kills: old set $old, new set $new (of which $finished finished before the kill), mixed and refused $refused, anything else $other; temporary files left by kills $partial (removed)"
[ "$other" = 0 ]
