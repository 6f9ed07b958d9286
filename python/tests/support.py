"""Shared helpers of the Python tests: the repository, the neateval binary
(built once per test process with `go build`), free ports, and a
population that uses every op, merge and activation of the format."""

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON)
sys.path.insert(0, PYTHON)

import numpy as np  # noqa: E402

from neateval import Genome, Node, Population, cnn  # noqa: E402

_binary = None
_tmp = tempfile.mkdtemp(prefix="neateval-pytest-")
atexit.register(shutil.rmtree, _tmp, True)


def binary():
    """binary returns the path of a neateval binary built from this
    repository, building it on first use; it skips the test when Go is
    missing. $NEATEVAL_BIN names a prebuilt one instead."""
    global _binary
    if _binary is None:
        if os.environ.get("NEATEVAL_BIN"):
            _binary = os.environ["NEATEVAL_BIN"]
        else:
            if shutil.which("go") is None:
                raise unittest.SkipTest("go is not installed: cannot build neateval")
            out = os.path.join(_tmp, "neateval")
            p = subprocess.run(["go", "build", "-o", out, "./cmd/neateval"], cwd=REPO,
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("go build ./cmd/neateval failed:\n" + p.stderr)
            _binary = out
    return _binary


def tempdir(test):
    """tempdir returns a fresh folder removed when test ends."""
    d = tempfile.mkdtemp(prefix="t-", dir=_tmp)
    test.addCleanup(shutil.rmtree, d, True)
    return d


def free_port():
    """free_port returns a TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def every_op_genome(gid, rng):
    """every_op_genome is a genome with every op, both merges (a sum of
    unequal channel counts) and every activation."""
    g = Genome(gid, 9, [
        Node(1, "conv2d", [0], out_channels=6, kernel=3, activation="leaky_relu"),
        Node(2, "maxpool2d", [1], kernel=2),
        Node(3, "conv2d", [2], out_channels=4, kernel=3, activation="gelu"),
        Node(4, "conv2d", [2, 3], merge="sum", out_channels=5, kernel=1, padding=0, activation="tanh"),
        Node(5, "avgpool2d", [4], kernel=3, stride=2),
        Node(6, "conv2d", [5], out_channels=3, kernel=3, stride=1, activation="sigmoid"),
        Node(7, "conv2d", [5, 6], merge="concat", out_channels=8, kernel=3, activation="identity"),
        Node(8, "global_avg_pool", [7]),
        Node(10, "dense", [8], out_features=12, activation="relu"),
        Node(9, "dense", [10, 8], out_features=10),
        Node(11, "dense", [0], out_features=3),  # not reachable: ignored
    ])
    cnn.init_weights(g, None, rng)
    return g


def mixed_population(seed=1):
    """mixed_population is a population of four genomes: every op, a plain
    chain, a flattening dense, a deep stride chain."""
    rng = np.random.default_rng(seed)
    return Population([
        every_op_genome(3, rng),
        cnn.chain(5, [cnn.Conv(8, 3), cnn.MaxPool(2), cnn.Conv(16, 3), cnn.GlobalAvgPool(), cnn.Dense(10)], rng=rng),
        cnn.chain(8, [cnn.Conv(4, 5, stride=2), cnn.Dense(10)], rng=rng),
        cnn.chain(13, [cnn.AvgPool(2), cnn.Conv(8, 3, padding=0, activation="tanh"), cnn.MaxPool(3, stride=2),
                       cnn.Dense(32, activation="gelu"), cnn.Dense(10)], rng=rng),
    ])


def read_bytes(path):
    """read_bytes returns the bytes of the file at path."""
    with open(path, "rb") as f:
        return f.read()
