"""A client of ``neateval serve``, the HTTP service (docs/http-api.md).

    client = Client("http://127.0.0.1:8080", token=os.environ.get("NEATEVAL_TOKEN"))
    results = client.evaluate(pop, limit=2000)       # one Result per genome, in order
    print(results[0].fitness, results.summary.best_fitness)

evaluate uploads the population (a Population, or the path of a population
JSON file with its weights beside it) as multipart/form-data and reads the
NDJSON stream of results as the server writes them; on_result, if given,
is called with each Result as it arrives (in completion order). A refusal
raises the exception of its status code (BadRequest, Unauthorized, ...),
carrying the server's message. Closing the connection early (an exception
in on_result, a KeyboardInterrupt) cancels the evaluation on the server.

The standard library's urllib is the only transport: nothing to install.
"""

import json
import os
import secrets
import urllib.error
import urllib.parse
import urllib.request

from . import errors
from .population import Population, encode_population
from .results import in_order, parse_result, parse_summary

__all__ = ["Client", "encode_multipart"]


class Client:
    """Client talks to one neateval service at url (scheme, host, port),
    sending token as a bearer token when given. timeout is the socket
    timeout in seconds: for connecting and for each read, so a long
    evaluation is fine as long as results keep coming."""

    def __init__(self, url, token=None, timeout=300.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def health(self):
        """health returns True when the service answers GET /v1/health
        with 200."""
        with self._open("GET", "/v1/health") as resp:
            return resp.status == 200

    def status(self):
        """status returns the service's GET /v1/status document (a dict)."""
        with self._open("GET", "/v1/status") as resp:
            return json.loads(resp.read().decode("utf-8"))

    def evaluate(self, population, limit=None, fitness=None, on_result=None):
        """evaluate scores population (a Population, a path to a population
        JSON file, or a (json_bytes, safetensors_bytes) pair) and returns
        Results: one Result per genome in population order, with .summary.
        limit caps the images (None: the server's default), fitness names
        the fitness ("accuracy" or "neg_loss"; None: the server's)."""
        js, st = _population_bytes(population)
        n = _genome_count(js)
        body, ctype = encode_multipart([
            ("population", "population.json", "application/json", js),
            ("weights", "population.safetensors", "application/octet-stream", st),
        ])
        return self._evaluate(body, ctype, limit, fitness, on_result, n)

    def evaluate_path(self, path, limit=None, fitness=None, on_result=None):
        """evaluate_path scores the population the server reads at path,
        relative to a folder its operator allowed (--allow-dir)."""
        body = json.dumps({"path": os.fspath(path)}).encode("utf-8")
        return self._evaluate(body, "application/json", limit, fitness, on_result, None)

    def _evaluate(self, body, ctype, limit, fitness, on_result, n):
        query = {}
        if limit is not None:
            query["limit"] = str(int(limit))
        if fitness is not None:
            query["fitness"] = fitness
        path = "/v1/evaluate" + ("?" + urllib.parse.urlencode(query) if query else "")
        with self._open("POST", path, body, {"Content-Type": ctype}) as resp:
            return _read_stream(resp, on_result, n)

    def _open(self, method, path, body=None, headers=None):
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers or {})
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            raise _http_error(e) from None
        except urllib.error.URLError as e:
            raise errors.NeatevalError(f"{self.url}: {e.reason}") from e


def _http_error(e):
    """_http_error turns an HTTP error response into the exception of its
    status, with the server's message."""
    try:
        raw = e.read()
    except OSError:
        raw = b""
    finally:
        e.close()
    msg = raw.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(msg)
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            msg = doc["error"]
    except ValueError:
        pass
    msg = msg or f"HTTP {e.code} {e.reason}"
    if e.code == 503:
        return errors.ServiceBusy(msg, 503, _retry_after(e.headers.get("Retry-After")))
    cls = errors.BY_STATUS.get(e.code, errors.ServerError)
    return cls(msg, e.code)


def _retry_after(value):
    if value is None:
        return None
    try:
        return max(0, int(value.strip()))
    except ValueError:
        return None  # an HTTP date: the service does not send one


def _read_stream(resp, on_result, n):
    """_read_stream reads the NDJSON stream of an evaluation."""
    got, summary = [], None
    for raw in resp:
        line = raw.strip()
        if not line:
            continue
        try:
            obj = json.loads(line.decode("utf-8"))
        except ValueError:
            raise errors.StreamError(f"stream line {len(got) + 1} is not JSON: {line[:80]!r}") from None
        if "summary" in obj:
            summary = parse_summary(obj["summary"])
            break
        if "error" in obj and "genome_id" not in obj:
            raise errors.StreamError(f"the evaluation failed after {len(got)} results: {obj['error']}")
        r = parse_result(obj)
        got.append(r)
        if on_result is not None:
            on_result(r)
    if summary is None:
        raise errors.StreamError(f"the stream ended after {len(got)} results, before its summary line")
    try:
        return in_order(got, summary.genomes if n is None else n, summary)
    except ValueError as e:
        raise errors.StreamError(str(e)) from None


def _population_bytes(population):
    if isinstance(population, Population):
        return encode_population(population, "population.safetensors")
    if isinstance(population, tuple) and len(population) == 2:
        return bytes(population[0]), bytes(population[1])
    path = os.fspath(population)
    with open(path, "rb") as f:
        js = f.read()
    try:
        weights = json.loads(js.decode("utf-8")).get("weights")
    except (ValueError, AttributeError):
        weights = None  # the server says what is wrong with it
    if not isinstance(weights, str) or not weights:
        raise errors.FormatError(f"{path}: no \"weights\" file named")
    with open(os.path.join(os.path.dirname(os.path.abspath(path)), weights), "rb") as f:
        return js, f.read()


def _genome_count(js):
    try:
        g = json.loads(js.decode("utf-8")).get("genomes")
        return len(g) if isinstance(g, list) else None
    except (ValueError, AttributeError):
        return None


def encode_multipart(parts):
    """encode_multipart returns (body, content_type) of a multipart/form-data
    body of parts, each (field name, file name, content type, bytes)."""
    boundary = "neateval-" + secrets.token_hex(16)
    out = []
    for name, filename, ctype, data in parts:
        out.append((f"--{boundary}\r\n"
                    f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                    f"Content-Type: {ctype}\r\n\r\n").encode("ascii"))
        out.append(data)
        out.append(b"\r\n")
    out.append(f"--{boundary}--\r\n".encode("ascii"))
    return b"".join(out), "multipart/form-data; boundary=" + boundary
