#!/usr/bin/env python3
"""Live motion sessions of `classify serve` under time (issue 50): is an update's cost the same at any length of a
session, and does memory stay flat with many sessions open?

`long`: one session fed a simulated phone stream (the walking example over and over, its times moved on: 50 Hz,
the same kind of samples in every minute) in updates of two seconds of samples, sent as fast as they are answered, for MINUTES of
sample time (default 60). Prints, for the minute of updates ending at 1, 10 and 60 minutes (and every 10), the
median, mean and p99 latency of an update and the median of the server's CPU time per update (every thread's /proc
schedstat, read around each update), with the medians as ratios to minute 1. Then the same minutes side by side:
three more sessions are brought to the start of minutes 1, 10 and 60 and given that minute's 30 updates in rounds,
one each per round, so that a shared machine's slow spells (which move a minute's figures by a third in turn) fall
on every length alike; these are the figures to compare.

`many`: SESSIONS sessions (default 100), each sending two seconds of samples every two seconds in real time, for
MINUTES of wall time (default 5); prints the server's resident memory (RSS) every 30 s, the updates answered, the
latency percentiles and any error.

    python3 scripts/live_soak.py long [--minutes 60] [--classify .build/release/classify]
    python3 scripts/live_soak.py many [--sessions 100] [--minutes 5]
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stream(minutes, names=("walking", "running", "still")):
    """Samples of a phone at 50 Hz for `minutes`: the examples `names` in turn, their times moved on."""
    parts = []
    for name in names:
        with open(os.path.join(ROOT, f"Datasets/examples/{name}.csv")) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        parts.append([dict(zip(header, map(float, line.split(",")))) for line in lines[1:] if line])
    samples, time_now, part = [], 0.0, 0
    while time_now < minutes * 60:
        for row in parts[part % len(parts)]:
            sample = dict(row)
            time_now += 0.02
            sample["timestamp"] = round(time_now, 3)
            samples.append(sample)
        part += 1
    return [s for s in samples if s["timestamp"] <= minutes * 60]


def cpu_seconds(pid):
    """The CPU time of every thread of `pid`, in nanoseconds' precision (/proc/PID/task/*/schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended meanwhile
    return total / 1e9


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0


