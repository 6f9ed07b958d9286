"""A genome as a torch nn.Module, and the module's weights back into the
genome, so that a winner of an evolution can be fine-tuned with torch.

    m = to_module(genome)                      # conv2d → nn.Conv2d, dense → nn.Linear
    ... train m with any torch optimiser ...
    tuned = to_genome(m)                       # a copy of the genome with m's weights
    write_population("best.json", Population([tuned]))

The module computes what neateval computes (docs/population-format.md):
nodes in graph order, only those the output depends on; several inputs
merged by sum (channels or features zero-padded at the end to the largest
count) or concat (along channels); pools with no padding, floor mode; a
4-D value flattened in C, H, W order before a dense; activations after the
bias, leaky_relu's slope 0.01, gelu the exact erf form. It takes
``[B, C, H, W]`` float32 images (pixels / 255) and returns the logits.

Importing this module needs torch; the rest of the package does not.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import cnn
from .errors import FormatError
from .population import Input

__all__ = ["GenomeModule", "to_module", "to_genome"]

_ACT = {
    None: lambda x: x, "identity": lambda x: x, "relu": F.relu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.01), "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "gelu": lambda x: F.gelu(x),
}


class GenomeModule(nn.Module):
    """GenomeModule runs one genome. Its parameters are in ``layers``,
    keyed by node id as a string; ``genome`` is the genome it was built
    from (weights as they were then)."""

    def __init__(self, genome, input=None):
        super().__init__()
        self.genome = genome.copy()
        self.input = input or Input()
        sh = cnn.shapes(self.genome, self.input)
        self._steps = cnn.order(self.genome)
        self.layers = nn.ModuleDict()
        for n in self._steps:
            if n.activation not in _ACT:
                raise FormatError(f"genome {genome.id}, node {n.id}: unknown activation {n.activation!r}")
            m = sh["in:%d" % n.id]
            if n.op == "conv2d":
                pad = n.kernel // 2 if n.padding is None else n.padding
                layer = nn.Conv2d(m[0], n.out_channels, n.kernel, n.stride or 1, pad)
            elif n.op == "dense":
                layer = nn.Linear(int(np.prod(m)), n.out_features)
            else:
                continue
            _load(layer, n, genome.id)
            self.layers[str(n.id)] = layer

    def forward(self, x):
        """forward returns the logits of images x, [B, C, H, W]."""
        vals = {0: x}
        for n in self._steps:
            v = _merge([vals[i] for i in n.inputs], n.merge)
            vals[n.id] = self._apply(n, v)
        return vals[self.genome.output]

    def _apply(self, n, v):
        if n.op == "conv2d":
            return _ACT[n.activation or "relu"](self.layers[str(n.id)](v))
        if n.op == "dense":
            if v.dim() == 4:
                v = v.flatten(1)
            return _ACT[n.activation](self.layers[str(n.id)](v))
        if n.op == "maxpool2d":
            return F.max_pool2d(v, n.kernel, n.stride or n.kernel)
        if n.op == "avgpool2d":
            return F.avg_pool2d(v, n.kernel, n.stride or n.kernel)
        return v.mean(dim=(2, 3))  # global_avg_pool: cnn.shapes refused any other op


def _merge(vals, merge):
    if len(vals) == 1:
        return vals[0]
    if merge == "concat":
        return torch.cat(vals, dim=1)
    width = max(v.shape[1] for v in vals)
    out = None
    for v in vals:
        pad = width - v.shape[1]
        if pad:
            v = F.pad(v, (0, 0, 0, 0, 0, pad) if v.dim() == 4 else (0, pad))
        out = v if out is None else out + v
    return out


def _load(layer, n, gid):
    """_load copies the node's weights into layer; a node without weights
    keeps torch's initialisation."""
    for kind, param in (("weight", layer.weight), ("bias", layer.bias)):
        t = getattr(n, kind)
        if t is None:
            continue
        if tuple(t.shape) != tuple(param.shape):
            raise FormatError(f"genome {gid}, node {n.id}: {n.op} {kind} shape {list(t.shape)}, "
                              f"want {list(param.shape)}")
        with torch.no_grad():
            param.copy_(torch.from_numpy(np.ascontiguousarray(t, dtype=np.float32)))


def to_module(genome, input=None):
    """to_module returns a GenomeModule computing genome on images of shape
    input (default 1×28×28)."""
    return GenomeModule(genome, input)


def to_genome(module, genome=None):
    """to_genome returns a copy of genome (default: the one module was
    built from) with module's current weights, as float32 numpy arrays."""
    g = (genome or module.genome).copy()
    for n in g.nodes:
        layer = module.layers[str(n.id)] if str(n.id) in module.layers else None
        if layer is None:
            continue
        n.weight = layer.weight.detach().cpu().numpy().astype(np.float32).copy()
        n.bias = layer.bias.detach().cpu().numpy().astype(np.float32).copy()
    return g
