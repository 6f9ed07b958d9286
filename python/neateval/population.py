"""Populations in neateval's population format (v1), read and written.

A population is a JSON file of topologies and a safetensors file of weights
(docs/population-format.md). Here it is a Population of Genomes of Nodes;
each Node carries its own ``weight`` and ``bias`` (numpy float32 arrays, or
None). Optional fields are None when they take the format's default, and a
default is never written out, so a population read from a file written by
neateval and written again gives the same bytes (F32 weights).

    pop = read_population("pop.json")
    pop.genomes[0].node(5).weight *= 0.5
    write_population("pop2.json", pop)

The reader checks what a whole file needs (format, input, num_classes,
weights, unique genome ids, integer fields) and raises FormatError naming
the file and the genome and node; it does not judge ops and shapes: the
evaluator does, per genome.
"""

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from . import safetensors
from .errors import FormatError
from .safetensors import go_json_string

__all__ = ["FORMAT", "Input", "Node", "Genome", "Population", "encode_population",
           "read_population", "write_population", "tensor_name"]

FORMAT = "neateval.population/v1"

# _OP_FIELDS are the fields each known op uses, in the order written.
_OP_FIELDS = {
    "conv2d": ("out_channels", "kernel", "stride", "padding", "activation"),
    "maxpool2d": ("kernel", "stride"),
    "avgpool2d": ("kernel", "stride"),
    "global_avg_pool": (),
    "dense": ("out_features", "activation"),
}
_INT_FIELDS = ("out_channels", "out_features", "kernel", "stride", "padding")
_ALL_FIELDS = ("out_channels", "out_features", "kernel", "stride", "padding", "activation")


@dataclass
class Input:
    """Input is the shape of one image: channels, height, width."""

    channels: int = 1
    height: int = 28
    width: int = 28


@dataclass
class Node:
    """Node is one node of a genome's graph. Node 0 is the input and is
    never listed. None means the format's default (stride 1 or = kernel,
    padding kernel//2, activation relu for conv2d and identity for dense,
    merge sum)."""

    id: int
    op: str
    inputs: List[int]
    out_channels: Optional[int] = None
    out_features: Optional[int] = None
    kernel: Optional[int] = None
    stride: Optional[int] = None
    padding: Optional[int] = None
    activation: Optional[str] = None
    merge: Optional[str] = None
    weight: Optional[np.ndarray] = field(default=None, repr=False, compare=False)
    bias: Optional[np.ndarray] = field(default=None, repr=False, compare=False)


