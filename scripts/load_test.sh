#!/usr/bin/env bash
# Load on `classify serve`: CLIENTS connections (default 200) posting a drawing to /v1/shape for SECONDS (default
# 30), with wrk (Debian's package) on loopback. Prints wrk's requests/s and latency percentiles, the count of
# errors (socket errors and non-200 answers), and the server's resident memory (RSS) before, at its peak and after.
#   scripts/load_test.sh [CLASSIFY] [CLIENTS] [SECONDS]     (make load-test builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
classify=${1:-.build/release/classify}
clients=${2:-200}
seconds=${3:-30}
command -v wrk >/dev/null || { echo "error: wrk not found (apt-get install wrk)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $server_pid 2>/dev/null || true; kill $sampler_pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$classify" serve --port 0 --max-requests 100000 > "$work/serve.out" 2> "$work/serve.err" &
server_pid=$!
for _ in $(seq 100); do grep -q "http://" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[^/ ]*' "$work/serve.out" | head -1)
[ -n "$url" ] || { echo "error: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }

# The star of Datasets/examples as JSON strokes ([x, y, t]; the file's columns are stroke,x,y,t): the body every
# client sends.
body=$(awk -F, 'NR > 1 { printf "%s[%s,%s,%s]", (n++ ? "," : ""), $2, $3, $4 }' Datasets/examples/star.csv)
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"strokes": [[$body]]}'
LUA

rss() { awk '/VmRSS/ { print $2 }' "/proc/$server_pid/status"; }
curl -s -o /dev/null -XPOST "$url/v1/shape" -H 'Content-Type: application/json' -d "{\"strokes\": [[$body]]}"
before=$(rss)
( while kill -0 $server_pid 2>/dev/null; do rss >> "$work/rss"; sleep 0.5; done ) &
sampler_pid=$!
wrk -t 2 -c "$clients" -d "${seconds}s" --timeout 10s --latency -s "$work/post.lua" "$url/v1/shape" | tee "$work/wrk.txt"
after=$(rss)
peak=$(sort -n "$work/rss" | tail -1)
non200=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$work/wrk.txt" | grep -o '[0-9]*$' || echo 0)
socket=$(grep -o 'Socket errors:.*' "$work/wrk.txt" || echo "Socket errors: none")
echo "clients $clients, ${seconds} s; errors: non-200 answers ${non200:-0}; $socket"
echo "server RSS: before $((before / 1024)) MiB, peak $((peak / 1024)) MiB, after $((after / 1024)) MiB"
# Every 5 s of the run (samples are 0.5 s apart): flat once the connections are open, or growing.
echo "server RSS every 5 s (MiB): $(awk 'NR % 10 == 1 { printf "%s%d", (n++ ? " " : ""), $1 / 1024 }' "$work/rss")"
