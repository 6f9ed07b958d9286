"""The example loop, python/examples/evolve_mnist.py, run short through
LocalRunner."""

import importlib.util
import io
import os
import unittest
from contextlib import redirect_stdout

import support

from neateval import LocalRunner, read_population


def load_example():
    path = os.path.join(support.PYTHON, "examples", "evolve_mnist.py")
    spec = importlib.util.spec_from_file_location("evolve_mnist", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Example(unittest.TestCase):
    def test_two_generations(self):
        ex = load_example()
        lines = []
        best, acc, history = ex.evolve(LocalRunner(support.binary()), 2, pairs=4, limit=200, log=lines.append)
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[0].startswith("gen   1  parent acc "), lines[0])
        self.assertEqual(len(history), 2)
        self.assertLessEqual(history[0][1], history[1][1])  # the best so far never falls
        self.assertEqual(acc, history[-1][1])
        self.assertTrue(0 < acc <= 1)

    def test_command_line(self):
        out = os.path.join(support.tempdir(self), "best.json")
        buf = io.StringIO()
        with redirect_stdout(buf):
            load_example().main(["--local", support.binary(), "--generations", "1", "--pairs", "2",
                                 "--limit", "100", "--out", out])
        self.assertIn("best accuracy", buf.getvalue())
        self.assertEqual(len(read_population(out).genomes), 1)


if __name__ == "__main__":
    unittest.main()
