"""Building CNN genomes: shapes, He-initialised weights, conv/pool/dense chains.

chain builds the common case, a straight line of layers from the input to
the logits, with node ids 1, 2, ... and weights drawn by He's rule (normal,
standard deviation sqrt(2 / fan_in), zero biases):

    rng = np.random.default_rng(1)
    g = chain(7, [Conv(8, 3), MaxPool(2), Conv(16, 3), GlobalAvgPool(), Dense(10)], rng=rng)
    pop = Population([g])

shapes and init_weights work on any genome (merges, skips, any order of
nodes), following the rules of docs/population-format.md.
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .errors import FormatError
from .population import Genome, Input, Node

__all__ = ["Conv", "MaxPool", "AvgPool", "GlobalAvgPool", "Dense", "chain",
           "order", "shapes", "init_weights"]


@dataclass
class Conv:
    """Conv is a conv2d layer for chain."""

    out_channels: int
    kernel: int
    stride: Optional[int] = None
    padding: Optional[int] = None
    activation: Optional[str] = None


@dataclass
class MaxPool:
    """MaxPool is a maxpool2d layer for chain."""

    kernel: int
    stride: Optional[int] = None


@dataclass
class AvgPool:
    """AvgPool is an avgpool2d layer for chain."""

    kernel: int
    stride: Optional[int] = None


@dataclass
class GlobalAvgPool:
    """GlobalAvgPool is a global_avg_pool layer for chain."""


@dataclass
class Dense:
    """Dense is a dense layer for chain; a 4-D input is flattened first."""

    out_features: int
    activation: Optional[str] = None


def _layer_node(nid, layer, prev):
    if isinstance(layer, Conv):
        return Node(nid, "conv2d", [prev], out_channels=layer.out_channels, kernel=layer.kernel,
                    stride=layer.stride, padding=layer.padding, activation=layer.activation)
    if isinstance(layer, (MaxPool, AvgPool)):
        op = "maxpool2d" if isinstance(layer, MaxPool) else "avgpool2d"
        return Node(nid, op, [prev], kernel=layer.kernel, stride=layer.stride)
    if isinstance(layer, GlobalAvgPool):
        return Node(nid, "global_avg_pool", [prev])
    if isinstance(layer, Dense):
        return Node(nid, "dense", [prev], out_features=layer.out_features, activation=layer.activation)
    raise TypeError(f"layer {layer!r}: want Conv, MaxPool, AvgPool, GlobalAvgPool or Dense")


def chain(genome_id, layers, input=None, rng=None):
    """chain returns a genome whose nodes 1..len(layers) apply layers in
    turn to the input; the last is the output. With rng (a numpy
    Generator), its weights are He-initialised; without, it has none."""
    nodes = [_layer_node(i + 1, layer, i) for i, layer in enumerate(layers)]
    g = Genome(genome_id, len(nodes), nodes)
    if rng is not None:
        init_weights(g, input or Input(), rng)
    return g


def order(genome):
    """order returns the nodes the output depends on, each after its
    inputs. A missing input or a cycle raises FormatError."""
    by_id = {n.id: n for n in genome.nodes}
    done, seen, out = {0}, set(), []

    def visit(nid, path):
        if nid in done:
            return
        if nid not in by_id:
            raise FormatError(f"genome {genome.id}, node {path[-1] if path else nid}: input {nid} does not exist")
        if nid in seen:
            raise FormatError(f"genome {genome.id}, node {nid}: cycle")
        seen.add(nid)
        for i in by_id[nid].inputs:
            visit(i, path + [nid])
        done.add(nid)
        out.append(by_id[nid])

    visit(genome.output, [])
    return out


def _merged(genome, n, ins):
    """_merged is the shape of n's inputs after its merge."""
    if len(ins) == 1:
        return ins[0]
    where = f"genome {genome.id}, node {n.id}"
    if len({len(s) for s in ins}) != 1:
        raise FormatError(f"{where}: inputs of different ranks {ins}")
    if len(ins[0]) == 3 and len({s[1:] for s in ins}) != 1:
        raise FormatError(f"{where}: inputs of different heights and widths {ins}")
    if n.merge in (None, "sum"):
        return (max(s[0] for s in ins),) + ins[0][1:]
    if n.merge == "concat" and len(ins[0]) == 3:
        return (sum(s[0] for s in ins),) + ins[0][1:]
    raise FormatError(f"{where}: merge {n.merge!r} of {ins}")


def _out_shape(genome, n, s):
    where = f"genome {genome.id}, node {n.id}"
    if n.op == "dense":
        return (n.out_features,)
    if len(s) != 3:
        raise FormatError(f"{where}: {n.op} of a 2-D value {s}")
    if n.op == "global_avg_pool":
        return (s[0],)
    if n.op == "conv2d":
        k, st = n.kernel, n.stride or 1
        p = k // 2 if n.padding is None else n.padding
        c = n.out_channels
    elif n.op in ("maxpool2d", "avgpool2d"):
        k, st, p, c = n.kernel, n.stride or n.kernel, 0, s[0]
    else:
        raise FormatError(f"{where}: unknown op {n.op!r}")
    h, w = (s[1] + 2 * p - k) // st + 1, (s[2] + 2 * p - k) // st + 1
    if h < 1 or w < 1:
        raise FormatError(f"{where}: {n.op} output {h}×{w} from {s}")
    return (c, h, w)


def shapes(genome, input=None):
    """shapes returns {node id: shape of its value for one image} for the
    input (0) and every node the output depends on: (C, H, W) or
    (features,). Each entry "in:<id>" is the shape after merging that
    node's inputs. A genome the format refuses raises FormatError."""
    i = input or Input()
    out = {0: (i.channels, i.height, i.width)}
    for n in order(genome):
        m = _merged(genome, n, [out[j] for j in n.inputs])
        out["in:%d" % n.id] = m
        out[n.id] = _out_shape(genome, n, m)
    return out


def init_weights(genome, input, rng):
    """init_weights gives every conv2d and dense node the output depends on
    He-initialised weights of the right shape (normal, std
    sqrt(2 / fan_in)) and zero biases, replacing any it had."""
    sh = shapes(genome, input)
    for n in order(genome):
        m = sh["in:%d" % n.id]
        if n.op == "conv2d":
            wshape = (n.out_channels, m[0], n.kernel, n.kernel)
            out = n.out_channels
        elif n.op == "dense":
            wshape = (n.out_features, int(np.prod(m)))
            out = n.out_features
        else:
            continue
        fan_in = int(np.prod(wshape[1:]))
        n.weight = (rng.standard_normal(wshape) * math.sqrt(2.0 / fan_in)).astype(np.float32)
        n.bias = np.zeros(out, dtype=np.float32)
