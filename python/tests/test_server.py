"""A real `neateval serve` on 127.0.0.1 against docs/http-api.md, through
the Python client: results equal `neateval run`'s on the same files,
errors map to their statuses, a disconnect cancels. Skipped until the
binary has the serve command."""

import http.client
import json
import os
import subprocess
import time
import unittest

import support
import numpy as np

from neateval import (BadRequest, Client, cnn, Forbidden, NotFound, PayloadTooLarge, ServiceBusy, Unauthorized,
                      UnsupportedMediaType, write_population)
from neateval.client import encode_multipart
from neateval.population import encode_population
from neateval.neat_python import make_eval_genomes


def has_serve():
    p = subprocess.run([support.binary(), "serve", "--help"], capture_output=True)
    return p.returncode == 0


class Server:
    """Server is a `neateval serve` process on a free loopback port."""

    def __init__(self, test, *args, token=None):
        self.port = support.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        env = {k: v for k, v in os.environ.items() if k != "NEATEVAL_TOKEN"}
        if token:
            env["NEATEVAL_TOKEN"] = token
        self.log = open(os.path.join(support.tempdir(test), "serve.log"), "w+")
        self.proc = subprocess.Popen([support.binary(), "serve", "--addr", "127.0.0.1:%d" % self.port,
                                      "--log-format", "json", *args],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, env=env)
        test.addCleanup(self.stop)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise AssertionError("neateval serve exited %d:\n%s" % (self.proc.returncode, self.log.read()))
            try:
                if Client(self.url, timeout=2).health():
                    return
            except Exception:
                time.sleep(0.1)
        raise AssertionError("neateval serve did not answer /v1/health within 60 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def cli_lines(test, pop_json, limit):
    out = os.path.join(support.tempdir(test), "r.jsonl")
    p = subprocess.run([support.binary(), "run", "--population", pop_json, "--results", out, "--limit", str(limit),
                        "--log-format", "json", "--progress", "off"], capture_output=True, text=True)
    test.assertIn(p.returncode, (0, 3), p.stderr)
    with open(out) as f:
        return [json.loads(x) for x in f]


def without_seconds(d):
    return {k: v for k, v in d.items() if k != "seconds"}


class Serve(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not has_serve():
            raise unittest.SkipTest("this neateval has no serve command yet (neateval serve --help failed)")

    def test_health_status(self):
        s = Server(self, "--queue", "3")
        st = Client(s.url).status()
        for key in ("version", "backend", "device", "dtype", "memory", "dataset", "fitness", "queue", "running"):
            self.assertIn(key, st)
        self.assertEqual(st["queue"], {"length": 0, "capacity": 3})
        self.assertIsNone(st["running"])
        self.assertGreater(st["memory"]["total_bytes"], 0)
        self.assertEqual(st["dataset"]["images"], 10000)

    def test_results_equal_neateval_run(self):
        s = Server(self)
        d = support.tempdir(self)
        path = os.path.join(d, "population.json")
        pop = support.mixed_population()
        write_population(path, pop)
        want = [without_seconds(x) for x in cli_lines(self, path, 300)]
        seen = []
        for source in (path, pop):
            got = Client(s.url).evaluate(source, limit=300, on_result=seen.append)
            self.assertEqual([without_seconds(r.__dict__) for r in got], want)
            self.assertEqual(got.summary.genomes, 4)
            self.assertEqual(got.summary.failed, 0)
        self.assertEqual(sorted(r.index for r in seen), [0, 0, 1, 1, 2, 2, 3, 3])

    def test_a_malformed_genome_is_a_result_line(self):
        s = Server(self)
        pop = support.mixed_population()
        pop.genomes[0].node(1).weight = np.zeros((6, 2, 3, 3), np.float32)
        got = Client(s.url).evaluate(pop, limit=50)
        self.assertEqual(got[0].error, "genome 3, node 1: conv2d weight shape [6 2 3 3], want [6 1 3 3]")
        self.assertTrue(all(r.ok for r in got[1:]))
        self.assertEqual(got.summary.failed, 1)

    def test_refusals(self):
        s = Server(self)
        c = Client(s.url)
        pop = support.mixed_population()
        js, st = encode_population(pop, "population.safetensors")
        with self.assertRaises(BadRequest) as cm:
            c.evaluate((b'{"format": "x"}', st))
        self.assertIn('population.json: format "x", want "neateval.population/v1"', cm.exception.message)
        with self.assertRaises(BadRequest) as cm:
            c.evaluate((js, st[:20]))
        self.assertIn("population.safetensors", cm.exception.message)
        with self.assertRaises(BadRequest) as cm:
            c.evaluate(pop, limit=-1)
        self.assertIn("limit", cm.exception.message)
        with self.assertRaises(BadRequest) as cm:
            c.evaluate(pop, fitness="f1")
        self.assertIn("fitness", cm.exception.message)
        body, ctype = encode_multipart([("population", "population.json", "application/json", js)])
        with self.assertRaises(BadRequest) as cm:
            c._evaluate(body, ctype, None, None, None, 4)
        self.assertIn('missing part "weights"', cm.exception.message)
        with self.assertRaises(UnsupportedMediaType):
            c._evaluate(b"hello", "text/plain", None, None, None, 4)

    def test_token(self):
        s = Server(self, token="s3cret")
        self.assertTrue(Client(s.url).health())
        for token in (None, "wrong"):
            with self.assertRaises(Unauthorized):
                Client(s.url, token=token).status()
            with self.assertRaises(Unauthorized):
                Client(s.url, token=token).evaluate(support.mixed_population(), limit=10)
        got = Client(s.url, token="s3cret").evaluate(support.mixed_population(), limit=10)
        self.assertEqual(len(got), 4)

    def test_body_limit(self):
        s = Server(self, "--max-body", "4096")
        with self.assertRaises(PayloadTooLarge):
            Client(s.url).evaluate(support.mixed_population(), limit=10)

    def test_path_form(self):
        d = support.tempdir(self)
        os.mkdir(os.path.join(d, "exp"))
        write_population(os.path.join(d, "exp", "p.json"), support.mixed_population())
        with self.assertRaises(Forbidden):
            Client(Server(self).url).evaluate_path("exp/p.json")
        c = Client(Server(self, "--allow-dir", d).url)
        got = c.evaluate_path("exp/p.json", limit=100)
        self.assertEqual([r.genome_id for r in got], [3, 5, 8, 13])
        for bad in ("../p.json", os.path.join(d, "exp", "p.json")):
            with self.assertRaises(Forbidden):
                c.evaluate_path(bad)
        with self.assertRaises(NotFound):
            c.evaluate_path("exp/none.json")

    def test_busy_and_cancel(self):
        d = support.tempdir(self)
        big = os.path.join(d, "wide.json")
        subprocess.run([support.binary(), "gen", "--out", big, "--size", "16", "--preset", "wide"],
                       check=True, capture_output=True)
        s = Server(self, "--queue", "0")
        js = support.read_bytes(big)
        st = support.read_bytes(os.path.join(d, "wide.safetensors"))
        body, ctype = encode_multipart([("population", "wide.json", "application/json", js),
                                        ("weights", "wide.safetensors", "application/octet-stream", st)])
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        conn.request("POST", "/v1/evaluate?limit=0", body, {"Content-Type": ctype})
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("Content-Type"), "application/x-ndjson")
        self.assertEqual(resp.getheader("X-Neateval-Genomes"), "16")
        c = Client(s.url)
        self.wait_for(lambda: c.status()["running"] is not None, "the evaluation to run")
        with self.assertRaises(ServiceBusy) as cm:
            c.evaluate(support.mixed_population(), limit=10)
        self.assertGreaterEqual(cm.exception.retry_after, 1)
        conn.close()  # the client goes away: the evaluation must stop
        self.wait_for(lambda: c.status()["running"] is None, "the cancelled evaluation to stop")
        self.assertEqual(len(c.evaluate(support.mixed_population(), limit=10)), 4)

    def test_adapter_and_example_through_the_service(self):
        s = Server(self)

        class G:
            def __init__(self, layers):
                self.cnn, self.fitness = layers, None


        genomes = [(i, G([cnn.Conv(4, 3), cnn.GlobalAvgPool(), cnn.Dense(10)])) for i in (1, 2)]
        make_eval_genomes(Client(s.url), limit=100)(genomes, None)
        self.assertTrue(all(0 <= g.fitness <= 1 for _, g in genomes))
        from test_example import load_example
        _, acc, hist = load_example().evolve(Client(s.url), 2, pairs=4, limit=200, log=lambda _: None)
        self.assertLessEqual(hist[0][1], hist[1][1])

    def wait_for(self, cond, what, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.05)
        self.fail("waited %d s for %s" % (seconds, what))


if __name__ == "__main__":
    unittest.main()
