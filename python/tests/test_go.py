"""Python and neateval's Go side on the same files: what Python writes,
`neateval run` reads and scores; what neateval writes, Python reads and
writes back byte for byte; and LocalRunner end to end."""

import json
import os
import subprocess
import unittest

import support
import numpy as np

from neateval import (Genome, LocalRunner, Node, Population, RunFailed, UsageError, read_population,
                      write_population)
from neateval.safetensors import decode, encode


def run_cli(test, pop_json, limit, *args):
    """run_cli runs `neateval run` on pop_json and returns (exit code, the
    results file's bytes, its lines decoded)."""
    out = os.path.join(support.tempdir(test), "results.jsonl")
    p = subprocess.run([support.binary(), "run", "--population", pop_json, "--results", out, "--limit", str(limit),
                        "--log-format", "json", "--progress", "off", *args], capture_output=True, text=True)
    test.assertIn(p.returncode, (0, 3), p.stderr)
    data = support.read_bytes(out)
    return p.returncode, data, [json.loads(line) for line in data.splitlines()]


class WithGo(unittest.TestCase):
    def setUp(self):
        support.binary()

    def test_go_reads_what_python_writes(self):
        d = support.tempdir(self)
        path = os.path.join(d, "pop.json")
        write_population(path, support.mixed_population())
        code, first, lines = run_cli(self, path, 500)
        self.assertEqual(code, 0)
        self.assertEqual([r["genome_id"] for r in lines], [3, 5, 8, 13])
        for r in lines:
            self.assertIsNone(r["error"], r)
            self.assertEqual(r["images"], 500)
            self.assertTrue(0 <= r["accuracy"] <= 1 and r["loss"] > 0, r)
        self.assertEqual(lines[2]["params"], 4 * 25 + 4 + 10 * 4 * 14 * 14 + 10)
        self.assertEqual(lines[2]["flops"], 2 * (4 * 25 * 14 * 14 + 10 * 4 * 14 * 14))
        _, second, _ = run_cli(self, path, 500)
        strip = [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in first.splitlines()]
        again = [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in second.splitlines()]
        self.assertEqual(strip, again)

    def test_python_writes_back_what_go_wrote(self):
        d = support.tempdir(self)
        gen = os.path.join(d, "gen.json")
        subprocess.run([support.binary(), "gen", "--out", gen, "--size", "12", "--seed", "7"],
                       check=True, capture_output=True)
        out = os.path.join(d, "out", "gen.json")
        os.mkdir(os.path.dirname(out))
        write_population(out, read_population(gen))
        self.assertEqual(support.read_bytes(out), support.read_bytes(gen))
        self.assertEqual(support.read_bytes(os.path.join(d, "out", "gen.safetensors")),
                         support.read_bytes(os.path.join(d, "gen.safetensors")))

    def test_f16_and_bf16_weights_score_as_their_f32_values(self):
        pop = support.mixed_population(seed=4)
        d = support.tempdir(self)
        for dtype in ("F16", "BF16"):
            half = os.path.join(d, dtype + ".json")
            write_population(half, pop, dtype=dtype)
            # The same weights, rounded by Python's reader and written in F32.
            widened = os.path.join(d, dtype + "-f32.json")
            write_population(widened, read_population(half))
            st = decode(support.read_bytes(os.path.join(d, dtype + ".safetensors")))
            self.assertEqual(support.read_bytes(os.path.join(d, dtype + "-f32.safetensors")), encode(st))
            _, _, a = run_cli(self, half, 300)
            _, _, b = run_cli(self, widened, 300)
            for x, y in zip(a, b):
                self.assertIsNone(x["error"])
                self.assertEqual((x["accuracy"], x["loss"]), (y["accuracy"], y["loss"]), dtype)

    def test_a_malformed_genome_gets_its_error_line(self):
        pop = support.mixed_population()
        pop.genomes[1].node(3).weight = np.zeros((16, 7, 3, 3), np.float32)
        res = LocalRunner(support.binary()).evaluate(pop, limit=200)
        self.assertEqual([r.ok for r in res], [True, False, True, True])
        self.assertEqual(res[1].error, "genome 5, node 3: conv2d weight shape [16 7 3 3], want [16 8 3 3]")
        self.assertIsNone(res[1].fitness)
        self.assertEqual(res.summary.failed, 1)
        self.assertEqual(res.summary.genomes, 4)


class Local(unittest.TestCase):
    def test_evaluate_population_and_path(self):
        runner = LocalRunner(support.binary())
        pop = support.mixed_population()
        seen = []
        res = runner.evaluate(pop, limit=200, on_result=seen.append)
        self.assertEqual([r.genome_id for r in res], [3, 5, 8, 13])
        self.assertEqual(seen, list(res))
        self.assertTrue(all(r.ok and r.images == 200 and r.run.startswith("sha256:") for r in res))
        self.assertEqual(res.summary.best_fitness, max(r.fitness for r in res))
        path = os.path.join(support.tempdir(self), "p.json")
        write_population(path, pop)
        again = runner.evaluate(path, limit=200)
        self.assertEqual([r.accuracy for r in again], [r.accuracy for r in res])

    def test_fitness_neg_loss(self):
        res = LocalRunner(support.binary()).evaluate(support.mixed_population(), limit=100, fitness="neg_loss")
        for r in res:
            self.assertAlmostEqual(r.fitness, -r.loss)

    def test_exit_codes_become_exceptions(self):
        d = support.tempdir(self)
        broken = os.path.join(d, "broken.json")
        with open(broken, "w") as f:
            f.write('{"format": "x"}')
        with self.assertRaises(RunFailed) as cm:
            LocalRunner(support.binary()).evaluate(broken, limit=10)
        self.assertIn('broken.json: format "x", want "neateval.population/v1"', cm.exception.message)
        self.assertEqual(cm.exception.exit_code, 1)
        with self.assertRaises(UsageError) as cm:
            LocalRunner(support.binary(), args=["--bogus"]).evaluate(support.mixed_population(), limit=10)
        self.assertIn("flag provided but not defined: -bogus", cm.exception.message)
        with self.assertRaises(UsageError) as cm:
            LocalRunner(support.binary()).evaluate(support.mixed_population(), limit=-1)
        self.assertIn("--limit", cm.exception.message)

    def test_all_genomes_failing_still_returns_results(self):
        g = Genome(1, 1, [Node(1, "dense", [0], out_features=10)])  # no weights
        res = LocalRunner(support.binary()).evaluate(Population([g]), limit=10)
        self.assertIn("genome 1, node 1: dense weight", res[0].error)


if __name__ == "__main__":
    unittest.main()
