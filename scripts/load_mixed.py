#!/usr/bin/env python3
"""Heavy uploads beside light requests on `classify serve` (issue 46, M1): does a page or a small drawing stay fast
while recordings of megabytes are being recognized?

HEAVY clients post a 4 MiB motion recording (699,000 rows at 10 Hz, resampled to 3.5 M samples) to /v1/motion in a
loop; LIGHT clients alternate GET / and a 5-point drawing to /v1/shape, in a loop. All on loopback, for SECONDS,
each request on a new connection (as the round-five reproduction did). Prints, per kind, the count of each status
and the latency percentiles (p50, p99, max), and the server's peak resident memory.

    scripts/load_mixed.py [--classify .build/release/classify] [--heavy 24] [--light 2] [--seconds 30]
"""
import argparse
import collections
import os
import re
import socket
import subprocess
import sys
import threading
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classify", default=".build/release/classify")
    parser.add_argument("--heavy", type=int, default=24)
    parser.add_argument("--light", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()

    server = subprocess.Popen([args.classify, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = server.stdout.readline().decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not match:
            sys.exit(f"error: the server did not start: {line!r} {server.stderr.read().decode()[:300]}")
        port = int(match.group(1))
        run(port, server.pid, args)
    finally:
        server.terminate()
        server.wait(timeout=10)


def run(port, pid, args):
    recording = b"acc.x,acc.y,acc.z\n" + b"0,0,1\n" * 699_000
    heavy = (b"POST /v1/motion?rate=10 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/csv\r\nConnection: close\r\n"
             b"Content-Length: %d\r\n\r\n" % len(recording) + recording)
    drawing = b'{"strokes": [[[0,0],[10,0],[10,10],[0,10],[0,0]]]}'
    small = (b"POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
             b"Content-Length: %d\r\n\r\n" % len(drawing) + drawing)
    page = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

    def one(raw):
        start = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
                s.sendall(raw)
                data = b""
                while True:
                    more = s.recv(1 << 20)
                    if not more:
                        break
                    data += more
            status = data[9:12].decode() or "closed"
        except OSError as error:
            status = type(error).__name__
        return status, time.monotonic() - start

    results = collections.defaultdict(list)
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds

    def loop(kinds):
        i = 0
        while time.monotonic() < stop:
            name, raw = kinds[i % len(kinds)]
            outcome = one(raw)
            with lock:
                results[name].append(outcome)
            i += 1

    idle = {name: one(raw)[1] for name, raw in (("GET /", page), ("small drawing", small))}
    threads = [threading.Thread(target=loop, args=([("heavy recording", heavy)],)) for _ in range(args.heavy)]
    threads += [threading.Thread(target=loop, args=([("GET /", page), ("small drawing", small)],)) for _ in range(args.light)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    peak = [line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("VmHWM")][0]

    print(f"{args.heavy} heavy clients (4 MiB recordings), {args.light} light clients, {args.seconds:g} s, 127.0.0.1:{port}")
    print(f"idle: GET / {idle['GET /'] * 1000:.1f} ms, small drawing {idle['small drawing'] * 1000:.1f} ms")
    for name in ("GET /", "small drawing", "heavy recording"):
        outcomes = results[name]
        if not outcomes:
            continue
        times = sorted(t for _, t in outcomes)
        pick = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1000
        statuses = dict(collections.Counter(s for s, _ in outcomes))
        print(f"{name:16} {len(outcomes):6} requests  statuses {statuses}  p50 {pick(0.5):.1f} ms  p99 {pick(0.99):.1f} ms  "
              f"max {times[-1] * 1000:.1f} ms")
    print(f"server peak RSS {int(peak) // 1024} MB")


if __name__ == "__main__":
    main()
