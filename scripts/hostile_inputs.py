#!/usr/bin/env python3
"""Runs `classify` against hostile inputs, paths and disks and prints one Markdown table row per case.

    scripts/hostile_inputs.py [--classify PATH] [--before PATH] [--only SUBSTRING]

Each case builds its inputs in a fresh temporary folder, runs the binary (a release build of this checkout by
default) with a time limit, and reports the exit status, the wall time, the peak memory and the first line of
what it printed, plus a check of its own (a file that must not change, a path that must stay a device, ...).
With --before, an older binary runs every case too and the table puts the two side by side: the issue-12
regression table. Nothing here is part of `make test` (the tests cover each case one by one); it exists so the
whole list can be re-run and compared in one go.

Needs: Python 3.8+, GNU time at /usr/bin/time (Debian's `time` package) for the peak memory, root for the
device-node case (skipped otherwise). Files it crafts (weights with extreme
values or crafted architectures) are written by the small encoder below, which follows Weights/FORMAT.md.
"""

import argparse
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "Datasets", "examples")
WEIGHTS = os.path.join(ROOT, "Weights")
TIME_LIMIT = 120


# --- weights files (Weights/FORMAT.md) -------------------------------------------------------------------------

MAGIC = b"\x89ODML\r\n\x1a"


def read_weights(path):
    data = open(path, "rb").read()
    header_length = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[24:24 + header_length])
    data_start = (24 + header_length + 31) // 32 * 32
    tensors = {}
    for entry in header["tensors"]:
        start = data_start + entry["offset"]
        tensors[entry["name"]] = (entry["shape"], entry["format"], data[start:start + entry["length"]])
    return header, tensors


