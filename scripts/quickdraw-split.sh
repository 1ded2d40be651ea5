#!/bin/sh
# Splits the Quick, Draw! doodles of ../shared/realdata (CC BY 4.0, attribution in Datasets/README.md) by drawing:
# within each file and each category (the label where a file has no category), the 1st, 3rd, 5th, … drawing in
# file order becomes training data for the shipped shape model (Datasets/shapes/quickdraw-train.csv, columns
# drawing,label,stroke,x,y,t, each row's values copied unchanged); the 2nd, 4th, … are held out and written,
# with all their columns, only when a folder is given (they never enter the repository: they are what accuracy is
# reported on). Run from anywhere; the output goes to this repository's Datasets/.
#   scripts/quickdraw-split.sh [REALDATA_FOLDER] [HELD_OUT_FOLDER]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
source=${1:-$root/../shared/realdata}
held=${2:-}
files="shapes-quickdraw-dev.csv shapes-other-quickdraw-dev.csv shapes-other-quickdraw-objects-dev.csv"
for f in $files; do
    [ -f "$source/$f" ] || { echo "error: $source/$f: no such file (the Quick, Draw! doodles; see ../shared/realdata/README.md)" >&2; exit 66; }
    header=$(head -n 1 "$source/$f" | tr -d '\r')
    case "$header" in drawing,label,stroke,x,y,t*) ;; *)
        echo "error: $source/$f:1: the header is '$header'; expected it to start with 'drawing,label,stroke,x,y,t'" >&2; exit 65 ;;
    esac
done
[ -z "$held" ] || [ -d "$held" ] || { echo "error: $held: no such folder" >&2; exit 66; }
out="$root/Datasets/shapes/quickdraw-train.csv"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo 'drawing,label,stroke,x,y,t' > "$tmp"
for f in $files; do
    # keep = 1 for a training drawing: its ordinal (from 0) within its category is even.
    awk -F, -v train="$tmp" -v held="${held:+$held/$f}" '
        NR == 1 { sub(/\r$/, ""); for (i = 1; i <= NF; i++) if ($i == "category") c = i; if (held != "") print > held; next }
        { line = $0; sub(/\r$/, "", line); split(line, v, ",")
          key = c ? v[c] : v[2]
          if (!(v[1] in keep)) { keep[v[1]] = (count[key]++ % 2 == 0); drawings++ }
          if (keep[v[1]]) { print v[1] "," v[2] "," v[3] "," v[4] "," v[5] "," v[6] >> train; rows++ }
          else if (held != "") print > held }
        END { if (rows == 0 || drawings < 2) exit 65 }' "$source/$f" \
        || { echo "error: $source/$f: fewer than 2 drawings" >&2; exit 65; }
done
mv "$tmp" "$out"
trap - EXIT
