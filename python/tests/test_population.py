"""Tests of neateval.population and neateval.cnn, in Python alone."""

import json
import os
import unittest

import support
import numpy as np

from neateval import FormatError, Genome, Input, Node, Population, cnn, read_population, write_population
from neateval.population import encode_population


class RoundTrip(unittest.TestCase):
    def test_write_read_gives_back_the_population(self):
        pop = support.mixed_population()
        d = support.tempdir(self)
        path = os.path.join(d, "pop.json")
        wpath = write_population(path, pop)
        self.assertEqual(wpath, os.path.join(d, "pop.safetensors"))
        back = read_population(path)
        self.assertEqual(back, pop)  # topology and fields (weights compare below)
        for g, h in zip(pop.genomes, back.genomes):
            for n, m in zip(g.nodes, h.nodes):
                for kind in ("weight", "bias"):
                    a, b = getattr(n, kind), getattr(m, kind)
                    self.assertEqual(a is None, b is None, (g.id, n.id, kind))
                    if a is not None:
                        np.testing.assert_array_equal(a, b)
        js, st = encode_population(back, "pop.safetensors")
        self.assertEqual(js, support.read_bytes(path))
        self.assertEqual(st, support.read_bytes(wpath))

    def test_defaults_stay_implicit(self):
        g = Genome(0, 2, [Node(1, "conv2d", [0], out_channels=4, kernel=3),
                          Node(2, "dense", [1, 0], out_features=10, stride=5)])
        js, _ = encode_population(Population([g]), "w.safetensors")
        nodes = [json.loads(line.rstrip(",")) for line in js.decode().splitlines() if '"op"' in line]
        self.assertEqual(nodes[0], {"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3})
        self.assertEqual(nodes[1], {"id": 2, "op": "dense", "inputs": [1, 0], "out_features": 10})

    def test_write_refuses_what_cannot_load(self):
        g = cnn.chain(1, [cnn.Dense(10)])
        for pop, want in [
            (Population([]), "no genomes"),
            (Population([g, g.copy()]), "duplicate genome id 1"),
            (Population([g.copy(id=-1)]), "id -1"),
            (Population([g], num_classes=0), "num_classes 0"),
            (Population([g], Input(1, 0, 28)), "input.height 0"),
            (Population([Genome(2, 1, [Node(1, "conv2d", [0], kernel=3)])]), "genome 2, node 1: conv2d out_channels is missing"),
            (Population([Genome(2, 1, [Node(1, "dense", [0], out_features=2.0)])]), "out_features 2.0"),
        ]:
            with self.subTest(want=want), self.assertRaises(FormatError) as cm:
                encode_population(pop, "w.safetensors")
            self.assertIn(want, str(cm.exception))


class ReadErrors(unittest.TestCase):
    def read(self, doc, *parts, weights=True):
        d = support.tempdir(self)
        path = os.path.join(d, "p.json")
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        if weights:
            write_population(os.path.join(d, "other.json"), Population([cnn.chain(0, [cnn.Dense(10)])]),
                             weights_name="w.safetensors")
        with self.assertRaises(FormatError) as cm:
            read_population(path)
        for p in (path,) + parts:
            self.assertIn(p, str(cm.exception))

    def test_whole_file_errors(self):
        base = {"format": "neateval.population/v1", "input": {"channels": 1, "height": 28, "width": 28},
                "num_classes": 10, "weights": "w.safetensors",
                "genomes": [{"id": 4, "output": 1, "nodes": [{"id": 1, "op": "dense", "inputs": [0], "out_features": 10}]}]}
        self.read("{", "not valid JSON")
        self.read(dict(base, format="x"), "format 'x'")
        self.read(dict(base, num_classes=10.0), "num_classes: want a JSON integer, got 10.0")
        self.read(dict(base, input={"channels": 1, "height": 28}), "input.width")
        self.read(dict(base, genomes=[]), "genomes: want a non-empty array")
        self.read(dict(base, genomes=base["genomes"] * 2), "genome #1: id 4 is already genome #0's")
        self.read(dict(base, weights="missing.safetensors"), "weights 'missing.safetensors'")
        bad_node = {"id": 4, "output": 1, "nodes": [{"id": 1, "op": "dense", "inputs": [0], "out_features": "10"}]}
        self.read(dict(base, genomes=[bad_node]), "genome 4, node 1: dense out_features: want a JSON integer")
        self.read(dict(base, genomes=[{"id": 4, "output": 1, "nodes": [{"id": 1, "op": "dense", "inputs": [0.5]}]}]),
                  "genome 4, node 1: inputs[0]")


class Shapes(unittest.TestCase):
    def test_every_op(self):
        g = support.every_op_genome(3, np.random.default_rng(1))
        sh = cnn.shapes(g)
        self.assertEqual(sh[1], (6, 28, 28))
        self.assertEqual(sh["in:4"], (6, 14, 14))  # sum of 6 and 4 channels: padded to 6
        self.assertEqual(sh[5], (5, 6, 6))  # avgpool 3, stride 2: floor((14 - 3) / 2) + 1
        self.assertEqual(sh["in:7"], (8, 6, 6))  # concat of 5 and 3
        self.assertEqual(sh["in:9"], (12,))
        self.assertNotIn(11, sh)  # unreachable
        self.assertIsNone(g.node(11).weight)
        self.assertEqual(g.node(7).weight.shape, (8, 8, 3, 3))
        self.assertEqual(g.node(9).weight.shape, (10, 12))

    def test_he_init(self):
        g = cnn.chain(0, [cnn.Conv(64, 3), cnn.Dense(10)], rng=np.random.default_rng(2))
        w = g.node(1).weight
        self.assertAlmostEqual(float(w.std()), np.sqrt(2 / 9), delta=0.03)
        self.assertEqual(g.node(2).weight.shape, (10, 64 * 28 * 28))
        self.assertFalse(g.node(2).bias.any())

    def test_refused_genomes(self):
        for g, want in [
            (Genome(1, 2, [Node(2, "dense", [3], out_features=10), Node(3, "dense", [2], out_features=4)]), "cycle"),
            (Genome(1, 2, [Node(2, "dense", [7], out_features=10)]), "input 7 does not exist"),
            (Genome(1, 2, [Node(1, "global_avg_pool", [0]), Node(2, "maxpool2d", [1], kernel=2)]), "2-D"),
            (Genome(1, 1, [Node(1, "conv2d", [0], out_channels=2, kernel=40, padding=0)]), "output -11×-11"),
            (Genome(1, 3, [Node(1, "maxpool2d", [0], kernel=2), Node(3, "conv2d", [0, 1], out_channels=2, kernel=1)]),
             "different heights"),
        ]:
            with self.subTest(want=want), self.assertRaises(FormatError) as cm:
                cnn.shapes(g)
            self.assertIn(want, str(cm.exception))


if __name__ == "__main__":
    unittest.main()