def encode_weights(header, tensors):
    """header without 'tensors'; tensors: name -> (shape, format, bytes). Returns the file's bytes."""
    def order(name):
        roles = ["weight", "bias", "gamma", "beta", "mean", "variance"]
        layer, role = name.split(".", 1)
        return (int(layer), roles.index(role) if role in roles else len(roles), name)
    entries, offset = [], 0
    for name in sorted(tensors, key=order):
        shape, fmt, payload = tensors[name]
        entries.append({"name": name, "shape": shape, "format": fmt, "offset": offset, "length": len(payload)})
        offset = (offset + len(payload) + 31) // 32 * 32
    full = dict(header)
    full["tensors"] = entries
    header_bytes = json.dumps(full, sort_keys=True, separators=(",", ":")).encode()
    data_start = (24 + len(header_bytes) + 31) // 32 * 32
    data_length = entries[-1]["offset"] + entries[-1]["length"] if entries else 0
    length = data_start + data_length + 4
    out = bytearray(MAGIC + struct.pack("<IIQ", 2, len(header_bytes), length) + header_bytes)
    out += bytes(data_start - len(out))
    for entry in entries:
        out += bytes(data_start + entry["offset"] - len(out))
        out += tensors[entry["name"]][2]
    out += struct.pack("<I", zlib.crc32(bytes(out)) & 0xFFFFFFFF)
    return bytes(out)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def extreme_shape_weights(path):
    """The shipped f32 shape model with every weight multiplied by 1e30: finite, valid checksum, overflowing."""
    header, tensors = read_weights(os.path.join(WEIGHTS, "shape-classifier.f32.weights"))
    del header["tensors"]
    scaled = {}
    for name, (shape, fmt, payload) in tensors.items():
        values = struct.unpack("<%df" % (len(payload) // 4), payload)
        scaled[name] = (shape, fmt, f32([v * 1e30 for v in values]))
    open(path, "wb").write(encode_weights(header, scaled))


def costly_motion_weights(path):
    """A valid motion file (66 KB) asking for window 4096, hop 1 and 4095 lags: 8192 features per window."""
    header, _ = read_weights(os.path.join(WEIGHTS, "motion-state.f32.weights"))
    del header["tensors"]
    lags = 4095
    features = 2 * lags + 2
    header["preprocessing"].update({"window": 4096, "hop": 1, "lags": lags})
    header["input"] = {"shape": [features], "description": "crafted"}
    header["architecture"] = [{"dense": {"inFeatures": features, "outFeatures": 2}},
                              {"activation": {"function": {"softmax": {}}}}]
    tensors = {"0.weight": ([2, features], "f32", f32([0.0] * (2 * features))), "0.bias": ([2], "f32", f32([0.0, 0.0]))}
    open(path, "wb").write(encode_weights(header, tensors))


def costly_shape_weights(path):
    """A valid shape file (885 KB) of a 256x256 raster and six 64-channel 3x3 convolutions: 14.6 G multiply-adds
    and a 151 MB im2col buffer a drawing, within the budgets the engine had before issue 12."""
    header, _ = read_weights(os.path.join(WEIGHTS, "shape-classifier.f32.weights"))
    del header["tensors"]
    size = 256
    header["preprocessing"]["size"] = size
    header["input"] = {"shape": [size, size, 1], "description": "crafted"}
    conv = lambda i, o: {"conv2D": {"inChannels": i, "outChannels": o, "kernelHeight": 3, "kernelWidth": 3,
                                    "strideHeight": 1, "strideWidth": 1, "padding": "same"}}
    relu = {"activation": {"function": {"relu": {}}}}
    header["architecture"] = [conv(1, 64), relu]
    tensors = {"0.weight": ([64, 3, 3, 1], "f32", f32([0.01] * 576)), "0.bias": ([64], "f32", f32([0.0] * 64))}
    for _ in range(6):
        index = len(header["architecture"])
        header["architecture"] += [conv(64, 64), relu]
        tensors["%d.weight" % index] = ([64, 3, 3, 64], "f32", f32([0.001] * 36864))
        tensors["%d.bias" % index] = ([64], "f32", f32([0.0] * 64))
    index = len(header["architecture"])
    header["architecture"] += [{"globalAveragePool": {}}, {"dense": {"inFeatures": 64, "outFeatures": 5}},
                               {"activation": {"function": {"softmax": {}}}}]
    tensors["%d.weight" % (index + 1)] = ([5, 64], "f32", f32([0.0] * 320))
    tensors["%d.bias" % (index + 1)] = ([5], "f32", f32([0.0] * 5))
    header.pop("activationQuantization", None)
    open(path, "wb").write(encode_weights(header, tensors))


# --- inputs ----------------------------------------------------------------------------------------------------

def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return path


def motion_csv(rate, seconds, timestamp_scale=1.0, bom=False):
    """A synthetic walk: 2 steps a second, 0.3 g, Core Motion columns with a timestamp column."""
    import math
    rows = ["timestamp,gravity.x,gravity.y,gravity.z,userAcceleration.x,userAcceleration.y,userAcceleration.z,"
            "rotationRate.x,rotationRate.y,rotationRate.z"]
    for i in range(int(rate * seconds)):
        t = i / rate
        a = 0.3 * math.sin(2 * math.pi * 2 * t)
        rows.append("%.6f,0,-1,0,%.5f,%.5f,%.5f,%.4f,0,0" % (t * timestamp_scale, 0.2 * a, a, 0.1 * a, 0.5 * a))
    return ("\ufeff" if bom else "") + "\n".join(rows) + "\n"


def shape_dataset(rows_per_drawing):
    """drawing,label,stroke,x,y rows: a square per drawing id, ids as given (duplicates allowed)."""
    lines = ["drawing,label,stroke,x,y"]
    for drawing, label in rows_per_drawing:
        for x, y in [(0, 0), (10, 0), (10, 10), (0, 10), (0, 0)]:
            lines.append("%s,%s,0,%d,%d" % (drawing, label, x, y))
    return "\n".join(lines) + "\n"


# --- running ---------------------------------------------------------------------------------------------------

def run(argv, cwd, stdin=None, env=None, stdout_path=None):
    """Runs argv; returns (status, seconds, peak RSS in MB, first line of its messages or output)."""
    import threading
    start = time.monotonic()
    out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE
    # Peak memory comes from GNU time, one process removed: Linux carries a process's peak RSS across exec, so a
    # direct child of this (large) Python process would report at least Python's size.
    measured = tempfile.NamedTemporaryFile(prefix="hostile-time-", delete=False)
    measured.close()
    argv = ["/usr/bin/time", "-f", "%M", "-o", measured.name, "--"] + argv
    process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.PIPE,
                               env=dict(os.environ, **(env or {})), start_new_session=True)
    captured = {"stdout": b"", "stderr": b""}
    def drain(name, stream):
        captured[name] = stream.read()
    threads = [threading.Thread(target=drain, args=("stderr", process.stderr))]
    if process.stdout:
        threads.append(threading.Thread(target=drain, args=("stdout", process.stdout)))
    for thread in threads:
        thread.start()
    try:
        process.stdin.write(stdin.encode() if stdin is not None else b"")
        process.stdin.close()
    except BrokenPipeError:
        pass
    timer = threading.Timer(TIME_LIMIT, lambda: os.killpg(process.pid, signal.SIGKILL))
    timer.start()
    _, wait_status, _ = os.wait4(process.pid, 0)
    timer.cancel()
    process.returncode = 0  # reaped by wait4 above
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - start
    report = open(measured.name).read().split()
    os.unlink(measured.name)
    peak_kb = int(report[-1]) if report and report[-1].isdigit() else 0
    signalled = [int(word) for before, word in zip(report, report[1:]) if before == "signal" and word.isdigit()]
    if seconds >= TIME_LIMIT:
        status = "timeout %d s" % TIME_LIMIT
    elif signalled:
        status = "killed by %s" % signal.Signals(signalled[0]).name
    elif os.WIFSIGNALED(wait_status):
        status = "killed by %s" % signal.Signals(os.WTERMSIG(wait_status)).name
    else:
        status = os.WEXITSTATUS(wait_status)
    text = captured["stderr"].decode(errors="replace").strip().splitlines()
    important = [line for line in text if line.startswith(("error", "Error", "Fatal", "note", "warning", "***"))]
    output = captured["stdout"].decode(errors="replace").strip().splitlines()
    first = important[0] if important else (text[0] if text else (output[0] if output else ""))
    return status, seconds, peak_kb / 1024, first


class Case:
    def __init__(self, name, setup, check=None):
        self.name, self.setup, self.check = name, setup, check


def cases(root_only):
    c = []

    # Writes that destroy what is at the path.
    def render_symlink(d, C):
        target = write(os.path.join(d, "kept.svg"), "old")
        os.symlink(target, os.path.join(d, "link.svg"))
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--render", os.path.join(d, "link.svg")], {}
    c.append(Case("--render onto a symlink", render_symlink,
                  lambda d: "link kept" if os.path.islink(os.path.join(d, "link.svg")) else "LINK REPLACED BY A FILE"))

    def render_private(d, C):
        path = write(os.path.join(d, "private.svg"), "old")
        os.chmod(path, 0o600)
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--render", path], {}
    c.append(Case("--render onto a 0600 file", render_private,
                  lambda d: "mode %o" % stat.S_IMODE(os.stat(os.path.join(d, "private.svg")).st_mode)))

    if root_only:
        def render_device(d, C):
            os.mknod(os.path.join(d, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--render", os.path.join(d, "null")], {}
        c.append(Case("--render onto a device node (a private copy of /dev/null)", render_device,
                      lambda d: "still a device" if stat.S_ISCHR(os.lstat(os.path.join(d, "null")).st_mode) else "DEVICE REPLACED BY A FILE"))

    def render_fifo(d, C):
        fifo = os.path.join(d, "pipe")
        os.mkfifo(fifo)
        reader = subprocess.Popen(["sh", "-c", "cat '%s' > '%s'" % (fifo, os.path.join(d, "read.svg"))])
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--render", fifo], {"reader": reader}
    def fifo_check(d):
        kind = "still a FIFO" if stat.S_ISFIFO(os.lstat(os.path.join(d, "pipe")).st_mode) else "FIFO REPLACED BY A FILE"
        got = os.path.getsize(os.path.join(d, "read.svg")) if os.path.exists(os.path.join(d, "read.svg")) else 0
        return "%s, reader got %d bytes" % (kind, got)
    c.append(Case("--render onto a FIFO with a reader", render_fifo, fifo_check))

    def int8_directory(d, C):
        data = os.path.join(d, "train.csv")
        write(data, shape_dataset([("d%d" % i, ["circle", "square"][i % 2]) for i in range(40)]))
        os.mkdir(os.path.join(d, "m.int8.weights"))
        write(os.path.join(d, "m.f32.weights"), "old f32")
        return [C, "train", "shape", "--data", data, "--epochs", "1", "--quantize", "int8", "--out", os.path.join(d, "m")], {}
    c.append(Case("train --out whose int8 target is a directory", int8_directory,
                  lambda d: "old f32 kept" if open(os.path.join(d, "m.f32.weights"), "rb").read() == b"old f32" else "F32 REPLACED (mixed set)"))

    # Crashes.
    for text in ["0,0\n1e-320,0", "0,0\n1e10,0", "0,0\n1e10,1e-300", "0,0\n1e300,1\n-1e300,2"]:
        c.append(Case("drawing `%s` on stdin" % text.replace("\n", "\\n"),
                      lambda d, C, text=text: ([C, "shape", "-"], {"stdin": "x,y\n" + text + "\n"})))
    def dataset_denormal(d, C):
        path = write(os.path.join(d, "set.csv"), shape_dataset([("a", "square")]) + "b,square,0,0,0\nb,square,0,1e-320,0\n")
        return [C, "shape", "--dataset", path], {}
    c.append(Case("--dataset with a 1e-320 drawing after a good one", dataset_denormal))
    for args, label in [(["shape", "star.csv", "circle.csv"], "batch"), (["shape", "star.csv"], "one drawing")]:
        c.append(Case("stdout on a full disk (/dev/full), %s" % label,
                      lambda d, C, args=args: ([C] + [os.path.join(EXAMPLES, a) if a.endswith(".csv") else a for a in args],
                                               {"stdout_path": "/dev/full"})))
    for option in ["--epochs", "--batch-size"]:
        def huge(d, C, option=option):
            data = write(os.path.join(d, "train.csv"), shape_dataset([("d%d" % i, ["circle", "square"][i % 2]) for i in range(40)]))
            return [C, "train", "shape", "--data", data, option, "9223372036854775807", "--out", os.path.join(d, "m")], {}
        c.append(Case("train %s 9223372036854775807" % option, huge))

    # Silent nonsense.
    def extreme(d, C):
        path = os.path.join(d, "extreme.f32.weights")
        extreme_shape_weights(path)
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--weights", path], {}
    c.append(Case("weights with finite extreme values (x1e30), valid checksum", extreme))
    c.append(Case("drawing CSV with a UTF-8 byte-order mark",
                  lambda d, C: ([C, "shape", write(os.path.join(d, "bom.csv"), "\ufeff" + open(os.path.join(EXAMPLES, "star.csv")).read())], {})))
    c.append(Case("25 Hz walk with a byte-order mark",
                  lambda d, C: ([C, "motion", write(os.path.join(d, "walk25.csv"), motion_csv(25, 30, bom=True))], {})))
    def one_class(d, C):
        data = write(os.path.join(d, "train.csv"), shape_dataset([("d%d" % i, "circle") for i in range(40)]))
        return [C, "train", "shape", "--data", data, "--epochs", "1", "--out", os.path.join(d, "m")], {}
    c.append(Case("train on one class", one_class, lambda d: "weights written" if os.path.exists(os.path.join(d, "m.f32.weights")) else "no weights written"))
    def one_drawing(d, C):
        data = write(os.path.join(d, "train.csv"), shape_dataset([("d0", "circle"), ("d1", "square")]))
        return [C, "train", "shape", "--data", data, "--epochs", "1", "--out", os.path.join(d, "m")], {}
    c.append(Case("train on one drawing per class", one_drawing, lambda d: "weights written" if os.path.exists(os.path.join(d, "m.f32.weights")) else "no weights written"))
    def empty_folder(d, C):
        os.mkdir(os.path.join(d, "empty"))
        return [C, "shape", os.path.join(d, "empty")], {}
    c.append(Case("an empty folder as input", empty_folder))
    def evaluate_line(d, C):
        text = shape_dataset([("a", "square")]) + "line,square,0,0,0\nline,square,0,10,0\nline,square,0,20,0\n" + shape_dataset([("z", "square")]).split("\n", 1)[1]
        return [C, "evaluate", "shape", "--data", write(os.path.join(d, "set.csv"), text), "--fallback"], {}
    c.append(Case("evaluate --fallback with a straight-line drawing", evaluate_line))

    # Unbounded cost from small inputs.
    def sparse(d, C):
        path = os.path.join(d, "big.weights")
        with open(path, "wb") as f:
            f.truncate(3 << 30)
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--weights", path], {}
    c.append(Case("a 3 GB sparse file as --weights", sparse))
    def motion_cost(d, C):
        path = os.path.join(d, "costly.weights")
        costly_motion_weights(path)
        hour = write(os.path.join(d, "hour.csv"), motion_csv(50, 3600))
        return [C, "motion", hour, "--weights", path, "--no-fallback"], {}
    c.append(Case("motion weights: window 4096, hop 1, 4095 lags (66 KB), 1-hour recording", motion_cost))
    def shape_cost(d, C):
        path = os.path.join(d, "costly.weights")
        costly_shape_weights(path)
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--weights", path, "--no-fallback"], {}
    c.append(Case("shape weights: 256x256 raster, 14.6 G multiply-adds (885 KB)", shape_cost))
    c.append(Case("a recording sampled every 5 s",
                  lambda d, C: ([C, "motion", write(os.path.join(d, "slow.csv"), motion_csv(0.2, 3600))], {})))

    # Smaller.
    def weights_directory(d, C):
        os.mkdir(os.path.join(d, "dir.weights"))
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--weights", os.path.join(d, "dir.weights"), "--retries", "10"], {}
    c.append(Case("a directory as --weights, --retries 10", weights_directory))
    def weights_fifo(d, C):
        os.mkfifo(os.path.join(d, "pipe.weights"))
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--weights", os.path.join(d, "pipe.weights"), "--retries", "10"], {}
    c.append(Case("a FIFO as --weights, --retries 10", weights_fifo))
    def weights_loop(d, C):
        os.symlink(os.path.join(d, "b.weights"), os.path.join(d, "a.weights"))
        os.symlink(os.path.join(d, "a.weights"), os.path.join(d, "b.weights"))
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--weights", os.path.join(d, "a.weights"), "--retries", "10"], {}
    c.append(Case("a symlink loop as --weights, --retries 10", weights_loop))
    c.append(Case("CLASSIFY_WEIGHTS naming a missing folder",
                  lambda d, C: ([C, "shape", os.path.join(EXAMPLES, "star.csv")], {"env": {"CLASSIFY_WEIGHTS": os.path.join(d, "nowhere")}})))
    def local_f32(d, C):
        os.mkdir(os.path.join(d, "Weights"))
        shutil.copy(os.path.join(WEIGHTS, "shape-classifier.f32.weights"), os.path.join(d, "Weights"))
        return [C, "shape", os.path.join(EXAMPLES, "star.csv"), "--json"], {"cwd": d}
    c.append(Case("./Weights holding only shape-classifier.f32", local_f32))
    c.append(Case("drawing CSV with CR-only line endings",
                  lambda d, C: ([C, "shape", write(os.path.join(d, "cr.csv"), open(os.path.join(EXAMPLES, "star.csv")).read().replace("\n", "\r"))], {})))
    c.append(Case("recording with timestamps in milliseconds",
                  lambda d, C: ([C, "motion", write(os.path.join(d, "ms.csv"), motion_csv(50, 30, timestamp_scale=1000))], {})))
    c.append(Case("missing recording, --weights missing, --no-fallback",
                  lambda d, C: ([C, "motion", os.path.join(d, "none.csv"), "--weights", os.path.join(d, "none.weights"), "--no-fallback"], {})))
    def duplicate_ids(d, C):
        return [C, "shape", "--dataset", write(os.path.join(d, "set.csv"), shape_dataset([("a", "square"), ("b", "square"), ("a", "square")]))], {}
    c.append(Case("--dataset where drawing id 'a' appears twice", duplicate_ids))
    return c


def run_case(case, binary):
    folder = tempfile.mkdtemp(prefix="hostile-")
    try:
        argv, options = case.setup(folder, binary)
        reader = options.pop("reader", None)
        cwd = options.pop("cwd", folder)
        status, seconds, rss, first = run(argv, cwd, stdin=options.get("stdin"), env=options.get("env"), stdout_path=options.get("stdout_path"))
        if reader:
            try:
                reader.wait(timeout=5)
            except subprocess.TimeoutExpired:
                reader.kill()
        check = case.check(folder) if case.check else ""
        return status, seconds, rss, first, check
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build", "release", "classify"))
    parser.add_argument("--before", help="an older classify binary to compare with")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args()
    binaries = ([("before", args.before)] if args.before else []) + [("now", args.classify)]
    header = "| case | " + " | ".join("%s: exit, time, peak memory, first line" % label for label, _ in binaries) + " |"
    print(header)
    print("|---|" + "---|" * len(binaries))
    for case in cases(os.geteuid() == 0):
        if args.only and args.only not in case.name:
            continue
        cells = []
        for _, binary in binaries:
            status, seconds, rss, first, check = run_case(case, binary)
            first = first.replace("|", "\\|")
            if len(first) > 160:
                first = first[:157] + "..."
            cells.append("%s, %.2f s, %.0f MB: %s%s" % (status, seconds, rss, first, ("; **%s**" % check) if check else ""))
        print("| %s | %s |" % (case.name, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
