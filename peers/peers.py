#!/usr/bin/env python3
"""Our shipped models beside LiteRT and ONNX Runtime running the SAME networks with the SAME weights, on one thread.

For each model (shape, motion) this script
1. reads our f32 weights file (Weights/FORMAT.md: magic, version, JSON header, 32-byte aligned little-endian
   tensors, CRC-32) and builds the network from its `architecture` header in Keras (conv weights [out, kh, kw, in]
   become Keras's [kh, kw, in, out], dense [out, in] becomes [in, out]) and, by hand, as an ONNX graph;
2. converts the Keras model to LiteRT f32, LiteRT int8 with dynamic-range quantization (int8 weights, activations
   quantized on the fly), and LiteRT int8 with static quantization (activation ranges calibrated on the samples
   below, like our int8 files' `activationQuantization`);
3. asks our bench (`bench plan-outputs`) for generated samples — rasterized drawings, motion window features — and
   what our compiled f32 and int8 plans answer for them, and checks every peer answers the same (f32 peers to
   1e-4; int8 ones are reported: largest difference and how often the top class agrees);
4. times each peer at batch 1 (median µs per call, what a Python caller sees; "invoke only" leaves out copying
   the input and output) and at batch 1024 (items/s), with one thread;
5. runs `bench shape --json` / `bench motion --json` in the same run and prints our figures and ratios.

With --train it compares training instead: for each architecture `bench train --json` reports (the shipped ones,
as weights files record them), the same network built in Keras is trained with `fit` at batch 64, Adam (1e-3),
sparse softmax cross-entropy on logits, on 2 threads (TensorFlow's intra- and inter-op pools both set to 2), and
our `bench train --json --threads 2` runs in the same run, the two alternating round by round; it prints samples/s,
ours / theirs, and checks the shape architecture's target (ours ≥ 2× Keras).

Optional and slow (TensorFlow loads in ~10 s): never part of `make test`. See peers/README.md for the venv.
"""
import argparse
import contextlib
import io
import json
import math
import os
import struct
import subprocess
import sys
import time
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np

MAGIC = b"\x89ODML\r\n\x1a"
F32_TOLERANCE = 1e-4  # largest |peer - ours| allowed between f32 runtimes on a softmax output
BATCH = 1024


def fail(message):
    sys.exit(f"peers.py: {message}")


# ---------------------------------------------------------------------------------------------------------------
# Our weights file
# ---------------------------------------------------------------------------------------------------------------

def read_weights(path):
    """The header and f32 tensors of one weights file, checked as Weights/FORMAT.md says."""
    try:
        data = open(path, "rb").read()
    except OSError as error:
        fail(f"cannot read {path}: {error}")
    if len(data) < 28 or data[:8] != MAGIC:
        fail(f"{path} is not a weights file (no \\x89ODML magic)")
    version, header_length, file_length = struct.unpack_from("<IIQ", data, 8)
    if version not in (1, 2):
        fail(f"{path}: weights format version {version}; this script reads 1 and 2")
    if file_length != len(data):
        fail(f"{path}: header says {file_length} bytes, the file has {len(data)}")
    (stored_crc,) = struct.unpack_from("<I", data, len(data) - 4)
    if zlib.crc32(data[:-4]) & 0xFFFFFFFF != stored_crc:
        fail(f"{path}: CRC-32 mismatch; the file is damaged")
    header = json.loads(data[24:24 + header_length].decode("utf-8"))
    data_start = math.ceil((24 + header_length) / 32) * 32
    tensors = {}
    for entry in header["tensors"]:
        shape, name = entry["shape"], entry["name"]
        if entry["format"] != "f32":
            fail(f"{path}: tensor {name} is stored {entry['format']}; give the .f32.weights file")
        count = int(np.prod(shape))
        if entry["length"] != 4 * count:
            fail(f"{path}: tensor {name} {shape} has {entry['length']} bytes, expected {4 * count}")
        tensors[name] = np.frombuffer(data, dtype="<f4", count=count, offset=data_start + entry["offset"]).reshape(shape).copy()
    return header, tensors


