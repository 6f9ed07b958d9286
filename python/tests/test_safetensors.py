"""Tests of neateval.safetensors: round trips in every dtype, the byte
layout, and the errors of broken files."""

import json
import struct
import unittest

import support  # noqa: F401  (puts python/ on sys.path)
import numpy as np

from neateval import FormatError, safetensors


def raw_file(header, data=b""):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


class RoundTrip(unittest.TestCase):
    def test_f32_exact(self):
        rng = np.random.default_rng(0)
        ts = {"b": rng.standard_normal((3, 4)).astype(np.float32), "a": np.arange(5, dtype=np.float32),
              "empty": np.zeros((0, 3), np.float32), "scalar": np.float32(2.5)}
        back = safetensors.decode(safetensors.encode(ts))
        self.assertEqual(sorted(back), sorted(ts))
        for k, v in ts.items():
            self.assertEqual(back[k].dtype, np.float32)
            np.testing.assert_array_equal(back[k], np.asarray(v))

    def test_f16_and_bf16_round_to_their_precision(self):
        x = np.array([1.0, -2.5, 0.1, 65504, 1e-3, 3.14159], np.float32)
        f16 = safetensors.decode(safetensors.encode({"x": x}, "F16"))["x"]
        np.testing.assert_array_equal(f16, x.astype(np.float16).astype(np.float32))
        bf = safetensors.decode(safetensors.encode({"x": x}, "BF16"))["x"]
        np.testing.assert_allclose(bf, x, rtol=2 ** -8)

    def test_bf16_rounds_to_nearest_even(self):
        one = np.float32(1.0)
        ulp = np.float32(2 ** -7)  # bf16's spacing at 1
        x = np.array([one + ulp / 2, one + ulp + ulp / 2, one + ulp / 2 + 2 ** -20, -0.0, np.inf], np.float32)
        got = safetensors.decode(safetensors.encode({"x": x}, "BF16"))["x"]
        np.testing.assert_array_equal(got, np.array([1.0, 1 + 2 * ulp, 1 + ulp, -0.0, np.inf], np.float32))
        nan = safetensors.decode(safetensors.encode({"x": np.array([np.nan], np.float32)}, "BF16"))["x"]
        self.assertTrue(np.isnan(nan[0]))

    def test_layout_is_sorted_padded_and_deterministic(self):
        ts = {"z": np.ones(3, np.float32), "a<b": np.zeros((2, 2), np.float32)}
        data = safetensors.encode(ts)
        self.assertEqual(data, safetensors.encode(dict(reversed(list(ts.items())))))
        (n,) = struct.unpack("<Q", data[:8])
        self.assertEqual(n % 8, 0)
        header = data[8:8 + n].decode()
        self.assertTrue(header.startswith('{"a\\u003cb":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},'), header)
        self.assertEqual(len(data), 8 + n + 16 + 12)

    def test_reads_metadata_and_refuses_writing_it(self):
        data = raw_file({"__metadata__": {"k": "v"}, "t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}},
                        struct.pack("<f", 7))
        self.assertEqual(safetensors.decode(data)["t"][0], 7)
        with self.assertRaises(ValueError):
            safetensors.encode({"__metadata__": np.zeros(1)})


class Errors(unittest.TestCase):
    def check(self, data, *parts):
        with self.assertRaises(FormatError) as cm:
            safetensors.decode(data, "w.safetensors")
        for p in ("w.safetensors",) + parts:
            self.assertIn(p, str(cm.exception))

    def test_broken_files(self):
        ok = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
        self.check(b"\x01\x02", "too short")
        self.check(struct.pack("<Q", 100) + b"{}", "header length 100 exceeds file size 10")
        self.check(struct.pack("<Q", 2) + b"{x", "not JSON")
        self.check(raw_file([1, 2]), "not a JSON object")
        self.check(raw_file({"t": ok}, b"\0" * 4), "'t'", "outside the data area of 4 bytes")
        self.check(raw_file({"t": dict(ok, shape=[3])}, b"\0" * 8), "'t'", "needs 12 bytes", "hold 8")
        self.check(raw_file({"t": dict(ok, dtype="I32")}, b"\0" * 8), "'t'", "dtype 'I32'")
        self.check(raw_file({"t": dict(ok, shape=[-2])}, b"\0" * 8), "'t'", "shape [-2]")
        self.check(raw_file({"t": {"shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8), "dtype is missing")
        self.check(raw_file({"t": dict(ok, data_offsets=[0])}, b"\0" * 8), "data_offsets [0]")


if __name__ == "__main__":
    unittest.main()
