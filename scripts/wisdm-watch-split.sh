#!/bin/sh
# Splits the WISDM smartwatch recordings (../shared/realdata/motion-wisdm-watch-dev.csv; CC BY 4.0, see
# Datasets/ATTRIBUTION.md) by person: subjects 1600–1611 become training data for the shipped motion model
# (Datasets/motion/watch-train.csv, copied byte for byte, rows in file order), subjects 1612–1624 are held out
# and written only when a second path is given (they never enter the repository: they are what accuracy is
# reported on).
#   scripts/wisdm-watch-split.sh [REALDATA_FILE] [HELD_OUT_OUT]
set -eu
source=${1:-../shared/realdata/motion-wisdm-watch-dev.csv}
[ -f "$source" ] || { echo "error: $source: no such file (the WISDM watch recordings; see ../shared/realdata/README.md)" >&2; exit 66; }
split() { # $1 = awk condition on the subject, $2 = output
    tmp="$2.tmp.$$"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { h = $i; sub(/\r$/, "", h); if (h == "subject") s = i }
                       if (!s) { print "error: no subject column in the header" > "/dev/stderr"; exit 65 }; print; next } '"$1" "$source" > "$tmp" \
        || { rm -f "$tmp"; exit 65; }
    mv "$tmp" "$2"
}
split '$s + 0 <= 1611' Datasets/motion/watch-train.csv
[ $# -lt 2 ] || split '$s + 0 >= 1612' "$2"
