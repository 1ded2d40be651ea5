#!/usr/bin/env python3
"""Copies a few of ONNX's own importer test cases into Tests/ONNXTests/Suite, so that `make test` holds them.

The cases are from the `onnx` wheel's onnx/backend/test/data/ (Apache-2.0, the ONNX project: see
Tests/ONNXTests/Suite/README.md). For each case FOLDER/NAME this writes NAME.onnx (the model as it is),
NAME.inputs.npy (its input, float32, the batch first) and NAME.outputs.npy (ONNX's expected output, float32); and
three cases of ours, crafted-*, whose expected outputs are ONNX Runtime's (it needs onnxruntime in the venv).
Never run by `make test`, which reads the committed files:

    python3 -m venv $HOME/.venvs/onnx && $HOME/.venvs/onnx/bin/pip install onnx numpy
    $HOME/.venvs/onnx/bin/python scripts/onnx/copy_suite_fixtures.py
"""
import os
import shutil

import numpy
import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "ONNXTests", "Suite")
DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")

# One or two cases of each operator family the importer reads, and three it refuses (no data copied for those).
CASES = [
    "pytorch-converted/test_Conv1d_dilated", "pytorch-converted/test_Conv1d_groups", "pytorch-converted/test_Conv1d_pad2size1",
    "pytorch-converted/test_Conv2d_depthwise_padded", "pytorch-converted/test_Conv2d_depthwise_with_multiplier",
    "pytorch-converted/test_Conv2d_padding", "pytorch-converted/test_Conv2d_dilated", "pytorch-converted/test_Conv3d_dilated_strided",
    "pytorch-converted/test_Conv3d_groups", "pytorch-converted/test_Conv3d_stride_padding",
    "pytorch-converted/test_AvgPool1d", "pytorch-converted/test_AvgPool3d_stride", "pytorch-converted/test_MaxPool2d",
    "pytorch-converted/test_MaxPool3d_stride_padding", "pytorch-converted/test_BatchNorm1d_3d_input_eval",
    "pytorch-converted/test_BatchNorm3d_momentum_eval", "pytorch-converted/test_PReLU_1d", "pytorch-converted/test_PReLU_2d_multiparam",
    "pytorch-converted/test_ConstantPad2d", "pytorch-converted/test_ReflectionPad2d", "pytorch-converted/test_ReplicationPad2d",
    "pytorch-converted/test_ELU", "pytorch-converted/test_SELU", "pytorch-converted/test_Softplus", "pytorch-converted/test_Softmin",
    "pytorch-converted/test_log_softmax_dim3", "pytorch-converted/test_softmax_functional_dim3", "pytorch-converted/test_PixelShuffle",
    "pytorch-converted/test_Linear", "pytorch-converted/test_Linear_no_bias",
    "pytorch-operator/test_operator_clip", "pytorch-operator/test_operator_pad", "pytorch-operator/test_operator_reduced_mean",
    "pytorch-operator/test_operator_reduced_sum_keepdim", "pytorch-operator/test_operator_flatten",
    "pytorch-converted/test_ConvTranspose2d", "pytorch-converted/test_ConvTranspose2d_no_bias",
]
REFUSED = [
    "pytorch-converted/test_Softsign", "pytorch-converted/test_GLU", "pytorch-converted/test_MaxPool2d_stride_padding_dilation",
]


def crafted():
    """Cases of ours in the same form (`crafted-*`), made with onnx.helper, their expected outputs from ONNX Runtime:
    layouts the suite has no case of (operators after a global average pool, a padded max pool with ceil_mode)."""
    import onnxruntime as ort
    from onnx import helper

    rng = np.random.default_rng(37)

    def weight(name, shape):
        return numpy_helper.from_array(rng.normal(size=shape).astype(np.float32), name)

    cases = {
        "crafted-gap-pad": ([1, 3, 4, 4], [
            helper.make_node("GlobalAveragePool", ["x"], ["g"]), helper.make_node("Pad", ["g", "p"], ["y"])],
            [numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64), "p")]),
        "crafted-gap-add-conv": ([1, 3, 5, 5], [
            helper.make_node("GlobalAveragePool", ["x"], ["g"]), helper.make_node("Add", ["g", "c"], ["a"]),
            helper.make_node("Conv", ["a", "w"], ["y"])],
            [weight("c", [1, 3, 1, 1]), weight("w", [4, 3, 1, 1])]),
        "crafted-maxpool-pads-ceil": ([1, 2, 7, 6], [
            helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1)], []),
    }
    for name, (shape, nodes, initializers) in cases.items():
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        path = os.path.join(OUT, name + ".onnx")
        onnx.save(model, path)
        given = rng.normal(size=[2] + shape[1:]).astype(np.float32)
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        expected = np.concatenate([session.run(None, {"x": given[i:i + 1]})[0] for i in range(2)])
        numpy.save(os.path.join(OUT, name + ".inputs.npy"), given)
        numpy.save(os.path.join(OUT, name + ".outputs.npy"), expected.astype(np.float32))


def tensor(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return numpy_helper.to_array(proto)


def main():
    os.makedirs(OUT, exist_ok=True)
    for case in CASES + REFUSED:
        folder = os.path.join(DATA, case)
        name = os.path.basename(case)
        shutil.copyfile(os.path.join(folder, "model.onnx"), os.path.join(OUT, name + ".onnx"))
        if case in REFUSED:
            continue
        given = tensor(os.path.join(folder, "test_data_set_0", "input_0.pb"))
        expected = tensor(os.path.join(folder, "test_data_set_0", "output_0.pb"))
        numpy.save(os.path.join(OUT, name + ".inputs.npy"), numpy.ascontiguousarray(given, dtype=numpy.float32))
        numpy.save(os.path.join(OUT, name + ".outputs.npy"), numpy.ascontiguousarray(expected, dtype=numpy.float32))
    crafted()
    print(f"{len(CASES)} cases, 3 crafted ones and {len(REFUSED)} refused models in {OUT} (onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
