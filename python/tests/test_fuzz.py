"""Fuzzing the two parsers of outside input, safetensors.decode and
read_population: seeded random mutations of valid files must give a value
or a FormatError, never another exception."""

import json
import os
import random
import unittest

import support

from neateval import FormatError, read_population, write_population
from neateval.population import parse_population
from neateval.safetensors import decode, encode


def mutate(rng, data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[i:i] = bytes(rng.choice([b"0", b"-", b"9999999999999", b"[", b"}", b'"', b"\xff", b"1e9"]))
        elif op == 2:
            del b[i:i + rng.randint(1, 8)]
        else:
            b = b[:i]
    return bytes(b)


VALUES = [None, True, 0, -1, 2 ** 70, 1.5, "x", "", [], [0], {}, {"id": 1}, float("nan")]


def replace_random(rng, doc):
    """replace_random returns doc with one value, anywhere, replaced by a
    random JSON value (or a key dropped)."""
    if not isinstance(doc, (dict, list)) or not doc or rng.random() < 0.2:
        return rng.choice(VALUES)
    doc = dict(doc) if isinstance(doc, dict) else list(doc)
    key = rng.choice(list(doc)) if isinstance(doc, dict) else rng.randrange(len(doc))
    if isinstance(doc, dict) and rng.random() < 0.1:
        del doc[key]
    else:
        doc[key] = replace_random(rng, doc[key])
    return doc


class Fuzz(unittest.TestCase):
    N = 3000

    def test_safetensors_decode(self):
        rng = random.Random(1)
        seed = encode({"g1.n1.weight": [[1.0, 2.0]], "g1.n1.bias": [0.5]}, "F16")
        for _ in range(self.N):
            data = mutate(rng, seed)
            try:
                decode(data)
            except FormatError:
                pass

    def test_population_json(self):
        rng = random.Random(2)
        pop = support.mixed_population()
        pop.genomes = pop.genomes[:2]
        d = support.tempdir(self)
        path = os.path.join(d, "p.json")
        write_population(path, pop)
        seed = support.read_bytes(path)
        for _ in range(self.N):
            data = mutate(rng, seed)
            try:
                doc = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                continue
            try:
                parse_population(doc)
            except FormatError:
                pass
        good = json.loads(seed)
        for _ in range(self.N):
            try:
                parse_population(replace_random(rng, good))
            except FormatError:
                pass
        with open(path, "wb") as f:
            f.write(mutate(random.Random(3), seed))
        try:
            read_population(path)
        except FormatError:
            pass


if __name__ == "__main__":
    unittest.main()
