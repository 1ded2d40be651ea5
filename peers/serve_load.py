#!/usr/bin/env python3
"""`classify serve` beside the service a user could write instead — FastAPI + ONNX Runtime running our exported
shape model — under the same load, in one run, with the ratios.

Both servers run on this machine (loopback); wrk (Debian's package) loads each in turn with the same requests for
SECONDS each: the draw page (GET /, static: the server's own ceiling), the example star as JSON (the drawing in
Datasets/examples/star.csv, [x, y, t] points) and a 5-point square as JSON, to POST /v1/shape; then the star again
under 200 connections for the latency percentiles. It prints requests/s, latency (p50, p99), non-2xx answers,
socket errors, the server's CPU time per request (utime + stime from /proc, over the run), and `classify serve`'s
resident memory (RSS) before, at its peak and after the run. The two servers answer the same JSON body; the
Python service parses it (json), rasterizes the strokes with numpy (the same placement as ours, scaled into a
16 x 16 image with the distance to the nearest segment; close to our rasterizer, not bit for bit) and runs the
exported model in ONNX Runtime (one session, one thread), one uvicorn worker: its work per request is the same
kind, and its answer is the label and the probabilities (no fitted outline, no decision rule: less than ours).

    $HOME/.venvs/peers/bin/python peers/serve_load.py [--classify .build/release/classify] [--seconds 10]

Needs: fastapi, uvicorn, onnxruntime, numpy in the Python that runs it (pip install fastapi uvicorn onnxruntime),
and wrk. Never part of `make test`.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SERVICE = r'''
import json, os
import numpy as np
import onnxruntime as ort
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

options = ort.SessionOptions()
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
session = ort.InferenceSession(os.environ["MODEL"], options, providers=["CPUExecutionProvider"])
labels = json.loads(os.environ["LABELS"])
size = 16
grid = (np.arange(size, dtype=np.float32) + 0.5)
gx, gy = np.meshgrid(grid, grid)
app = FastAPI()


def rasterize(strokes):
    points = np.array([p[:2] for stroke in strokes for p in stroke], dtype=np.float32)
    low, high = points.min(axis=0), points.max(axis=0)
    extent = max(float((high - low).max()), 1e-6)
    scale = (size - 5) / extent
    offset = (size - (high - low) * scale) / 2
    image = np.full((size, size), np.inf, dtype=np.float32)
    for stroke in strokes:
        placed = (np.array([p[:2] for p in stroke], dtype=np.float32) - low) * scale + offset
        if len(placed) == 1:
            placed = np.vstack([placed, placed])
        a, b = placed[:-1], placed[1:]
        d = b - a
        length = np.maximum((d * d).sum(axis=1), 1e-12)
        px, py = gx[..., None], gy[..., None]
        t = np.clip(((px - a[:, 0]) * d[:, 0] + (py - a[:, 1]) * d[:, 1]) / length, 0, 1)
        dx, dy = px - (a[:, 0] + t * d[:, 0]), py - (a[:, 1] + t * d[:, 1])
        image = np.minimum(image, np.sqrt(dx * dx + dy * dy).min(axis=2))
    return np.clip(1.0 - image + 0.5, 0, 1).astype(np.float32).reshape(1, 1, size, size)


@app.post("/v1/shape")
async def shape(request: Request):
    body = json.loads(await request.body())
    strokes = [s for s in body["strokes"] if s]
    if not strokes:
        return JSONResponse({"error": "no points"}, status_code=422)
    probabilities = session.run(None, {"input": rasterize(strokes)})[0][0]
    best = int(np.argmax(probabilities))
    return {"label": labels[best], "confidence": float(probabilities[best]),
            "probabilities": {label: float(p) for label, p in zip(labels, probabilities)}}


@app.get("/")
async def page():
    return JSONResponse({"page": "static"})
'''


def fail(message):
    sys.exit(f"error: {message}")


def star_body():
    rows = open("Datasets/examples/star.csv").read().split("\n")[1:]
    points = [[float(v) for v in row.split(",")[1:4]] for row in rows if row]
    return json.dumps({"strokes": [points]})


SQUARE = '{"strokes": [[[0,0],[100,0],[100,100],[0,100],[0,0]]]}'


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def wrk(url, body, seconds, connections, work, pids):
    script = os.path.join(work, "post.lua")
    arguments = ["wrk", "-t", "1", "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s", "--latency"]
    if body is not None:
        with open(os.path.join(work, "body.json"), "w") as f:
            f.write(body)
        with open(script, "w") as f:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                    f'local f = io.open("{work}/body.json"); wrk.body = f:read("*a"); f:close()\n')
        arguments += ["-s", script]
    before = sum(cpu_seconds(p) for p in pids)
    output = subprocess.run(arguments + [url], capture_output=True, text=True, check=True).stdout
    cpu = sum(cpu_seconds(p) for p in pids) - before
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    def latency(percent):
        match = re.search(rf"\s{percent}%\s+([\d.]+)(us|ms|s)\b", output)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value * {"us": 1e-3, "ms": 1, "s": 1e3}[unit]
    non2xx = int((re.search(r"Non-2xx or 3xx responses: (\d+)", output) or [0, 0])[1])
    socket = (re.search(r"Socket errors: (.*)", output) or [None, "none"])[1]
    return {"rate": rate, "p50": latency(50), "p99": latency(99), "non2xx": non2xx, "socket": socket,
            "cpu_us": 1e6 * cpu / max(requests, 1)}


def start(arguments, pattern, environment=None):
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    deadline = time.time() + 60
    lines = []
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        match = re.search(pattern, line)
        if match:
            return process, int(match.group(1))
    process.kill()
    fail(f"{arguments[0]} did not start: {''.join(lines)[-500:]}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, process):
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            fail(f"the FastAPI service ended with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    fail("the FastAPI service did not start within 60 s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classify", default=".build/release/classify")
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        fail("wrk not found (apt-get install wrk)")
    try:
        import fastapi, uvicorn, onnxruntime  # noqa: F401
    except ImportError as error:
        fail(f"{error}: pip install fastapi uvicorn onnxruntime")
    work = tempfile.mkdtemp()
    processes = []
    try:
        model = os.path.join(work, "shape.onnx")
        subprocess.run([args.classify, "export", "onnx", "Weights/shape-classifier.int8.weights", "-o", model],
                       check=True, capture_output=True)
        import onnx
        metadata = {p.key: p.value for p in onnx.load(model).metadata_props}
        labels = next((json.loads(v) for k, v in metadata.items() if k == "labels"), None)
        if labels is None:
            fail(f"the exported model names no labels: {sorted(metadata)}")
        with open(os.path.join(work, "service.py"), "w") as f:
            f.write(SERVICE)
        ours, our_port = start([args.classify, "serve", "--port", "0", "--max-requests", "100000"],
                               r"http://127\.0\.0\.1:(\d+)/")
        processes.append(ours)
        environment = dict(os.environ, MODEL=model, LABELS=json.dumps(labels), OMP_NUM_THREADS="1")
        their_port = free_port()
        theirs = subprocess.Popen([sys.executable, "-m", "uvicorn", "service:app", "--app-dir", work, "--port", str(their_port),
                                   "--workers", "1", "--log-level", "warning", "--no-access-log"], env=environment)
        processes.append(theirs)
        wait_for(their_port, theirs)
        star = star_body()
        rows = []
        rss_before = rss_kib(ours.pid)
        peak = rss_before
        print(f"{os.cpu_count()} CPUs; wrk 1 thread, {args.seconds} s each; server CPU per request from /proc")
        for name, path, body, connections in [
            ("GET / (static page)", "/", None, 32),
            ("POST /v1/shape star JSON", "/v1/shape", star, 32),
            ("POST /v1/shape 5-point square JSON", "/v1/shape", SQUARE, 32),
            ("POST /v1/shape star JSON, 200 connections", "/v1/shape", star, 200),
        ]:
            for who, port, process in [("classify serve", our_port, ours), ("FastAPI + ONNX Runtime", their_port, theirs)]:
                result = wrk(f"http://127.0.0.1:{port}{path}", body, args.seconds, connections, work, [process.pid])
                if process is ours:
                    peak = max(peak, rss_kib(ours.pid))
                rows.append((name, who, result))
                print(f"{name:44} {who:24} {result['rate']:9.0f} req/s  p50 {result['p50']:7.2f} ms  p99 {result['p99']:7.2f} ms"
                      f"  {result['cpu_us']:6.0f} us CPU/request  non-2xx {result['non2xx']}  socket errors: {result['socket']}")
        time.sleep(1)
        rss_after = rss_kib(ours.pid)
        rate = {(name, who): result["rate"] for name, who, result in rows}
        static = rate[("GET / (static page)", "classify serve")]
        star_ours = rate[("POST /v1/shape star JSON", "classify serve")]
        square_ours = rate[("POST /v1/shape 5-point square JSON", "classify serve")]
        star_theirs = rate[("POST /v1/shape star JSON", "FastAPI + ONNX Runtime")]
        print(f"star JSON / static page (classify serve): {star_ours / static:.2f}")
        print(f"5-point square / static page (classify serve): {square_ours / static:.2f}")
        print(f"star JSON, classify serve / FastAPI + ONNX Runtime: {star_ours / star_theirs:.1f}")
        print(f"classify serve RSS: before {rss_before / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB, after {rss_after / 1024:.0f} MiB")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