def layers_of(header):
    """(index, kind, parameters) for each layer of the architecture header."""
    for index, layer in enumerate(header["architecture"]):
        ((kind, parameters),) = layer.items()
        yield index, kind, parameters


def activation_name(parameters):
    ((function, _),) = parameters["function"].items()
    if function not in ("relu", "softmax", "sigmoid", "tanh"):
        fail(f"activation {function} is not supported here")
    return function


def describe(header):
    parts = []
    for _, kind, p in layers_of(header):
        if kind == "conv2D":
            parts.append(f"conv {p['kernelHeight']}x{p['kernelWidth']} {p['outChannels']}")
        elif kind == "dense":
            parts.append(f"dense {p['outFeatures']}")
        elif kind == "pool2D":
            parts.append(f"{p['kind']}pool {p['height']}")
        elif kind == "globalAveragePool":
            parts.append("GAP")
        elif kind == "activation":
            parts[-1] += f" {activation_name(p)}"
        else:
            parts.append(kind)
    return "x".join(map(str, header["input"]["shape"])) + " → " + " → ".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# The same network in Keras and in ONNX
# ---------------------------------------------------------------------------------------------------------------

def keras_model(header, tensors=None):
    """Our architecture in Keras, with our weights (`tensors`), or Keras's own initial weights without them. `header`
    needs only `input.shape` and `architecture`."""
    import keras
    from keras import layers

    inputs = keras.Input(tuple(header["input"]["shape"]))
    x = inputs
    for index, kind, p in layers_of(header):
        weight, bias = (tensors.get(f"{index}.weight"), tensors.get(f"{index}.bias")) if tensors else (None, None)
        if kind == "conv2D":
            layer = layers.Conv2D(p["outChannels"], (p["kernelHeight"], p["kernelWidth"]),
                                  strides=(p["strideHeight"], p["strideWidth"]), padding=p["padding"])
            x = layer(x)
            if weight is not None:
                layer.set_weights([weight.transpose(1, 2, 3, 0), bias])  # [out, kh, kw, in] → [kh, kw, in, out]
        elif kind == "dense":
            layer = layers.Dense(p["outFeatures"])
            x = layer(x)
            if weight is not None:
                layer.set_weights([weight.T, bias])  # [out, in] → [in, out]
        elif kind == "activation":
            x = layers.Activation(activation_name(p))(x)
        elif kind == "pool2D":
            pool = layers.MaxPooling2D if p["kind"] == "max" else layers.AveragePooling2D
            x = pool((p["height"], p["width"]), strides=(p["strideHeight"], p["strideWidth"]), padding=p["padding"])(x)
        elif kind == "globalAveragePool":
            x = (layers.GlobalAveragePooling2D() if len(x.shape) == 4 else layers.GlobalAveragePooling1D())(x)
        elif kind == "flatten":
            x = layers.Flatten()(x)
        else:
            fail(f"layer kind {kind} is not supported here")
    return keras.Model(inputs, x)


