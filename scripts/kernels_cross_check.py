#!/usr/bin/env python3
"""The C kernels built for ARM64 and run under qemu-user, against the same kernels on this machine (issue 49).

    python3 scripts/kernels_cross_check.py [--clang clang] [--qemu qemu-aarch64] [--sysroot /usr/aarch64-linux-gnu]
                                           [--weights Weights]

Builds Tests/KernelsCrossCheck/kernels_check.c with every file of Sources/CKernels and Sources/CPreprocessing twice
with the same clang: for this machine and for aarch64-linux-gnu (Debian's libc6-dev-arm64-cross and
libgcc-12-dev-arm64-cross; `make arm64-deps` installs them and qemu-user). Each build runs every kernel on the same
fixed inputs and prints every output exactly, among them the shipped models' 8-bit layers with their real weights
(every `*.int8.weights` of --weights, packed here as the plan packs them). The ARM64 build runs its portable C (which
clang turns into NEON code, with fused multiply-adds wherever C leaves it free to, as the AVX2 level does here) and its
8-bit kernels with the dot product instructions: `sdot` (level 5, neon-dotprod) and `usdot` (level 6, neon-i8mm),
chosen by getauxval as on a phone; qemu's `max` CPU runs all three, `cortex-a76` the first two, `cortex-a72` the first.

Checks, per case:
- kernels that promise the same bits at every level (motion signals, autocorrelation, rasterizer, quantization,
  pooling, the backward passes of ReLU and max pooling, bias gradients): the ARM64 output equals this machine's
  portable level bit for bit;
- kernels whose float rounding the compiler may fuse (float convolutions and dense layers, the 8-bit kernels'
  float outputs, weight gradients): every ARM64 value within 2e-6 · max(1, |value here|) of the portable level's
  (a NaN or an infinity passes only where both print the same); their 8-bit outputs within one step.
- every ARM64 level equals ARM64's portable level bit for bit, in every case;
- the detection chose the expected levels on each qemu CPU.
It also says, per case, whether ARM64 matched this machine's AVX2 level bit for bit (information, not a check), and
holds every level this machine runs to its portable level by the same two rules.
Exits 1 when a check fails, 2 when the tools are missing or a build fails.
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(ROOT, "Tests", "KernelsCrossCheck", "kernels_check.c")
# Cases whose outputs a compiler may round differently (fused multiply-adds), and how far apart they may be.
FUSED = ("conv2d_f32/0", "conv2d_f32/1", "conv2d_f32/2", "dense_f32", "dense_f32_rows", "conv2d_i8/0", "conv2d_i8/1",
         "conv2d_i8/3", "conv2d_i8/4", "dense_i8", "weight_gradient/weights")
BOUND = 2e-6
# 8-bit outputs of a float computation the compiler may fuse: a value at a rounding tie can land one step apart.
FUSED_BYTES = ("conv2d_f32/3", "conv2d_i8/2", "conv2d_i8/5")
# The qemu CPUs the ARM64 build runs on, and the levels its detection must choose there.
ARM_CPUS = {"max": [0, 5, 6], "cortex-a76": [0, 5], "cortex-a72": [0]}


def load(text):
    """{(case, level): [value, …]} from a run's output."""
    cases = {}
    for line in text.splitlines():
        parts = line.split()
        name, level, count = parts[0], int(parts[1]), int(parts[2])
        if len(parts) - 3 != count:
            sys.exit(f"error: case {name} level {level}: {len(parts) - 3} values, the line says {count}")
        cases[(name, level)] = parts[3:]
    return cases


def fused(name):
    return any(name == f or name.startswith(f + "/") for f in FUSED) or (
        name.startswith("real/") and name.endswith("/floats"))


def fused_bytes(name):
    return name in FUSED_BYTES or (name.startswith("real/") and name.endswith("/bytes"))


