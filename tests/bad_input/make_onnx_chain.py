#!/usr/bin/env python3
"""Writes an ONNX graph that is one chain of N Relu nodes (issue 17: the importer must take linear time).

    python3 tests/bad_input/make_onnx_chain.py OUT.onnx [N]
"""
import sys

import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"relu{i}") for i in range(n)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, out)


if __name__ == "__main__":
    main()
