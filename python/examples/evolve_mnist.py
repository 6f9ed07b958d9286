#!/usr/bin/env python3
"""A small evolutionary loop in numpy that improves MNIST accuracy through neateval.

One fixed CNN (conv 5×5 stride 2 → dense), its weights evolved by an
evolution strategy: each generation, `--pairs` random directions ε are
drawn; the parent θ and the 2·pairs children θ ± σ·ε are scored in ONE
evaluation (the service, or `neateval run` with --local); the parent moves
along the directions weighted by the children's rank. The best genome seen
so far is kept, so its accuracy never falls.

    python3 python/examples/evolve_mnist.py --url http://127.0.0.1:8080 --generations 20
    python3 python/examples/evolve_mnist.py --local bin/neateval --generations 5 --limit 500

It prints one line per generation: the parent's accuracy and loss, the fittest
child's, and the best so far. --out writes the best genome (population
format) at the end. Genomes are scored on the first --limit images of the
service's data set (for `neateval run`: the MNIST test set).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from neateval import Client, LocalRunner, Population, cnn, write_population  # noqa: E402


def flatten(g):
    """flatten returns the genome's weights as one vector, and the nodes
    and shapes to put a vector back."""
    parts, layout = [], []
    for n in g.nodes:
        for kind in ("weight", "bias"):
            t = getattr(n, kind)
            if t is not None:
                parts.append(t.reshape(-1))
                layout.append((n.id, kind, t.shape))
    return np.concatenate(parts).astype(np.float64), layout


def unflatten(template, theta, layout, gid):
    """unflatten returns a copy of template with id gid and weights theta."""
    g = template.copy(id=gid)
    off = 0
    for nid, kind, shape in layout:
        size = int(np.prod(shape))
        setattr(g.node(nid), kind, theta[off:off + size].reshape(shape).astype(np.float32))
        off += size
    return g


def ranks(f):
    """ranks maps fitnesses to centred ranks in [-0.5, 0.5]."""
    r = np.empty(len(f))
    r[np.argsort(f)] = np.arange(len(f))
    return r / (len(f) - 1) - 0.5


def evolve(evaluator, generations, pairs=16, sigma=0.02, lr=0.01, limit=1000, seed=1, log=print):
    """evolve runs the loop and returns (the best genome, its accuracy, the
    history: one (parent accuracy, best so far) per generation)."""
    rng = np.random.default_rng(seed)
    template = cnn.chain(0, [cnn.Conv(8, 5, stride=2), cnn.Dense(10)], rng=rng)
    theta, layout = flatten(template)
    best, best_acc, history = template, -1.0, []
    for gen in range(generations):
        t0 = time.monotonic()
        eps = rng.standard_normal((pairs, theta.size))
        thetas = [theta] + [theta + s * sigma * e for e in eps for s in (1, -1)]
        pop = Population([unflatten(template, t, layout, i) for i, t in enumerate(thetas)])
        rs = evaluator.evaluate(pop, limit=limit, fitness="neg_loss")
        fit = np.array([r.fitness if r.ok else -1e9 for r in rs])
        for i, r in enumerate(rs):
            if r.ok and r.accuracy > best_acc:
                best, best_acc = pop.genomes[i].copy(id=0), r.accuracy
        w = ranks(fit[1:]).reshape(pairs, 2)
        theta = theta + lr / (2 * pairs * sigma) * ((w[:, 0] - w[:, 1]) @ eps)
        child = 1 + int(np.argmax(fit[1:]))
        history.append((rs[0].accuracy, best_acc))
        log(f"gen {gen + 1:3d}  parent acc {rs[0].accuracy:.4f} loss {rs[0].loss:.4f}  "
            f"fittest child acc {rs[child].accuracy:.4f}  best so far {best_acc:.4f}  "
            f"({len(rs)} genomes, {time.monotonic() - t0:.1f}s)")
    return best, best_acc, history


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--url", help="the neateval service, e.g. http://127.0.0.1:8080")
    src.add_argument("--local", metavar="BIN", help="run the neateval binary BIN instead of a service")
    ap.add_argument("--token", default=os.environ.get("NEATEVAL_TOKEN"), help="bearer token (default $NEATEVAL_TOKEN)")
    ap.add_argument("--generations", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=16, help="antithetic pairs per generation (2·pairs + 1 genomes)")
    ap.add_argument("--sigma", type=float, default=0.02, help="perturbation size")
    ap.add_argument("--lr", type=float, default=0.01, help="step size")
    ap.add_argument("--limit", type=int, default=1000, help="images per evaluation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write the best genome to this population JSON file")
    a = ap.parse_args(argv)
    ev = Client(a.url, token=a.token) if a.url else LocalRunner(a.local)
    best, acc, _ = evolve(ev, a.generations, a.pairs, a.sigma, a.lr, a.limit, a.seed)
    print(f"best accuracy {acc:.4f} on {a.limit} images")
    if a.out:
        write_population(a.out, Population([best]))
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
