"""Tests of the torch bridge: a genome's module computes what neateval
computes, and trained weights go back into a genome neateval scores.
Skipped where torch is not installed."""

import os
import unittest

import support
import numpy as np

from neateval import LocalRunner, Population, write_population
from neateval.idx import load_mnist, mnist_dir

try:
    import torch
    from neateval import torch_bridge
except ImportError:
    torch = None


def metrics(module, x, y):
    with torch.no_grad():
        logits = module(torch.from_numpy(x)).double()
    yt = torch.from_numpy(y)
    loss = (torch.logsumexp(logits, 1) - logits[torch.arange(len(y)), yt]).mean().item()
    return float((logits.argmax(1) == yt).double().mean()), loss


@unittest.skipIf(torch is None, "torch is not installed (Debian: apt-get install python3-torch)")
class Bridge(unittest.TestCase):
    N = 200

    @classmethod
    def setUpClass(cls):
        d = mnist_dir(support.REPO)
        if d is None:
            raise unittest.SkipTest("no MNIST: set NEATEVAL_MNIST_DIR or install Go")
        cls.x, cls.y = load_mnist(d, limit=cls.N)
        torch.set_num_threads(2)

    def test_same_accuracy_and_loss_as_neateval(self):
        pop = support.mixed_population(seed=3)
        res = LocalRunner(support.binary()).evaluate(pop, limit=self.N)
        for g, r in zip(pop.genomes, res):
            acc, loss = metrics(torch_bridge.to_module(g), self.x, self.y)
            with self.subTest(genome=g.id):
                self.assertEqual(acc, r.accuracy)
                self.assertAlmostEqual(loss, r.loss, delta=1e-5 * r.loss)

    def test_fine_tuned_weights_go_back(self):
        g = support.mixed_population().genomes[2]
        m = torch_bridge.to_module(g)
        same = torch_bridge.to_genome(m)
        for n, k in zip(g.nodes, same.nodes):
            if n.weight is not None:
                np.testing.assert_array_equal(n.weight, k.weight)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        x, y = torch.from_numpy(self.x), torch.from_numpy(self.y)
        _, before = metrics(m, self.x, self.y)
        for _ in range(20):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
        _, after = metrics(m, self.x, self.y)
        self.assertLess(after, before)
        tuned = torch_bridge.to_genome(m)
        path = os.path.join(support.tempdir(self), "tuned.json")
        write_population(path, Population([tuned]))
        r = LocalRunner(support.binary()).evaluate(path, limit=self.N)[0]
        self.assertAlmostEqual(r.loss, after, delta=1e-5 * after)


if __name__ == "__main__":
    unittest.main()
