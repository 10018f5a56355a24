#!/usr/bin/python3
"""Writes configs/tiny_mlp.onnx, the model configs/onnx_example.yaml tunes: x[8,16] -> MatMul+Add+Relu ->
[8,32] -> MatMul+Add -> y[8,8], with fixed pseudo-random weights. The file is checked in (3 KB) so that the
example runs without Python; run this again (/usr/bin/python3 with onnx and numpy) to regenerate it."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tiny_mlp(batch=8, inputs=16, hidden=32, outputs=8, seed=7):
    rng = np.random.default_rng(seed)

    def weight(name, *shape):
        # Scaled like a trained layer's weights, so that activations stay near 1 through both layers.
        return numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)

    initializers = [weight("w1", inputs, hidden), weight("b1", hidden), weight("w2", hidden, outputs),
                    weight("b2", outputs)]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"], name="fc1"),
        helper.make_node("Add", ["h1", "b1"], ["h1b"], name="fc1_bias"),
        helper.make_node("Relu", ["h1b"], ["h"], name="relu"),
        helper.make_node("MatMul", ["h", "w2"], ["h2"], name="fc2"),
        helper.make_node("Add", ["h2", "b2"], ["y"], name="fc2_bias"),
    ]
    graph = helper.make_graph(nodes, "tiny_mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, inputs])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, outputs])],
                              initializers)
    model = helper.make_model(graph, producer_name="ingot scripts/make_example_onnx.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-o", "--out", default=os.path.join(repo, "configs", "tiny_mlp.onnx"))
    args = parser.parse_args()
    onnx.save(tiny_mlp(), args.out)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