def start_server(classify, extra):
    server = subprocess.Popen([classify, "serve", "--port", "0", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", server.stdout.readline())
    if not match:
        server.kill()
        sys.exit(f"error: the server did not start: {server.stderr.read()[:300]}")
    return server, int(match.group(1))


class Session:
    def __init__(self, port):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.id = None

    def update(self, samples, end=False):
        query = f"?session={self.id}" + ("&end=1" if end else "") if self.id else ""
        body = json.dumps({"samples": samples})
        began = time.perf_counter()
        self.connection.request("POST", "/v1/motion/live" + query, body, {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        answer = json.loads(response.read())
        elapsed = time.perf_counter() - began
        if response.status != 200:
            raise RuntimeError(f"{response.status}: {answer}")
        self.id = answer["session"]
        return answer, elapsed


def long_run(args):
    # One example over and over: every minute holds the same kind of samples, so the minutes compare.
    samples = stream(args.minutes, ("walking",))
    server, port = start_server(args.classify, [])
    per_update = 100  # two seconds at 50 Hz
    per_minute = 30

    def timed(session, index):
        """One update of `session` with the samples from `index`: its latency and the server's CPU for it."""
        before = cpu_seconds(server.pid)
        answer, elapsed = session.update(samples[index:index + per_update])
        return answer, elapsed, cpu_seconds(server.pid) - before

    def summary(latencies, cpus):
        return (statistics.median(latencies), statistics.mean(latencies),
                sorted(latencies)[int(0.99 * (len(latencies) - 1))], statistics.median(cpus))

    def report(mark, row, base):
        median, mean, p99, cpu = row
        print(f"minute {mark:3}: update median {1e3 * median:6.2f} ms (x{median / base[0]:.2f}), mean {1e3 * mean:6.2f} ms, "
              f"p99 {1e3 * p99:6.2f} ms; server CPU median {1e3 * cpu:6.2f} ms per update (x{cpu / base[3]:.2f})")

    try:
        # In turn: one session through the whole stream, each minute summed as it ends.
        marks = sorted(m for m in {1, 2, 10, args.minutes} | set(range(10, args.minutes + 1, 10)) if m <= args.minutes)
        session = Session(port)
        latencies, cpus, windows, events, results = [], [], 0, 0, {}
        for index in range(0, len(samples), per_update):
            answer, elapsed, cpu = timed(session, index)
            latencies.append(elapsed)
            cpus.append(cpu)
            windows += len(answer["windows"])
            events += len(answer["events"])
            minute_done = (index + per_update) / 50 / 60
            for mark in marks:
                if mark not in results and minute_done >= mark:
                    results[mark] = summary(latencies[-per_minute:], cpus[-per_minute:])
        session.update([], end=True)
        print(f"one session, {args.minutes} min of a 50 Hz stream in {len(latencies)} updates of 2 s; {windows} windows, "
              f"{events} events; server RSS {rss_mib(server.pid):.0f} MiB at the end")
        print("in turn (each minute measured when the session reached it; a shared machine's slow spells fall on some):")
        for mark in marks:
            report(mark, results[mark], results[marks[0]])

        # Side by side: sessions brought to the start of minutes 1, 10 and the last, then given that minute's updates
        # in rounds (one update each per round), so that the machine's slow spells fall on every length alike.
        lengths = [1, 10, args.minutes] if args.minutes > 10 else [1, args.minutes]
        sessions = {}
        for minute in lengths:
            sessions[minute] = Session(port)
            for index in range(0, (minute - 1) * 50 * 60, per_update):
                sessions[minute].update(samples[index:index + per_update])
        measured = {minute: ([], []) for minute in lengths}
        for round_ in range(per_minute):
            for minute in lengths:
                _, elapsed, cpu = timed(sessions[minute], (minute - 1) * 50 * 60 + round_ * per_update)
                measured[minute][0].append(elapsed)
                measured[minute][1].append(cpu)
        for minute in lengths:
            sessions[minute].update([], end=True)
        print("side by side (sessions at each length answered in rounds):")
        base = summary(*measured[lengths[0]])
        for minute in lengths:
            report(minute, summary(*measured[minute]), base)
    finally:
        server.terminate()
        server.wait(timeout=10)


def many_run(args):
    samples = stream(args.minutes + 1)
    server, port = start_server(args.classify, ["--max-live-sessions", str(args.sessions)])
    stop = time.time() + args.minutes * 60
    latencies, errors, lock = [], [], threading.Lock()

    def run(offset):
        session = Session(port)
        index = (offset * 37) % 1000
        time.sleep(offset * 2.0 / args.sessions)
        next_time = time.time()
        while time.time() < stop:
            try:
                _, elapsed = session.update(samples[index:index + 100])
                with lock:
                    latencies.append(elapsed)
            except Exception as error:  # noqa: BLE001
                with lock:
                    errors.append(str(error)[:200])
                return
            index += 100
            next_time += 2
            time.sleep(max(0, next_time - time.time()))
        try:
            session.update([], end=True)
        except Exception as error:  # noqa: BLE001
            with lock:
                errors.append(str(error)[:200])

    try:
        before = rss_mib(server.pid)
        threads = [threading.Thread(target=run, args=(i,)) for i in range(args.sessions)]
        for thread in threads:
            thread.start()
        series = []
        while any(thread.is_alive() for thread in threads):
            time.sleep(30)
            series.append(rss_mib(server.pid))
            print(f"{len(series) * 30:4} s: RSS {series[-1]:.0f} MiB, {len(latencies)} updates answered", flush=True)
        for thread in threads:
            thread.join()
        ordered = sorted(latencies)
        print(f"{args.sessions} sessions for {args.minutes} min: {len(latencies)} updates, errors {len(errors)} "
              f"{errors[:3]}; update p50 {1e3 * ordered[len(ordered) // 2]:.1f} ms, "
              f"p99 {1e3 * ordered[int(0.99 * (len(ordered) - 1))]:.1f} ms")
        print(f"server RSS: before {before:.0f} MiB, every 30 s {' '.join(f'{r:.0f}' for r in series)} MiB, "
              f"after the sessions ended {rss_mib(server.pid):.0f} MiB")
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["long", "many"])
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build/release/classify"))
    parser.add_argument("--minutes", type=int)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    if args.mode == "long":
        args.minutes = args.minutes or 60
        long_run(args)
    else:
        args.minutes = args.minutes or 5
        many_run(args)


if __name__ == "__main__":
    main()
