#!/usr/bin/env python3
"""Regenerates Tests/ONNXTests/Fixtures: small models exported by PyTorch (torch.onnx.export) and by Keras through
tf2onnx, with ONNX Runtime's outputs for fixed inputs, which the tests compare with `classify run`.

Never run by `make test` (which only reads the committed files). Needs a venv with torch, onnxscript (for the
torch.export exporter), tensorflow-cpu, tf2onnx, onnx and onnxruntime, and a built classify (for the shape rasters
the Keras model trains on):

    python3 -m venv ~/.venvs/onnx && ~/.venvs/onnx/bin/pip install torch onnxscript tensorflow-cpu tf2onnx onnx onnxruntime
    swift build -c release --product classify
    ~/.venvs/onnx/bin/python scripts/onnx/make_fixtures.py [--classify .build/release/classify]

Each fixture NAME has NAME.onnx, NAME.onnx.json (the sidecar: labels and task), NAME.inputs.npy (float32, the
model's input layout) and NAME.outputs.csv (ORT's outputs, one row per input, 9 significant digits; for a graph that
does not end in Softmax, their softmax, as the import appends one). The Keras
shape CNN also has NAME.accuracy.json: Keras's own accuracy on Datasets/shapes/test.csv, or, after `--keras-accuracy-only`
(for a regenerated test file; needs onnxruntime and a built classify), ONNX Runtime's on the same exported graph.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "ONNXTests", "Fixtures")
SHAPES = ["circle", "triangle", "square", "star", "other"]
MOTION = ["walking", "running", "still"]


def write_fixture(name, path, inputs, labels, task, extra=None):
    import onnx
    import onnxruntime as ort

    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = session.run(None, {session.get_inputs()[0].name: inputs})[0]
    operators = [node.op_type for node in model.graph.node if node.op_type not in ("QuantizeLinear", "DequantizeLinear")]
    if operators[-1] != "Softmax":
        # The import appends a softmax to a graph that ends in logits (the recognizers decide on probabilities).
        shifted = np.exp(outputs - outputs.max(axis=1, keepdims=True))
        outputs = shifted / shifted.sum(axis=1, keepdims=True)
    np.save(os.path.join(OUT, f"{name}.inputs.npy"), inputs.astype("<f4"))
    with open(os.path.join(OUT, f"{name}.outputs.csv"), "w") as file:
        for row in outputs.reshape(outputs.shape[0], -1):
            file.write(" ".join(f"{v:.9g}" for v in row) + "\n")
    sidecar = {"labels": labels, "task": task, "description": f"{name} (fixture)"}
    with open(os.path.join(OUT, f"{name}.onnx.json"), "w") as file:
        json.dump(sidecar, file, sort_keys=True)
        file.write("\n")
    if path != os.path.join(OUT, f"{name}.onnx"):
        os.replace(path, os.path.join(OUT, f"{name}.onnx"))
    ops = sorted({node.op_type for node in model.graph.node})
    print(f"{name}: {inputs.shape[0]} inputs, ops {', '.join(ops)}; {os.path.getsize(os.path.join(OUT, name + '.onnx'))} bytes")
    if extra:
        with open(os.path.join(OUT, f"{name}.accuracy.json"), "w") as file:
            json.dump(extra, file, sort_keys=True)
            file.write("\n")


def torch_fixtures(rng):
    import torch
    from torch import nn

    torch.manual_seed(7)

    class ShapeCNN(nn.Module):
        """NCHW convolutions, batch normalization (folded at import), a flatten of channel-first maps."""

        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(8, 12, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                nn.Flatten(), nn.Linear(12 * 4 * 4, 5), nn.Softmax(dim=1))

        def forward(self, x):
            return self.body(x)

    class ShapeGAP(nn.Module):
        """Strided and valid convolutions, global average pooling, Tanh and Sigmoid."""

        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(1, 6, 3, stride=2, padding=0), nn.Tanh(), nn.Conv2d(6, 10, 3, padding=1), nn.Sigmoid(),
                nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(10, 5))

        def forward(self, x):
            return self.body(x)

    class MotionMLP(nn.Module):
        """A perceptron over motion windows: Gemm, LeakyReLU, Dropout (inference), BatchNorm1d, Softmax."""

        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Linear(194, 24), nn.BatchNorm1d(24), nn.LeakyReLU(0.1), nn.Dropout(0.5), nn.Linear(24, 3), nn.Softmax(dim=1))

        def forward(self, x):
            return self.body(x)

    cases = [
        ("torch-shape-cnn", ShapeCNN(), (1, 1, 16, 16), SHAPES, "shape"),
        ("torch-shape-gap", ShapeGAP(), (1, 1, 16, 16), SHAPES, "shape"),
        ("torch-motion-mlp", MotionMLP(), (1, 194), MOTION, "motion"),
    ]
    for name, module, shape, labels, task in cases:
        export(name, module, shape, labels, task, rng, dynamo=False)
    # The exporter PyTorch uses by default since 2.9 (torch.export; needs onnxscript): its global average pooling
    # is a ReduceMean, and its weights must be kept in the file (external_data=False).
    export("torch-dynamo-shape-gap", ShapeGAP(), (1, 1, 16, 16), SHAPES, "shape", rng, dynamo=True)


def export(name, module, shape, labels, task, rng, dynamo):
    import torch
    from torch import nn

    # Batch norm with statistics of its own, so that folding it is tested.
    for layer in module.modules():
        if isinstance(layer, (nn.BatchNorm1d, nn.BatchNorm2d)):
            layer.running_mean.uniform_(-0.5, 0.5)
            layer.running_var.uniform_(0.5, 2.0)
            layer.weight.data.uniform_(0.5, 1.5)
            layer.bias.data.uniform_(-0.2, 0.2)
    module.eval()
    inputs = rng.random((16,) + shape[1:]).astype(np.float32)
    path = os.path.join(OUT, f"{name}.onnx")
    if dynamo:
        torch.onnx.export(
            module, (torch.from_numpy(inputs[:1]),), path, input_names=["input"], output_names=["output"],
            dynamic_shapes={"x": {0: torch.export.Dim("N")}}, opset_version=18, dynamo=True, external_data=False)
    else:
        torch.onnx.export(
            module, torch.from_numpy(inputs[:1]), path, input_names=["input"], output_names=["output"],
            dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, opset_version=13, dynamo=False)
    write_fixture(name, path, inputs, labels, task)


def shape_rasters(classify, dataset, work):
    """The rasters our preprocessing makes of a shape dataset's drawings, and their labels, in file order."""
    inputs = os.path.join(work, os.path.basename(dataset) + ".npy")
    subprocess.run(
        [classify, "run", "Weights/shape-classifier.f32.weights", "--dataset", dataset, "--save-inputs", inputs],
        check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    labels, seen = [], set()
    with open(os.path.join(ROOT, dataset)) as file:
        for row in csv.DictReader(file):
            if row["drawing"] not in seen:
                seen.add(row["drawing"])
                labels.append(SHAPES.index(row["label"]))
    return np.load(inputs), np.array(labels)


def keras_fixtures(rng, classify):
    import tensorflow as tf
    import tf2onnx

    tf.random.set_seed(11)
    with tempfile.TemporaryDirectory() as work:
        train_x, train_y = shape_rasters(classify, "Datasets/shapes/train.csv", work)
        test_x, test_y = shape_rasters(classify, "Datasets/shapes/test.csv", work)
    model = tf.keras.Sequential([
        tf.keras.Input((16, 16, 1), name="input"),
        tf.keras.layers.Conv2D(8, 3, padding="same"), tf.keras.layers.BatchNormalization(), tf.keras.layers.ReLU(),
        tf.keras.layers.MaxPooling2D(2),
        tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu"), tf.keras.layers.MaxPooling2D(2),
        tf.keras.layers.Flatten(), tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(5, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(train_x, train_y, epochs=8, batch_size=64, verbose=0, validation_split=0.1)
    _, accuracy = model.evaluate(test_x, test_y, verbose=0)
    signature = (tf.TensorSpec((None, 16, 16, 1), tf.float32, name="input"),)
    path = os.path.join(OUT, "keras-shape-cnn.onnx")
    # Keras 3 models go through a tf.function (tf2onnx's from_keras reads Keras 2 models only).
    function = tf.function(lambda x: model(x, training=False))
    tf2onnx.convert.from_function(function, input_signature=signature, opset=13, output_path=path)
    inputs = test_x[:16].astype(np.float32)
    write_fixture(
        "keras-shape-cnn", path, inputs, SHAPES, "shape",
        extra={"dataset": "Datasets/shapes/test.csv", "drawings": int(len(test_y)), "reference": "Keras model.evaluate",
               "reference_accuracy": float(accuracy)})
    # A perceptron straight on the NHWC image: no layer that knows channels, so the input is read in its own order.
    mlp = tf.keras.Sequential([
        tf.keras.Input((16, 16, 1), name="input"), tf.keras.layers.Flatten(), tf.keras.layers.Dense(24, activation="tanh"),
        tf.keras.layers.Dense(5, activation="softmax")])
    mlp.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    mlp.fit(train_x, train_y, epochs=2, batch_size=64, verbose=0)
    path = os.path.join(OUT, "keras-shape-mlp.onnx")
    function = tf.function(lambda x: mlp(x, training=False))
    tf2onnx.convert.from_function(function, input_signature=signature, opset=13, output_path=path)
    write_fixture("keras-shape-mlp", path, inputs, SHAPES, "shape")


def qdq_fixture(rng):
    """The PyTorch shape CNN quantized by ONNX Runtime's static QDQ quantization (int8 weights per channel, uint8
    activations): its weights become our int8 and its activation quantization our integer kernels'."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    source = os.path.join(OUT, "torch-shape-cnn.onnx")
    calibration = rng.random((64, 1, 16, 16)).astype(np.float32)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.rows = iter([calibration[i:i + 1] for i in range(len(calibration))])

        def get_next(self):
            row = next(self.rows, None)
            return None if row is None else {"input": row}

    inputs = np.load(os.path.join(OUT, "torch-shape-cnn.inputs.npy"))
    path = os.path.join(OUT, "torch-shape-cnn-qdq.onnx")
    quantize_static(
        source, path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True, weight_type=QuantType.QInt8,
        activation_type=QuantType.QUInt8, op_types_to_quantize=["Conv", "Gemm"])
    write_fixture("torch-shape-cnn-qdq", path, inputs, SHAPES, "shape")
    # The quantizer's defaults: every operator quantized, each ReLU folded into the clamp of the QuantizeLinear after
    # it (a zero point of 0), which the import must keep as a ReLU.
    path = os.path.join(OUT, "torch-shape-cnn-qdq-all.onnx")
    quantize_static(source, path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True)
    write_fixture("torch-shape-cnn-qdq-all", path, inputs, SHAPES, "shape")


def crafted_fixtures(rng):
    """Graphs built by hand for what the exporters above do not make, each a bug the import once had:
    BatchNormalization over a flatten of channel-first maps (PyTorch's BatchNorm1d after nn.Flatten: its parameters
    are in ONNX's feature order), and an opset-21 QuantizeLinear with output_dtype INT8 and no zero point (signed,
    not a clamp at 0)."""
    from onnx import helper, numpy_helper

    def tensor(name, values, dtype=np.float32):
        return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)

    def save(name, nodes, initializers, shape, opset):
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("input", 1, ["N"] + shape)],
            [helper.make_tensor_value_info("output", 1, ["N", 5 if shape == [1, 16, 16] else 3])], initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8 if opset <= 18 else 10
        path = os.path.join(OUT, f"{name}.onnx")
        import onnx
        onnx.save(model, path)
        return path

    features = 2 * 14 * 14
    nodes = [
        helper.make_node("Conv", ["input", "w"], ["c"]), helper.make_node("Flatten", ["c"], ["f"]),
        helper.make_node("BatchNormalization", ["f", "g", "b", "m", "v"], ["n"]),
        helper.make_node("Gemm", ["n", "d"], ["output"], transB=1)]
    initializers = [
        tensor("w", rng.normal(size=(2, 1, 3, 3))), tensor("g", rng.uniform(0.5, 2, features)),
        tensor("b", rng.normal(size=features)), tensor("m", rng.normal(size=features)),
        tensor("v", rng.uniform(0.5, 2, features)), tensor("d", rng.normal(size=(5, features)) * 0.1)]
    path = save("crafted-bn-after-flatten", nodes, initializers, [1, 16, 16], 13)
    write_fixture("crafted-bn-after-flatten", path, rng.random((16, 1, 16, 16)).astype(np.float32), SHAPES, "shape")

    # 3 x 128 int8 weights: at least 256, so the import keeps them int8 and runs the quantization in integers.
    quantized = rng.integers(-127, 128, size=(3, 128)).astype(np.int8)
    nodes = [
        helper.make_node("Gemm", ["input", "w1"], ["a"], transB=1),
        helper.make_node("QuantizeLinear", ["a", "s"], ["q"], output_dtype=3),
        helper.make_node("DequantizeLinear", ["q", "s"], ["x"]),
        helper.make_node("DequantizeLinear", ["w2q", "w2s"], ["w2"], axis=0),
        helper.make_node("Gemm", ["x", "w2"], ["output"], transB=1)]
    initializers = [
        tensor("w1", rng.normal(size=(128, 194)) * 0.1), tensor("s", 0.05), tensor("w2q", quantized, np.int8),
        tensor("w2s", rng.uniform(0.005, 0.02, 3))]
    path = save("crafted-qdq-int8-output-dtype", nodes, initializers, [194], 21)
    write_fixture("crafted-qdq-int8-output-dtype", path, rng.uniform(-1, 1, (16, 194)).astype(np.float32), MOTION, "motion")


def crafted_shape_fixture(name, seed, build):
    """A crafted shape recognizer of 16x16 inputs and 5 outputs, `build(rng, tensor)` giving its nodes (from `input`
    to `output`) and initializers; its own seed, so it adds nothing to the other fixtures' random streams."""
    import onnx
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)

    def tensor(name, values):
        return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)

    nodes, initializers = build(rng, tensor)
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("input", 1, ["N", 1, 16, 16])],
        [helper.make_tensor_value_info("output", 1, ["N", 5])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(OUT, f"{name}.onnx")
    onnx.save(model, path)
    write_fixture(name, path, rng.random((16, 1, 16, 16)).astype(np.float32), SHAPES, "shape")


def crafted_bn_after_transpose():
    """A BatchNormalization after a Transpose to channel-last: its axis 1 is then the rows, not the channels. Refused
    before issue 37; read since, the value put back channel-first around it."""
    from onnx import helper

    def build(rng, tensor):
        nodes = [
            helper.make_node("Conv", ["input", "w", "c0"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Transpose", ["c"], ["t"], perm=[0, 2, 3, 1]),
            helper.make_node("BatchNormalization", ["t", "g", "b", "m", "v"], ["n"]),
            helper.make_node("Flatten", ["n"], ["f"]), helper.make_node("Gemm", ["f", "d"], ["output"], transB=1)]
        return nodes, [
            tensor("w", rng.normal(size=(2, 1, 3, 3))), tensor("c0", rng.normal(size=2)), tensor("g", rng.uniform(0.5, 2, 16)),
            tensor("b", rng.normal(size=16)), tensor("m", rng.normal(size=16)), tensor("v", rng.uniform(0.5, 2, 16)),
            tensor("d", rng.normal(size=(5, 512)) * 0.1)]

    crafted_shape_fixture("crafted-bn-after-transpose", 37, build)


def crafted_maxpool_pads():
    """A recognizer with PyTorch's ResNet-style max pool (3x3, stride 2, pads 1), which our `same` does not make: a
    pad layer repeating the edge before it."""
    from onnx import helper

    def build(rng, tensor):
        nodes = [
            helper.make_node("Conv", ["input", "w", "c0"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Flatten", ["p"], ["f"]), helper.make_node("Gemm", ["f", "d"], ["output"], transB=1)]
        return nodes, [
            tensor("w", rng.normal(size=(4, 1, 3, 3))), tensor("c0", rng.normal(size=4)), tensor("d", rng.normal(size=(5, 256)) * 0.1)]

    crafted_shape_fixture("crafted-maxpool-pads", 38, build)


def keras_accuracy_again(classify):
    """The Keras CNN's accuracy record for today's Datasets/shapes/test.csv, the model kept: ONNX Runtime's accuracy
    on the graph Keras exported (when `classify generate` changes the test file, the model need not be retrained)."""
    import onnxruntime as ort

    path = os.path.join(OUT, "keras-shape-cnn.onnx")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    with tempfile.TemporaryDirectory() as work:
        test_x, test_y = shape_rasters(classify, "Datasets/shapes/test.csv", work)
    # One channel: NCHW and the Keras graph's NHWC hold the same numbers in the same order.
    inputs = test_x.astype(np.float32).reshape(len(test_x), 16, 16, 1)
    scores = session.run(None, {session.get_inputs()[0].name: inputs})[0]
    accuracy = float(np.mean(np.argmax(scores, axis=1) == test_y))
    record = {"dataset": "Datasets/shapes/test.csv", "drawings": int(len(test_y)),
              "reference": f"ONNX Runtime {ort.__version__} on the graph Keras exported", "reference_accuracy": accuracy}
    with open(os.path.join(OUT, "keras-shape-cnn.accuracy.json"), "w") as file:
        json.dump(record, file)
    print(record)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build/release/classify"))
    parser.add_argument("--keras-accuracy-only", action="store_true",
                        help="only rewrite keras-shape-cnn.accuracy.json for today's test file (needs onnxruntime and --classify)")
    arguments = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    if arguments.keras_accuracy_only:
        return keras_accuracy_again(arguments.classify)
    rng = np.random.default_rng(5)
    torch_fixtures(rng)
    qdq_fixture(rng)
    keras_fixtures(rng, arguments.classify)
    crafted_fixtures(rng)
    crafted_bn_after_transpose()
    crafted_maxpool_pads()


if __name__ == "__main__":
    sys.exit(main())