@dataclass
class Genome:
    """Genome is one CNN: its id, its nodes and the node whose value is the
    logits."""

    id: int
    output: int
    nodes: List[Node] = field(default_factory=list)

    def node(self, node_id):
        """node returns the node with id node_id (KeyError if none)."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"genome {self.id}: no node {node_id}")

    def copy(self, id=None):
        """copy returns a deep copy (weights too), with a new id if given."""
        nodes = [dataclasses.replace(n, inputs=list(n.inputs),
                                     weight=None if n.weight is None else n.weight.copy(),
                                     bias=None if n.bias is None else n.bias.copy())
                 for n in self.nodes]
        return Genome(self.id if id is None else id, self.output, nodes)


@dataclass
class Population:
    """Population is the genomes, the image shape and the class count."""

    genomes: List[Genome]
    input: Input = field(default_factory=Input)
    num_classes: int = 10


def tensor_name(genome_id, node_id, kind):
    """tensor_name is the name of a node's tensor in the weights file:
    g<genome>.n<node>.<kind>, kind "weight" or "bias"."""
    return f"g{genome_id}.n{node_id}.{kind}"


def _check(pop, name):
    if not pop.genomes:
        raise FormatError(f"{name}: no genomes")
    if not (_is_int(pop.num_classes) and pop.num_classes >= 1):
        raise FormatError(f"{name}: num_classes {pop.num_classes!r}, want an integer ≥ 1")
    for key in ("channels", "height", "width"):
        v = getattr(pop.input, key)
        if not (_is_int(v) and v >= 1):
            raise FormatError(f"{name}: input.{key} {v!r}, want an integer ≥ 1")
    seen = set()
    for i, g in enumerate(pop.genomes):
        if not (_is_int(g.id) and g.id >= 0):
            raise FormatError(f"{name}: genome #{i}: id {g.id!r}, want a non-negative integer")
        if g.id in seen:
            raise FormatError(f"{name}: genome #{i}: duplicate genome id {g.id}")
        seen.add(g.id)
        if not _is_int(g.output):
            raise FormatError(f"{name}: genome {g.id}: output {g.output!r}, want a node id")
        for n in g.nodes:
            _check_node(g, n, name)


def _check_node(g, n, name):
    where = f"{name}: genome {g.id}, node {n.id!r}"
    if not _is_int(n.id):
        raise FormatError(f"{where}: id, want an integer")
    if not isinstance(n.op, str):
        raise FormatError(f"{where}: op {n.op!r}, want a string")
    if not all(_is_int(i) for i in n.inputs):
        raise FormatError(f"{where}: inputs {n.inputs!r}, want node ids")
    for key in _INT_FIELDS:
        v = getattr(n, key)
        if v is not None and not _is_int(v):
            raise FormatError(f"{where}: {key} {v!r}, want an integer")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _node_json(n):
    parts = [f'{{"id": {int(n.id)}, "op": {go_json_string(n.op)}, "inputs": [',
             ", ".join(str(int(i)) for i in n.inputs), "]"]
    if len(n.inputs) > 1 and n.merge is not None:
        parts.append(f', "merge": {go_json_string(n.merge)}')
    known = n.op in _OP_FIELDS
    for key in _OP_FIELDS.get(n.op, _ALL_FIELDS):
        v = getattr(n, key)
        if v is None and known and key in ("out_channels", "out_features", "kernel"):
            raise FormatError(f"node {n.id}: {n.op} {key} is missing")
        if v is None:
            continue
        val = go_json_string(v) if key == "activation" else str(int(v))
        parts.append(f', "{key}": {val}')
    parts.append("}")
    return "".join(parts)


def encode_population(pop, weights_name, dtype="F32", name="population"):
    """encode_population returns (json_bytes, safetensors_bytes) of pop, the
    JSON naming weights_name as its weights file. The JSON is laid out as
    neateval writes it (one genome header and one node per line), and the
    weights are stored as dtype (F32, F16 or BF16)."""
    _check(pop, name)
    tensors = {}
    lines = []
    for g in pop.genomes:
        nodes = []
        for n in g.nodes:
            try:
                nodes.append("\n      " + _node_json(n))
            except FormatError as e:
                raise FormatError(f"{name}: genome {g.id}, {e}") from None
            for kind in ("weight", "bias"):
                t = getattr(n, kind)
                if t is not None:
                    tensors[tensor_name(g.id, n.id, kind)] = t
        lines.append(f'\n    {{"id": {int(g.id)}, "output": {int(g.output)}, "nodes": [' + ",".join(nodes) + "\n    ]}")
    i = pop.input
    text = ('{\n  "format": ' + go_json_string(FORMAT) +
            f',\n  "input": {{"channels": {int(i.channels)}, "height": {int(i.height)}, "width": {int(i.width)}}}'
            f',\n  "num_classes": {int(pop.num_classes)},\n  "weights": ' + go_json_string(weights_name) +
            ',\n  "genomes": [' + ",".join(lines) + "\n  ]\n}\n")
    return text.encode("utf-8"), safetensors.encode(tensors, dtype)


def write_population(path_json, pop, weights_name=None, dtype="F32"):
    """write_population writes pop to path_json and its weights beside it,
    named weights_name (default: the JSON's name with .safetensors), each
    file atomically, the weights first. With dtype F32 the bytes are those
    neateval's own writer gives for the same population."""
    if weights_name is None:
        weights_name = os.path.splitext(os.path.basename(path_json))[0] + ".safetensors"
    js, st = encode_population(pop, weights_name, dtype, name=os.fspath(path_json))
    folder = os.path.dirname(os.path.abspath(path_json))
    safetensors.write_atomic(os.path.join(folder, weights_name), st)
    safetensors.write_atomic(path_json, js)
    return os.path.join(folder, weights_name)


def read_population(path_json):
    """read_population reads a population and its weights file, converting
    weights to float32. Problems raise FormatError naming the file and the
    key, genome or node."""
    name = os.fspath(path_json)
    try:
        with open(path_json, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise FormatError(f"{name}: not valid JSON: {e}") from None
    pop, weights = parse_population(doc, name)
    wpath = os.path.join(os.path.dirname(os.path.abspath(path_json)), weights)
    try:
        tensors = safetensors.read(wpath)
    except OSError as e:
        raise FormatError(f"{name}: weights {weights!r}: {e}") from None
    for g in pop.genomes:
        for n in g.nodes:
            n.weight = tensors.get(tensor_name(g.id, n.id, "weight"))
            n.bias = tensors.get(tensor_name(g.id, n.id, "bias"))
    return pop


def _no_constant(c):
    raise ValueError(f"{c} is not JSON")


def parse_population(doc, name="population"):
    """parse_population turns a decoded population JSON document into a
    Population (without weights) and the weights file's name."""
    if not isinstance(doc, dict):
        raise FormatError(f"{name}: not a population: the top level is not a JSON object")
    if doc.get("format") != FORMAT:
        raise FormatError(f"{name}: format {doc.get('format')!r}, want {FORMAT!r}")
    inp = doc.get("input")
    if not isinstance(inp, dict):
        raise FormatError(f"{name}: input: want an object {{\"channels\", \"height\", \"width\"}}")
    vals = {}
    for key in ("channels", "height", "width"):
        vals[key] = _int(inp.get(key), f"{name}: input.{key}", lo=1)
    classes = _int(doc.get("num_classes"), f"{name}: num_classes", lo=1)
    weights = doc.get("weights")
    if not isinstance(weights, str) or not weights:
        raise FormatError(f"{name}: weights: want the name of the safetensors file, got {weights!r}")
    genomes = doc.get("genomes")
    if not isinstance(genomes, list) or not genomes:
        raise FormatError(f"{name}: genomes: want a non-empty array")
    out, seen = [], {}
    for i, gd in enumerate(genomes):
        g = _parse_genome(gd, f"{name}: genome #{i}")
        if g.id in seen:
            raise FormatError(f"{name}: genome #{i}: id {g.id} is already genome #{seen[g.id]}'s")
        seen[g.id] = i
        out.append(g)
    return Population(out, Input(**vals), classes), weights


def _parse_genome(gd, where):
    if not isinstance(gd, dict):
        raise FormatError(f"{where}: want a JSON object")
    gid = _int(gd.get("id"), f"{where}: id", lo=0)
    where = f"{where.rsplit(':', 1)[0]}: genome {gid}"
    output = _int(gd.get("output"), f"{where}: output")
    nodes = gd.get("nodes")
    if not isinstance(nodes, list):
        raise FormatError(f"{where}: nodes: want an array")
    return Genome(gid, output, [_parse_node(nd, where, j) for j, nd in enumerate(nodes)])


def _parse_node(nd, where, j):
    if not isinstance(nd, dict):
        raise FormatError(f"{where}: node #{j}: want a JSON object")
    nid = _int(nd.get("id"), f"{where}: node #{j}: id")
    where = f"{where}, node {nid}"
    ins = nd.get("inputs")
    if not isinstance(ins, list):
        raise FormatError(f"{where}: inputs: want an array of node ids")
    inputs = [_int(v, f"{where}: inputs[{k}]") for k, v in enumerate(ins)]
    op = nd.get("op")
    if not isinstance(op, str):
        raise FormatError(f"{where}: op: want a string, got {op!r}")
    n = Node(nid, op, inputs)
    for key in _OP_FIELDS.get(op, ()):
        if key not in nd:
            continue
        if key == "activation":
            if not isinstance(nd[key], str):
                raise FormatError(f"{where}: {op} activation: want a string, got {nd[key]!r}")
            n.activation = nd[key]
        else:
            setattr(n, key, _int(nd[key], f"{where}: {op} {key}", lo=0 if key == "padding" else 1))
    if len(inputs) > 1 and "merge" in nd:
        if not isinstance(nd["merge"], str):
            raise FormatError(f"{where}: merge: want a string, got {nd['merge']!r}")
        n.merge = nd["merge"]
    return n


def _int(v, where, lo=None):
    if not _is_int(v):
        raise FormatError(f"{where}: want a JSON integer, got {json.dumps(v)}")
    if lo is not None and v < lo:
        raise FormatError(f"{where}: {v}, want ≥ {lo}")
    return int(v)
