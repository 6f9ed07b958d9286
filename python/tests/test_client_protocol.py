"""The client's side of docs/http-api.md, on the wire: a real HTTP server
(the standard library's) answers as the API says a service answers, and
the Client must send the documented requests and turn every documented
answer into Results or the documented exception. test_server.py holds the
real `neateval serve` to the same document."""

import email.parser
import email.policy
import http.server
import json
import threading
import unittest
import urllib.parse

import support

from neateval import (BadRequest, Client, NeatevalError, PayloadTooLarge, ServerError, ServiceBusy,
                      StreamError, Unauthorized, UnsupportedMediaType)
from neateval.population import encode_population


def line(index, gid, fitness=0.5, error=None):
    return {"run": "sha256:ab", "genome_id": gid, "index": index, "fitness": None if error else fitness,
            "accuracy": None if error else fitness, "loss": None if error else 1.5, "images": 0 if error else 100,
            "error": error, "params": 10, "flops": 20, "seconds": 0.01}


SUMMARY = {"summary": {"genomes": 3, "failed": 1, "images": 200, "seconds": 0.1, "images_genomes_per_s": 2000.0,
                       "best_fitness": 0.7, "best_genome": 8, "mean_fitness": 0.6, "a_new_field": 1}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    reply = None  # (status, headers, body chunks), set by each test
    seen = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_any(b"")

    def do_POST(self):
        self.handle_any(self.rfile.read(int(self.headers["Content-Length"])))

    def handle_any(self, body):
        Handler.seen.append((self.command, self.path, dict(self.headers), body))
        status, headers, chunks = Handler.reply
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for c in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


def ndjson(*objs):
    return [(json.dumps(o) + "\n").encode() for o in objs]


class Protocol(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d" % cls.server.server_address[1]
        cls.pop = support.mixed_population()
        cls.pop.genomes = cls.pop.genomes[:3]

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        Handler.seen = []

    def answer(self, status, chunks=(), **headers):
        Handler.reply = (status, headers, list(chunks))

    def test_evaluate_sends_multipart_and_reads_the_stream(self):
        self.answer(200, ndjson(line(2, 8, 0.7), line(0, 3), line(1, 5, error="genome 5, node 1: bad"), SUMMARY),
                    **{"Content-Type": "application/x-ndjson"})
        order = []
        res = Client(self.url + "/", token="s3cret").evaluate(self.pop, limit=100, fitness="neg_loss",
                                                               on_result=lambda r: order.append(r.index))
        self.assertEqual(order, [2, 0, 1])
        self.assertEqual([r.genome_id for r in res], [3, 5, 8])
        self.assertFalse(res[1].ok)
        self.assertEqual(res.summary.best_genome, 8)
        method, path, headers, body = Handler.seen[0]
        self.assertEqual((method, urllib.parse.urlsplit(path).path), ("POST", "/v1/evaluate"))
        self.assertEqual(urllib.parse.parse_qs(urllib.parse.urlsplit(path).query),
                         {"limit": ["100"], "fitness": ["neg_loss"]})
        self.assertEqual(headers["Authorization"], "Bearer s3cret")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body)
        parts = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
        js, st = encode_population(self.pop, "population.safetensors")
        self.assertEqual(parts["population"].get_content_type(), "application/json")
        self.assertEqual(parts["population"].get_payload(decode=True), js)
        self.assertEqual(parts["weights"].get_content_type(), "application/octet-stream")
        self.assertEqual(parts["weights"].get_payload(decode=True), st)
        self.assertEqual(parts["weights"].get_filename(), "population.safetensors")

    def test_evaluate_path_sends_json(self):
        self.answer(200, ndjson(line(0, 1), dict(SUMMARY, summary=dict(SUMMARY["summary"], genomes=1))))
        res = Client(self.url).evaluate_path("exp/pop.json")
        self.assertEqual(len(res), 1)
        _, path, headers, body = Handler.seen[0]
        self.assertEqual((path, headers["Content-Type"]), ("/v1/evaluate", "application/json"))
        self.assertEqual(json.loads(body), {"path": "exp/pop.json"})
        self.assertNotIn("Authorization", headers)

    def test_statuses_become_exceptions(self):
        err = {"Content-Type": "application/json; charset=utf-8"}
        for status, cls, extra in [(400, BadRequest, {}), (401, Unauthorized, {}), (413, PayloadTooLarge, {}),
                                   (415, UnsupportedMediaType, {}), (500, ServerError, {}),
                                   (418, ServerError, {}), (503, ServiceBusy, {"Retry-After": "7"})]:
            with self.subTest(status=status):
                self.answer(status, ndjson({"error": "message %d" % status}), **err, **extra)
                with self.assertRaises(cls) as cm:
                    Client(self.url).evaluate(self.pop)
                self.assertEqual((cm.exception.message, cm.exception.status), ("message %d" % status, status))
                if status == 503:
                    self.assertEqual(cm.exception.retry_after, 7)
        self.answer(502, [b"bad gateway from a proxy"])
        with self.assertRaises(ServerError) as cm:
            Client(self.url).status()
        self.assertEqual(cm.exception.message, "bad gateway from a proxy")

    def test_broken_streams(self):
        for chunks, want in [
            (ndjson(line(0, 3), {"error": "evaluating chunk 1: device lost"}), "after 1 results: evaluating chunk 1"),
            (ndjson(line(0, 3), line(1, 5)), "before its summary line"),
            (ndjson(line(0, 3), line(1, 5), SUMMARY), "1 of 3 genomes have no result"),
            (ndjson(line(0, 3), line(0, 3), SUMMARY), "index 0 is out of range or repeated"),
            ([b"{not json\n"], "stream line 1 is not JSON"),
        ]:
            with self.subTest(want=want):
                self.answer(200, chunks)
                with self.assertRaises(StreamError) as cm:
                    Client(self.url).evaluate(self.pop)
                self.assertIn(want, cm.exception.message)

    def test_health_status_and_no_server(self):
        self.answer(200, [b"ok\n"])
        self.assertTrue(Client(self.url).health())
        self.answer(200, ndjson({"version": "v1", "queue": {"length": 0, "capacity": 4}}))
        self.assertEqual(Client(self.url).status()["queue"]["capacity"], 4)
        self.assertEqual(Handler.seen[-1][1], "/v1/status")
        with self.assertRaises(NeatevalError) as cm:
            Client("http://127.0.0.1:%d" % support.free_port(), timeout=5).health()
        self.assertIn("127.0.0.1", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
