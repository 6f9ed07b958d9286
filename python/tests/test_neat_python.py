"""Tests of the neat-python adapter, with stand-in genomes carrying the
attributes the adapter documents (neat-python itself is not needed), scored
by `neateval run` through LocalRunner."""

import unittest

import support
import numpy as np

from neateval import BadRequest, Genome, LocalRunner, Node, cnn
from neateval.neat_python import make_eval_genomes


class StandIn:
    """StandIn is what neat-python hands eval_genomes: an object whose
    fitness is set; here it also carries cnn, the default converter's
    input."""

    def __init__(self, cnn_spec=None):
        self.fitness = None
        self.cnn = cnn_spec


class Adapter(unittest.TestCase):
    def test_sets_fitness_and_floors_failures(self):
        runner = LocalRunner(support.binary())
        broken = Genome(99, 1, [Node(1, "dense", [0], out_features=10)])  # no weights
        genomes = [(1, StandIn([cnn.Conv(4, 3), cnn.GlobalAvgPool(), cnn.Dense(10)])),
                   (2, StandIn([cnn.Conv(4, 5, stride=2), cnn.Dense(10)])),
                   (7, StandIn(broken))]
        eval_genomes = make_eval_genomes(runner, failed_fitness=-1.0, limit=200)
        eval_genomes(genomes, config=None)
        ok = [g for _, g in genomes[:2]]
        for gid, g in genomes[:2]:
            self.assertEqual(g.neateval_result.genome_id, gid)
            self.assertEqual(g.fitness, g.neateval_result.accuracy)
            self.assertIsInstance(g.cnn, Genome)  # built once, weights kept for the next generation
        self.assertEqual(genomes[2][1].fitness, -1.0)
        self.assertIn("genome 7, node 1", genomes[2][1].neateval_result.error)
        # The second generation scores the same weights: the same fitness.
        before = [g.fitness for g in ok]
        eval_genomes(genomes[:2], None)
        self.assertEqual([g.fitness for g in ok], before)

    def test_custom_converter_and_fitness(self):
        calls = []

        def to_cnn(gid, genome, config):
            calls.append((gid, config))
            return cnn.chain(0, [cnn.Dense(genome.width), cnn.Dense(10)], rng=np.random.default_rng(gid))

        class G:
            def __init__(self, width):
                self.width, self.fitness = width, None

        genomes = [(3, G(8)), (4, G(16))]
        make_eval_genomes(LocalRunner(support.binary()), to_cnn, limit=100, fitness="neg_loss")(genomes, "cfg")
        self.assertEqual(calls, [(3, "cfg"), (4, "cfg")])
        for _, g in genomes:
            self.assertAlmostEqual(g.fitness, -g.neateval_result.loss)

    def test_missing_cnn_is_a_clear_error(self):
        with self.assertRaises(TypeError) as cm:
            make_eval_genomes(None)([(5, StandIn())], None)
        self.assertIn("genome 5: no CNN", str(cm.exception))

    def test_refused_population_raises(self):
        class Refusing:
            def evaluate(self, pop, limit=None, fitness=None):
                raise BadRequest("population: genomes is empty", 400)

        with self.assertRaises(BadRequest):
            make_eval_genomes(Refusing())([(1, StandIn([cnn.Dense(10)]))], None)


if __name__ == "__main__":
    unittest.main()
