"""A safetensors reader and writer for float tensors, in numpy alone.

A safetensors file is an 8-byte little-endian header length N, N bytes of
JSON mapping each tensor name to ``{"dtype", "shape", "data_offsets"}``
(plus an optional ``"__metadata__"`` object of strings), then the data
area; ``data_offsets`` ``[begin, end)`` count from the first byte after the
header. This module reads F32, F16 and BF16 tensors (other dtypes are
refused by name) and writes them from numpy arrays, with the names sorted
and the header padded with spaces to a multiple of 8 bytes, exactly as
neateval's Go writer does: an F32 file written here has the same bytes as
one written by ``neateval``.

BF16 has no numpy dtype: it is the top 16 bits of a float32, so it is read
by shifting the bits into place and written by rounding to nearest even.
"""

import json
import os
import struct
import tempfile

import numpy as np

from .errors import FormatError

__all__ = ["DTYPES", "decode", "encode", "read", "write", "go_json_string"]

# DTYPES maps the float dtypes this module knows to their element sizes.
DTYPES = {"F32": 4, "F16": 2, "BF16": 2}

_NUMPY = {"F32": "<f4", "F16": "<f2"}


def go_json_string(s):
    """go_json_string quotes s as Go's encoding/json does (it escapes
    <, >, & and U+2028/U+2029), so that Python writes the bytes Go writes."""
    q = json.dumps(s, ensure_ascii=False)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        q = q.replace(a, b)
    return q


def _bf16_to_f32(raw):
    bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
    return bits.view(np.float32)


def _f32_to_bf16(a):
    """_f32_to_bf16 rounds float32 values to bfloat16 bits, to nearest
    even; NaN stays NaN (quiet)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).reshape(-1).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(bits.view(np.float32))
    rounded = np.where(nan, (bits >> 16) | 0x40, rounded)
    return rounded.astype("<u2")


def decode(data, name="safetensors"):
    """decode parses a whole safetensors file held in data (bytes) and
    returns {tensor name: float32 numpy array}. A tensor of a dtype other
    than F32, F16 or BF16, a header that is not JSON, or offsets that do not
    fit raise FormatError naming name, the tensor and the byte offsets."""
    data = memoryview(data)
    if len(data) < 8:
        raise FormatError(f"{name}: file of {len(data)} bytes is too short for the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise FormatError(f"{name}: header length {n} exceeds file size {len(data)}")
    end = 8 + n
    try:
        header = json.loads(bytes(data[8:end]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise FormatError(f"{name}: header (bytes 8 to {end}) is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise FormatError(f"{name}: header (bytes 8 to {end}) is not a JSON object")
    area = data[end:]
    out = {}
    for tname in sorted(header):
        if tname == "__metadata__":
            continue
        try:
            out[tname] = _decode_entry(header[tname], area, end)
        except FormatError as e:
            raise FormatError(f"{name}: tensor {tname!r}: {e}") from None
    return out


def _decode_entry(h, area, hdr_end):
    if not isinstance(h, dict):
        raise FormatError(f"header entry is not an object: {h!r}")
    dtype, shape, offs = h.get("dtype"), h.get("shape"), h.get("data_offsets")
    if dtype is None:
        raise FormatError("dtype is missing")
    if dtype not in DTYPES:
        raise FormatError(f"dtype {dtype!r}, want one of F32, F16, BF16")
    if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
        raise FormatError(f"shape {shape!r}, want a list of non-negative integers")
    if not isinstance(offs, list) or len(offs) != 2 or not all(_is_int(o) for o in offs):
        raise FormatError(f"data_offsets {offs!r}, want [begin, end]")
    begin, end = offs
    if begin < 0 or end < begin or end > len(area):
        raise FormatError(f"data_offsets [{begin} {end}] point outside the data area of {len(area)} bytes "
                          f"(file bytes {hdr_end} to {hdr_end + len(area)})")
    numel = 1
    for d in shape:
        numel *= d
    need = numel * DTYPES[dtype]
    if need != end - begin:
        raise FormatError(f"{dtype} shape {shape} needs {need} bytes, data_offsets [{begin} {end}] "
                          f"(file bytes {hdr_end + begin} to {hdr_end + end}) hold {end - begin}")
    raw = area[begin:end]
    if dtype == "BF16":
        a = _bf16_to_f32(raw)
    else:
        a = np.frombuffer(raw, dtype=_NUMPY[dtype]).astype(np.float32)
    return a.reshape(shape)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def encode(tensors, dtype="F32"):
    """encode returns the bytes of a safetensors file holding tensors
    ({name: array-like of floats}), every one stored as dtype (F32, F16 or
    BF16). Names are sorted and the header padded to a multiple of 8 bytes,
    so the bytes depend only on the tensors."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}, want one of F32, F16, BF16")
    names = sorted(tensors)
    parts, entries, off = [], [], 0
    for tname in names:
        if tname == "__metadata__":
            raise ValueError(f"tensor name {tname!r} is reserved")
        a = np.asarray(tensors[tname])
        if a.dtype.kind not in "fiu":
            raise ValueError(f"tensor {tname!r} has dtype {a.dtype}, want floats")
        if dtype == "BF16":
            b = _f32_to_bf16(a).tobytes()
        else:
            b = np.ascontiguousarray(a, dtype=_NUMPY[dtype]).tobytes()
        shape = ",".join(str(d) for d in a.shape)
        entries.append(f'{go_json_string(tname)}:{{"dtype":"{dtype}","shape":[{shape}],'
                       f'"data_offsets":[{off},{off + len(b)}]}}')
        off += len(b)
        parts.append(b)
    hdr = ("{" + ",".join(entries) + "}").encode("utf-8")
    hdr += b" " * (-len(hdr) % 8)
    return struct.pack("<Q", len(hdr)) + hdr + b"".join(parts)


def read(path):
    """read reads a safetensors file as decode does; errors name the file."""
    with open(path, "rb") as f:
        data = f.read()
    return decode(data, os.fspath(path))


def write(path, tensors, dtype="F32"):
    """write writes tensors to path as encode does, atomically: a temporary
    file in the same folder, then a rename."""
    write_atomic(path, encode(tensors, dtype))


def write_atomic(path, data):
    """write_atomic writes data (bytes) to path through a temporary file in
    the same folder and a rename, so a reader sees the old file or the new
    one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