def same_pads(size, kernel, stride, padding):
    """(begin, end) padding and output size along one axis, as Weights/FORMAT.md defines `same` and `valid`."""
    if padding == "valid":
        return (0, 0), (size - kernel) // stride + 1
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return (total // 2, total - total // 2), out


def onnx_model(header, tensors):
    """Our architecture as an ONNX graph built node by node (NCHW inside, our NHWC at the input), batch axis free."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, initializers = [], []
    shape = list(header["input"]["shape"])
    name = "input"
    channels_first = False
    if len(shape) == 3:
        nodes.append(helper.make_node("Transpose", [name], ["nchw"], perm=[0, 3, 1, 2]))
        name, channels_first = "nchw", True

    def add(op, inputs, **attributes):
        nonlocal name
        output = f"t{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        name = output

    for index, kind, p in layers_of(header):
        if kind == "conv2D":
            (top, bottom), height = same_pads(shape[0], p["kernelHeight"], p["strideHeight"], p["padding"])
            (left, right), width = same_pads(shape[1], p["kernelWidth"], p["strideWidth"], p["padding"])
            initializers += [numpy_helper.from_array(tensors[f"{index}.weight"].transpose(0, 3, 1, 2).copy(), f"w{index}"),
                             numpy_helper.from_array(tensors[f"{index}.bias"], f"b{index}")]
            add("Conv", [name, f"w{index}", f"b{index}"], pads=[top, left, bottom, right],
                strides=[p["strideHeight"], p["strideWidth"]])
            shape = [height, width, p["outChannels"]]
        elif kind == "dense":
            initializers += [numpy_helper.from_array(tensors[f"{index}.weight"], f"w{index}"),
                             numpy_helper.from_array(tensors[f"{index}.bias"], f"b{index}")]
            add("Gemm", [name, f"w{index}", f"b{index}"], transB=1)
            shape = [p["outFeatures"]]
        elif kind == "activation":
            function = activation_name(p)
            add({"relu": "Relu", "softmax": "Softmax", "sigmoid": "Sigmoid", "tanh": "Tanh"}[function], [name],
                **({"axis": -1} if function == "softmax" else {}))
        elif kind == "pool2D":
            (top, bottom), height = same_pads(shape[0], p["height"], p["strideHeight"], p["padding"])
            (left, right), width = same_pads(shape[1], p["width"], p["strideWidth"], p["padding"])
            add("MaxPool" if p["kind"] == "max" else "AveragePool", [name], kernel_shape=[p["height"], p["width"]],
                strides=[p["strideHeight"], p["strideWidth"]], pads=[top, left, bottom, right])
            shape = [height, width, shape[2]]
        elif kind == "globalAveragePool":
            add("GlobalAveragePool", [name])
            add("Flatten", [name])
            shape, channels_first = [shape[-1]], False
        elif kind == "flatten":
            if channels_first:  # our flatten reads channels-last
                add("Transpose", [name], perm=[0, 2, 3, 1])
                channels_first = False
            add("Flatten", [name])
            shape = [int(np.prod(shape))]
        else:
            fail(f"layer kind {kind} is not supported here")
    graph = helper.make_graph(
        nodes, header["name"],
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N"] + list(header["input"]["shape"]))],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N"] + shape)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


# ---------------------------------------------------------------------------------------------------------------
# Runtimes
# ---------------------------------------------------------------------------------------------------------------

class LiteRT:
    """One converted model in the LiteRT interpreter, one thread, resized for a batch."""

    def __init__(self, content, batch, input_shape):
        from ai_edge_litert.interpreter import Interpreter

        with quiet():  # "Created TensorFlow Lite XNNPACK delegate for CPU."
            self.interpreter = Interpreter(model_content=content, num_threads=1)
            detail = self.interpreter.get_input_details()[0]
            self.input = detail["index"]
            self.interpreter.resize_tensor_input(self.input, [batch] + list(input_shape))
            self.interpreter.allocate_tensors()
        self.output = self.interpreter.get_output_details()[0]["index"]

    def __call__(self, x):
        self.interpreter.set_tensor(self.input, x)
        self.interpreter.invoke()
        return self.interpreter.get_tensor(self.output)


VERBOSE = False


@contextlib.contextmanager
def quiet():
    """Standard output and error (file descriptors 1 and 2, where TensorFlow's C++ logs go) silenced, unless
    --verbose; a failure inside still raises, and --verbose shows what was logged before it."""
    if VERBOSE:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in saved + [null]:
            os.close(descriptor)


def litert_models(model, header, calibration):
    """LiteRT flatbuffers: f32, int8 dynamic range, int8 static (calibrated on `calibration`, float in and out)."""
    import tensorflow as tf

    def convert(configure):
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
        configure(converter)
        with quiet():  # Keras's export prints where it saved the artifact; the converter logs from C++
            return converter.convert()

    def dynamic(converter):
        converter.optimizations = [tf.lite.Optimize.DEFAULT]

    def static(converter):
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda: ([sample[None, ...]] for sample in calibration)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]

    return {"LiteRT f32": convert(lambda c: None), "LiteRT int8 dynamic": convert(dynamic),
            "LiteRT int8 static": convert(static)}


class ORT:
    """The ONNX graph in ONNX Runtime, one thread."""

    def __init__(self, model):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])

    def __call__(self, x):
        return self.session.run(None, {"input": x})[0]

    def bound(self, x):
        """A call with input and output bound once (io binding): the least Python work per run."""
        binding = self.session.io_binding()
        binding.bind_cpu_input("input", x)
        binding.bind_output(self.session.get_outputs()[0].name)
        self.session.run_with_iobinding(binding)
        return lambda: self.session.run_with_iobinding(binding)


def median_seconds(call, budget=1.5, sample_seconds=0.01, minimum=7, maximum=41):
    """Median seconds per call: a warm-up, then samples each lasting about `sample_seconds` (as our bench times)."""
    call()
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-9)
    calls = max(1, int(sample_seconds / once))
    samples = []
    began = time.perf_counter()
    while len(samples) < maximum and (len(samples) < minimum or time.perf_counter() - began < budget):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - start) / calls)
    return float(np.median(samples))


# ---------------------------------------------------------------------------------------------------------------
# Our side
# ---------------------------------------------------------------------------------------------------------------

def run_bench(bench, arguments):
    """Our bench's output lines (its exit status is 1 when a target is missed, which is not an error here)."""
    try:
        result = subprocess.run([bench] + arguments, capture_output=True, text=True, timeout=900)
    except FileNotFoundError:
        fail(f"no bench at {bench}: build it with `swift build --package-path Bench --scratch-path .build-bench -c release --product bench` (or pass --bench)")
    if result.returncode not in (0, 1) or not result.stdout.strip():
        fail(f"{bench} {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout, result.stderr


def ours(bench, model, weights, quick):
    """Our bench's JSON report for `model`: notes, rows by name, targets (stderr lines)."""
    stdout, stderr = run_bench(bench, [model, "--weights", weights, "--json"] + (["--quick"] if quick else []))
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    notes = next((line for line in lines if "bench" in line), {})
    rows = {line["name"]: line for line in lines if "median_s" in line}
    allocations = {line["name"]: line["allocations_per_call"] for line in lines if "allocations_per_call" in line}
    return notes, rows, allocations, [line for line in stderr.splitlines() if line.startswith(("PASS", "FAIL", "targets"))]


def samples_of(bench, model, weights, input_shape):
    """Generated inputs (shaped `[N] + input_shape`) and our f32 and int8 plans' outputs for them."""
    stdout, _ = run_bench(bench, ["plan-outputs", model, "--weights", weights, "--count", "256"])
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    pick = lambda key: np.array([line[key] for line in lines], dtype=np.float32)
    return pick("input").reshape([-1] + list(input_shape)), pick("f32"), pick("int8")


# ---------------------------------------------------------------------------------------------------------------

def compare(name, theirs, reference, label, strict):
    difference = float(np.max(np.abs(theirs - reference)))
    agreement = float(np.mean(np.argmax(theirs, 1) == np.argmax(reference, 1))) * 100
    verdict = ("ok" if difference <= F32_TOLERANCE else "DIFFERENT") if strict else "(quantized: reported)"
    print(f"  {name:22s} vs our {label:10s} max |difference| {difference:.2e}  same top class {agreement:5.1f}%  {verdict}")
    return not strict or difference <= F32_TOLERANCE


# ---------------------------------------------------------------------------------------------------------------
# Training: Keras fit beside our bench train, same architectures, same run
# ---------------------------------------------------------------------------------------------------------------

TRAIN_BATCH = 64
TRAIN_THREADS = 2
TRAIN_TARGET = 2.0  # ours / Keras samples/s the shape architecture must reach (issue 13)


def our_training(bench, quick):
    """`bench train --json --threads 2`: one object per architecture, by name."""
    stdout, _ = run_bench(bench, ["train", "--json", "--threads", str(TRAIN_THREADS)] + (["--quick"] if quick else []))
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if not rows:
        fail(f"{bench} train --json printed no architectures")
    for row in rows:
        if row.get("batch") != TRAIN_BATCH or row.get("threads") != TRAIN_THREADS:
            fail(f"{bench} train measured batch {row.get('batch')} on {row.get('threads')} threads, not batch "
                 f"{TRAIN_BATCH} on {TRAIN_THREADS}")
    return {row["name"]: row for row in rows}


class KerasTraining:
    """One architecture in Keras, compiled as a Keras user trains it: Adam (1e-3), sparse softmax cross-entropy on
    the logits, `fit` at batch 64 on random data of the right shape (speed does not depend on the values)."""

    def __init__(self, row, steps):
        import keras

        header = {"input": {"shape": row["input_shape"]}, "architecture": row["architecture"]}
        with quiet():
            self.model = keras_model(header)
            self.model.compile(optimizer=keras.optimizers.Adam(1e-3),
                               loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        generator = np.random.default_rng(31)
        self.count = TRAIN_BATCH * steps
        self.x = generator.random((self.count, *row["input_shape"]), dtype=np.float32)
        self.y = generator.integers(0, row["classes"], self.count)
        self.parameters = self.model.count_params()
        self.fit()  # warm-up: traces and compiles the train function

    def fit(self):
        with quiet():
            self.model.fit(self.x, self.y, batch_size=TRAIN_BATCH, epochs=1, verbose=0)

    def samples_per_second(self):
        start = time.perf_counter()
        self.fit()
        return self.count / (time.perf_counter() - start)


def train_comparison(arguments):
    """Rounds of (ours, theirs) for every architecture; medians; ratios; the shape target."""
    import tensorflow as tf

    rounds = 1 if arguments.quick else 3
    names = {"shape": "shape-classifier", "motion": "motion-state"}
    wanted = [names[m] for m in arguments.models.split(",") if m in names]
    if len(wanted) != len(arguments.models.split(",")):
        fail(f"unknown model in {arguments.models}; use shape and/or motion")
    first = our_training(arguments.bench, arguments.quick)
    missing = [name for name in wanted if name not in first]
    if missing:
        fail(f"bench train --json reported no {', '.join(missing)}")
    # Epochs of 400 steps, as ../shared/peers measured Keras: long enough that fit's per-epoch set-up is amortized.
    steps = {name: 40 if arguments.quick else 400 for name in wanted}
    theirs = {name: KerasTraining(first[name], steps[name]) for name in wanted}
    ours_rates = {name: [] for name in wanted}
    their_rates = {name: [] for name in wanted}
    for round_index in range(rounds):
        ours_now = first if round_index == 0 else our_training(arguments.bench, arguments.quick)
        for name in wanted:
            ours_rates[name].append(ours_now[name]["samples_per_s"])
            their_rates[name].append(theirs[name].samples_per_second())

    print(f"training, batch {TRAIN_BATCH}, Adam, {TRAIN_THREADS} threads each; {rounds} round(s) of ours then Keras, medians")
    print(f"TensorFlow {tf.__version__} Keras fit: intra-op threads {tf.config.threading.get_intra_op_parallelism_threads()}, "
          f"inter-op {tf.config.threading.get_inter_op_parallelism_threads()}")
    print(f"{'architecture':20s}{'parameters':>12s}{'ours samples/s':>17s}{'Keras samples/s':>18s}{'ours / Keras':>14s}")
    ratios = {}
    for name in wanted:
        row = first[name]
        ours_rate, their_rate = float(np.median(ours_rates[name])), float(np.median(their_rates[name]))
        ratios[name] = ours_rate / their_rate
        if theirs[name].parameters != row["parameters"]:
            fail(f"{name}: Keras built {theirs[name].parameters} parameters, ours has {row['parameters']}")
        print(f"{name:20s}{row['parameters']:>12,d}{ours_rate:>17,.0f}{their_rate:>18,.0f}{ratios[name]:>13.2f}x")
        if len(ours_rates[name]) > 1:
            print(f"  rounds: ours {', '.join(f'{r:,.0f}' for r in ours_rates[name])}; "
                  f"Keras {', '.join(f'{r:,.0f}' for r in their_rates[name])}")
    if "shape-classifier" in ratios:
        ratio = ratios["shape-classifier"]
        verdict = "PASS" if ratio >= TRAIN_TARGET else "FAIL"
        print(f"{verdict}  shape-classifier training samples/s, ours / Keras fit (batch {TRAIN_BATCH}, {TRAIN_THREADS} "
              f"threads): {ratio:.2f} (≥ {TRAIN_TARGET:g})")
        if verdict == "FAIL":
            sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", default="Weights", help="folder with <model>.f32.weights and .int8.weights")
    parser.add_argument("--bench", default=".build-bench/release/bench", help="our bench executable (release build)")
    parser.add_argument("--models", default="shape,motion", help="shape, motion or both (comma separated)")
    parser.add_argument("--quick", action="store_true", help="shorter sampling, ours and theirs")
    parser.add_argument("--verbose", action="store_true", help="let TensorFlow and LiteRT log what they do")
    parser.add_argument("--train", action="store_true",
                        help="compare training speed with Keras fit instead (batch 64, Adam, 2 threads each)")
    arguments = parser.parse_args()
    global VERBOSE
    VERBOSE = arguments.verbose
    names = {"shape": "shape-classifier", "motion": "motion-state"}
    budget = 0.4 if arguments.quick else 1.5
    all_agree = True

    with quiet():
        import tensorflow as tf  # noqa: F401  (loads once, before any timing)
        import keras  # noqa: F401
        if arguments.train:
            # Before TensorFlow runs anything: its thread pools are fixed at their first use.
            tf.config.threading.set_intra_op_parallelism_threads(TRAIN_THREADS)
            tf.config.threading.set_inter_op_parallelism_threads(TRAIN_THREADS)
    if arguments.train:
        train_comparison(arguments)
        return

    # Their figures move with their versions (LiteRT f32 on the shape network took 10.4 µs with one install and
    # 6.1 µs with another): every run says which it measured.
    from importlib import metadata
    versions = []
    for package in ("ai-edge-litert", "tensorflow-cpu", "onnxruntime"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} (not installed)")
    print("peers: " + ", ".join(versions))

    for model_name in arguments.models.split(","):
        if model_name not in names:
            fail(f"unknown model {model_name}; use shape and/or motion")
        header, tensors = read_weights(os.path.join(arguments.weights, f"{names[model_name]}.f32.weights"))
        input_shape = header["input"]["shape"]
        print(f"\n== {model_name}: {describe(header)}  ({arguments.weights}/{names[model_name]}.f32.weights)")

        # Our side first, in this same run.
        notes, rows, allocations, targets = ours(arguments.bench, model_name, arguments.weights, arguments.quick)
        inputs, our_f32, our_int8 = samples_of(arguments.bench, model_name, arguments.weights, input_shape)

        keras = keras_model(header, tensors)
        flatbuffers = litert_models(keras, header, inputs[:256])
        onnx = ORT(onnx_model(header, tensors))

        print(f"agreement on {len(inputs)} generated samples (our bench's inputs):")
        all_agree &= compare("Keras f32", keras.predict(inputs, verbose=0), our_f32, "f32 plan", True)
        for label, content in flatbuffers.items():
            outputs = LiteRT(content, len(inputs), input_shape)(inputs)
            strict = label.endswith("f32")
            all_agree &= compare(label, outputs, our_f32, "f32 plan", strict)
            if not strict:
                compare(label, outputs, our_int8, "int8 plan", False)
        all_agree &= compare("ONNX Runtime f32", onnx(inputs), our_f32, "f32 plan", True)
        compare("our int8 plan", our_int8, our_f32, "f32 plan", False)

        batch = np.resize(inputs, (BATCH,) + inputs.shape[1:]).astype(np.float32)
        one = inputs[:1].copy()
        figures = {}
        for label, content in flatbuffers.items():
            single, many = LiteRT(content, 1, input_shape), LiteRT(content, BATCH, input_shape)
            single(one)
            figures[label] = (median_seconds(lambda: single(one), budget), median_seconds(single.interpreter.invoke, budget),
                              BATCH / median_seconds(lambda: many(batch), budget))
        figures["ONNX Runtime f32"] = (median_seconds(lambda: onnx(one), budget), median_seconds(onnx.bound(one), budget),
                                       BATCH / median_seconds(lambda: onnx(batch), budget))

        print(f"\ninference alone, one thread; ours: {notes.get('kernels', '?')}; our int8 plan: {notes.get('int8 plan', '?')}")
        print(f"{'runtime':28s}{'batch 1':>12s}{'invoke only':>14s}{'batch items/s':>22s}")
        for label, (call, invoke, rate) in figures.items():
            print(f"{label:28s}{call * 1e6:>9.2f} µs{invoke * 1e6:>11.2f} µs{rate:>22,.0f}")
        our_rows = {}
        for format in ("f32", "int8"):
            latency = rows.get(f"{model_name}: {format} plan")
            batched = next((row for name, row in rows.items() if name.startswith(f"{model_name}: {format} plan, batch ")), None)
            if latency and batched:
                our_rows[format] = (latency["per_item_s"], batched["items_per_s"])
                print(f"{'ours ' + format + ' plan':28s}{latency['per_item_s'] * 1e6:>9.2f} µs{'':>14s}"
                      f"{batched['items_per_s']:>22,.0f}")
        print(f"(theirs: batch {BATCH}, a Python call: set the input, invoke, get the output; \"invoke only\" is the "
              "interpreter's invoke / ORT's run with io binding.\n ours: InferencePlan.run from Swift into a caller's "
              "buffer; the bench's batch row: shape 256 drawings sample by sample, motion 1024 windows in blocks of 64 "
              "rows, each layer one matrix product)")

        print("\nratios (ours / theirs: time at batch 1, below 1 = ours faster; items/s at batch, above 1 = ours faster)")
        for format, peer in (("f32", "LiteRT f32"), ("int8", "LiteRT int8 dynamic"), ("int8", "LiteRT int8 static"),
                             ("int8", "LiteRT f32"), ("f32", "ONNX Runtime f32"), ("int8", "ONNX Runtime f32")):
            if format not in our_rows or peer not in figures:
                continue
            (latency, rate), (call, invoke, their_rate) = our_rows[format], figures[peer]
            print(f"  ours {format:4s} / {peer:20s} batch 1: {latency / call:5.2f}  (invoke only {latency / invoke:5.2f})"
                  f"   throughput: {rate / their_rate:5.2f}x")

        print("\nour whole path and preprocessing (bench, same run):")
        for name, row in rows.items():
            if "plan" not in name or "+" in name:
                print(f"  {name:50s} {row['per_item_s'] * 1e6:8.2f} µs  {row['items_per_s']:>12,.0f} items/s  ({row['threads']} thread(s))")
        for name, count in allocations.items():
            print(f"  heap allocations per {name:40s} {count}")
        for line in targets:
            print(f"  {line}")

    if not all_agree:
        fail("a float peer does not compute what our f32 plan computes (see DIFFERENT above)")


if __name__ == "__main__":
    main()