def shipped_layers(folder):
    """The shipped int8 models' 8-bit layers as kernels_check.c reads them: per layer its shape, its weights packed
    as the plan packs them (`PlanCompiler+Integer.swift`: `[kh][kw · cin / 4][paddedOut][4]`, input channels padded to
    a multiple of 4) and its weight scales. A dense layer is a 1×1 convolution."""
    lines = []
    for path in sorted(glob.glob(os.path.join(folder, "*.int8.weights"))):
        data = open(path, "rb").read()
        header_length = struct.unpack_from("<I", data, 12)[0]
        header = json.loads(data[24:24 + header_length])
        start = (24 + header_length + 31) // 32 * 32
        model = os.path.basename(path).split(".")[0]
        for tensor in header["tensors"]:
            if tensor["format"] != "int8":
                continue
            shape = tensor["shape"]
            out, (kh, kw, cin) = shape[0], (shape[1:] if len(shape) == 4 else (1, 1, shape[1]))
            blob = data[start + tensor["offset"]:start + tensor["offset"] + tensor["length"]]
            scales = struct.unpack_from(f"<{out}f", blob, 0)
            values = struct.unpack_from(f"<{out * kh * kw * cin}b", blob, 4 * out)
            cin4, padded = (cin + 3) // 4 * 4, (out + 7) // 8 * 8
            groups = kw * cin4 // 4
            packed = [0] * (kh * groups * padded * 4)
            for o in range(out):
                for ky in range(kh):
                    for kx in range(kw):
                        for c in range(cin):
                            r = kx * cin4 + c
                            packed[((ky * groups + r // 4) * padded + o) * 4 + r % 4] = values[((o * kh + ky) * kw + kx) * cin + c]
            lines.append(f"layer {model}:{tensor['name']} {kh} {kw} {cin4} {out}")
            lines.append(" ".join(map(str, packed)))
            lines.append(" ".join(float(x).hex() for x in scales))
    return "\n".join(lines) + "\n"


def compare(name, values, reference):
    """(ok, description) of `values` against `reference` by the case's rule. Every value is checked on its own, so a
    NaN or an infinity anywhere fails unless both sides print the same."""
    if len(values) != len(reference):
        return False, f"{len(values)} values against {len(reference)}"
    differ = sum(a != b for a, b in zip(values, reference))
    if fused_bytes(name):
        worst = max((abs(int(a, 16) - int(b, 16)) for a, b in zip(values, reference)), default=0)
        return worst <= 1, f"{differ} differ, by at most {worst} (≤ 1 step)"
    if not fused(name):
        return differ == 0, "same bits" if differ == 0 else f"{differ} values differ (same bits promised)"
    worst, ok = 0.0, True
    for a, b in zip(values, reference):
        if a == b:
            continue
        x, y = float.fromhex(a), float.fromhex(b)
        gap = abs(x - y) / max(1.0, abs(y))
        if not gap <= BOUND:  # also false for NaN
            ok = False
        worst = max(worst, gap) if gap == gap else float("nan")
    return ok, f"{differ} differ, at most {worst:.2e} (≤ {BOUND:.0e})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clang", default="clang")
    parser.add_argument("--qemu", default="qemu-aarch64")
    parser.add_argument("--sysroot", default="/usr/aarch64-linux-gnu")
    parser.add_argument("--weights", default=os.path.join(ROOT, "Weights"),
                        help="the folder whose *.int8.weights layers also run (default: the shipped Weights/)")
    args = parser.parse_args()
    for tool in (args.clang, args.qemu):
        if not shutil.which(tool):
            print(f"error: {tool} not found (make arm64-deps installs qemu-user; clang comes with Swift)", file=sys.stderr)
            return 2
    if not os.path.isdir(args.sysroot):
        print(f"error: {args.sysroot}: no aarch64 C library (make arm64-deps installs libc6-dev-arm64-cross)",
              file=sys.stderr)
        return 2
    if not glob.glob(os.path.join(args.weights, "*.int8.weights")):
        print(f"error: {args.weights}: no *.int8.weights to take real layers from", file=sys.stderr)
        return 2
    sources = [DRIVER] + sorted(glob.glob(os.path.join(ROOT, "Sources", "CKernels", "*.c"))) + sorted(
        glob.glob(os.path.join(ROOT, "Sources", "CPreprocessing", "*.c")))
    includes = ["-I" + os.path.join(ROOT, "Sources", "CKernels", "include"),
                "-I" + os.path.join(ROOT, "Sources", "CPreprocessing", "include")]
    with tempfile.TemporaryDirectory() as tmp:
        host, arm = os.path.join(tmp, "check-host"), os.path.join(tmp, "check-arm64")
        builds = [
            [args.clang, "-O2", "-std=gnu11", *includes, *sources, "-lm", "-o", host],
            [args.clang, "--target=aarch64-linux-gnu", "-fuse-ld=lld", "-O2", "-std=gnu11", *includes, *sources, "-lm",
             "-o", arm],
        ]
        for argv in builds:
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"error: the build failed: {' '.join(argv)}\n{done.stderr}", file=sys.stderr)
                return 2
        layers = os.path.join(tmp, "layers.txt")
        with open(layers, "w") as file:
            file.write(shipped_layers(args.weights))
        here = subprocess.run([host, "all", layers], capture_output=True, text=True, check=True).stdout
        # qemu's CPUs: `max` has dotprod and i8mm (levels 0, 5 and 6 run), cortex-a76 dotprod only, cortex-a72
        # neither: each run says which levels the kernels' own detection (getauxval) chose.
        runs = {}
        for cpu in ARM_CPUS:
            runs[cpu] = subprocess.run([args.qemu, "-cpu", cpu, "-L", args.sysroot, arm, "all", layers],
                                       capture_output=True, text=True, check=True).stdout
    ours, everything = load(here), load(runs["max"])
    theirs = {key: values for key, values in everything.items() if key[1] == 0}
    levels = sorted({level for _, level in ours})
    failures = 0
    for cpu, expected in ARM_CPUS.items():
        ran = sorted({level for _, level in load(runs[cpu])})
        if ran != expected:
            print(f"FAIL: ARM64 {cpu}: levels {ran} ran, expected {expected}")
            failures += 1
    names = {0: "portable", 1: "avx2", 2: "avx-vnni", 3: "avx512", 4: "avx512-vnni"}
    print(f"ARM64 (qemu-user) against this machine's kernels, levels here: "
          f"{', '.join(f'{level} {names.get(level, level)}' for level in levels)}")
    print(f"{'case':40s} {'values':>6s}  {'check':42s} ARM64 = AVX2 here")
    for (name, _), values in theirs.items():
        reference = ours.get((name, 0))
        if reference is None:
            print(f"{name:40s} FAIL: not run here")
            failures += 1
            continue
        ok, check = compare(name, values, reference)
        avx2 = ours.get((name, 1))
        same_avx2 = "-" if avx2 is None else ("yes" if avx2 == values else "no")
        print(f"{name:40s} {len(values):6d}  {('' if ok else 'FAIL: ') + check:42s} {same_avx2}")
        failures += 0 if ok else 1
    # ARM64's own levels (NEON dot products) against its portable one: the same bits in every case, since the
    # 8-bit sums are exact and the rest is the same C.
    for level, label in ((5, "neon-dotprod"), (6, "neon-i8mm")):
        cases = {name: values for (name, at), values in everything.items() if at == level}
        bad = [name for name, values in cases.items() if values != theirs.get((name, 0))]
        missing = sorted({name for name, _ in theirs} - set(cases))
        for name in bad + missing:
            print(f"{name:40s} FAIL: ARM64 {label} is not the same bits as ARM64 portable")
        failures += len(bad) + len(missing)
        print(f"ARM64 {label}: {len(cases)} cases, {len(cases) - len(bad)} the same bits as ARM64 portable")
    # This machine's own levels against its portable one, by the same rules (the Swift tests compare them too;
    # here the narrow-weight AVX2 path and every kernel are covered from C).
    for (name, level), values in sorted(ours.items()):
        reference = ours.get((name, 0))
        if level == 0 or reference is None:
            continue
        ok, check = compare(name, values, reference)
        if not ok:
            print(f"{name:40s} FAIL: level {level} here against the portable level: {check}")
            failures += 1
    for name in sorted({name for name, level in ours if level == 0}):
        for level in levels[1:]:
            if (name, level) not in ours:
                print(f"{name:40s} FAIL: not run at level {level} here")
                failures += 1
    missing = {name for name, _ in ours} - {name for name, _ in theirs}
    for name in sorted(missing):
        print(f"{name:40s} FAIL: not run on ARM64")
        failures += 1
    print(f"{len(theirs)} cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
