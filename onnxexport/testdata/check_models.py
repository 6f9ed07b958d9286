#!/usr/bin/python3
"""check_models.py: check ONNX models with the onnx package (python3-onnx).

    /usr/bin/python3 check_models.py CLASSES MODEL.onnx...

For every model: onnx.checker.check_model(full_check=True), which also runs
strict shape inference, then onnx.shape_inference.infer_shapes(strict_mode=True);
the graph must have one input "input" [N, C, H, W] and one output "logits"
[N, CLASSES], N symbolic, and every node's output must get a shape. Prints
one line per model, "ok FILE" or "error FILE: MESSAGE"; exits 1 when any
model fails.
"""
import sys

import onnx
from onnx import shape_inference


def dims(vi):
    return [d.dim_param if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]


def check(path, classes):
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    inf = shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    g = inf.graph
    if [i.name for i in g.input] != ["input"] or [o.name for o in g.output] != ["logits"]:
        raise ValueError(f"inputs {[i.name for i in g.input]}, outputs {[o.name for o in g.output]}")
    din, dout = dims(g.input[0]), dims(g.output[0])
    if len(din) != 4 or din[0] != "N" or dout != ["N", classes]:
        raise ValueError(f"input {din}, output {dout}, want [N, C, H, W] and [N, {classes}]")
    known = {vi.name: dims(vi) for vi in list(g.value_info) + list(g.output)}
    for n in g.node:
        for o in n.output:
            d = known.get(o)
            if d is None or len(d) == 0 or d[0] != "N" or any(x == 0 for x in d[1:]):
                raise ValueError(f"node {n.name} ({n.op_type}): output {o} has inferred shape {d}")


def main():
    classes = int(sys.argv[1])
    bad = 0
    for path in sys.argv[2:]:
        try:
            check(path, classes)
            print(f"ok {path}")
        except Exception as e:  # report every model, not just the first
            bad += 1
            print(f"error {path}: {type(e).__name__}: {' '.join(str(e).split())}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
