#!/bin/sh
# Writes the WISDM smartwatch recordings of subjects 1612–1624 (../shared/realdata/motion-wisdm-watch-dev.csv, a
# validation file kept outside this repository) to HELD_OUT, a path outside the repository: the people the watch
# accuracy in docs/motion.md and the tests is measured on, their rows copied in file order.
#   scripts/wisdm-watch-split.sh REALDATA_FILE HELD_OUT
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
source=${1:-$root/../shared/realdata/motion-wisdm-watch-dev.csv}
[ -f "$source" ] || { echo "error: $source: no such file (the WISDM watch recordings; see ../shared/realdata/README.md)" >&2; exit 66; }
expected='session,label,timestamp,acc.x,acc.y,acc.z,subject'
header=$(head -n 1 "$source" | tr -d '\r')
[ "$header" = "$expected" ] || {
    echo "error: $source:1: the header is '$header'; the WISDM watch file has '$expected'" >&2; exit 65; }
split() { # $1 = lowest subject, $2 = highest, $3 = output
    tmp="$3.tmp.$$"
    awk -F, -v low="$1" -v high="$2" 'NR == 1 { print; next } { s = $7; sub(/\r$/, "", s) }
        s ~ /^[0-9]+$/ && s + 0 >= low && s + 0 <= high { print; rows++ }
        END { if (rows == 0) exit 65 }' "$source" > "$tmp" \
        || { rm -f "$tmp"; echo "error: $source: no rows of subjects $1–$2" >&2; exit 65; }
    mv "$tmp" "$3"
}
[ $# -eq 2 ] || { echo "usage: scripts/wisdm-watch-split.sh REALDATA_FILE HELD_OUT" >&2; exit 64; }
split 1612 1624 "$2"
