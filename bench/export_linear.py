#!/usr/bin/python3
"""One Linear layer as an ONNX graph, for bench/native.mjs's kernel comparison
with onnxruntime-node on the shapes swapformer's native kernels are timed on.

    /usr/bin/python3 bench/export_linear.py OUT_DIR K N [K N ...]

For each (K, N): OUT_DIR/linear-K-N.onnx, y = x @ W + b with x [T, K] (T a
dynamic dimension), W [K, N] and b [N] constants (seeded random values), and
OUT_DIR/linear-K-N-q8.onnx, the same graph through bench/export_onnx.py's
quantize_dynamic_onnx (per-channel int8 weights, DynamicQuantizeLinear on x:
what onnxruntime's quantize_dynamic writes, which its graph optimiser fuses into
DynamicQuantizeMatMul, MLAS's int8 GEMM). Needs Debian's python3-onnx and numpy.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_onnx import quantize_dynamic_onnx  # noqa: E402


def linear(path, K, N, seed):
    rng = np.random.default_rng(seed)
    W = (rng.standard_normal((K, N)) * 0.05).astype(np.float32)
    b = (rng.standard_normal(N) * 0.05).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", K])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["T", N])
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"], "matmul"), helper.make_node("Add", ["xw", "b"], ["y"], "bias")]
    graph = helper.make_graph(nodes, "linear", [x], [y], [numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out, dims = sys.argv[1], [int(v) for v in sys.argv[2:]]
    os.makedirs(out, exist_ok=True)
    for i in range(0, len(dims), 2):
        K, N = dims[i], dims[i + 1]
        f32 = os.path.join(out, "linear-%d-%d.onnx" % (K, N))
        q8 = os.path.join(out, "linear-%d-%d-q8.onnx" % (K, N))
        linear(f32, K, N, K * 7919 + N)
        quantize_dynamic_onnx(f32, q8, per_channel=True)
        print("export_linear: %s, %s" % (f32, q8))


if __name__ == "__main__":
    main()
