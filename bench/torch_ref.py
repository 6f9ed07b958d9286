#!/usr/bin/python3
"""torch_ref.py: evaluate a neateval population with PyTorch, as a reference.

Reads a population in the neateval format (JSON + safetensors, see
shared spec population-format.md) and the MNIST IDX test set, builds every
genome from torch.nn.functional ops, and scores it: accuracy and mean
cross-entropy loss per genome, throughput and achieved GFLOP/s overall.

    /usr/bin/python3 bench/torch_ref.py POP.json MNIST [--batch 256]
        [--threads 2] [--limit N] [--results FILE|-] [--warmup] [--device cpu|cuda]

MNIST is the t10k images file (idx3, optionally .gz) or a folder holding
t10k-images-idx3-ubyte[.gz] and t10k-labels-idx1-ubyte[.gz]; the labels file
is found beside the images. The summary JSON goes to stdout, last; with
--results, one JSON line per genome goes to FILE (or to stdout, before the
summary, with -), in the population's order, with the fields of neateval's
results (genome_id, fitness, accuracy, loss, images, error).

Needs only PyTorch and NumPy (Debian: python3-torch python3-numpy); the
safetensors file is parsed here.
"""

import argparse
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

FORMAT = "neateval.population/v1"


class GenomeError(Exception):
    """A problem with one genome: it is reported, the others still run."""


# ---- input files ----------------------------------------------------------

def read_safetensors(path):
    """Returns {name: float32 numpy array} for the F32, F16 and BF16 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise SystemExit(f"{path}: not a safetensors file (shorter than 8 bytes)")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise SystemExit(f"{path}: header length {n} points outside the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise SystemExit(f"{path}: header is not JSON: {e}")
    body = memoryview(data)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if not 0 <= begin <= end <= len(body):
            raise SystemExit(f"{path}: tensor {name}: offsets [{begin}, {end}) outside the data ({len(body)} bytes)")
        raw = body[begin:end]
        dt, shape = info["dtype"], tuple(info["shape"])
        if dt == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif dt == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dt == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            out[name] = (dt, shape)  # reported if a reachable node uses it
            continue
        if arr.size != math.prod(shape):
            raise SystemExit(f"{path}: tensor {name}: {arr.size} values for shape {list(shape)}")
        out[name] = arr.reshape(shape).astype(np.float32, copy=True)
    return out


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 8:
        raise SystemExit(f"{path}: not an IDX file of unsigned bytes")
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if arr.size != math.prod(shape):
        raise SystemExit(f"{path}: {arr.size} bytes of data for shape {list(shape)}")
    return arr.reshape(shape)


def find_mnist(path):
    if os.path.isdir(path):
        for suffix in ("", ".gz"):
            img = os.path.join(path, "t10k-images-idx3-ubyte" + suffix)
            lab = os.path.join(path, "t10k-labels-idx1-ubyte" + suffix)
            if os.path.exists(img) and os.path.exists(lab):
                return img, lab
        raise SystemExit(f"{path}: no t10k-images-idx3-ubyte[.gz] with its labels file")
    lab = path.replace("images-idx3", "labels-idx1")
    if lab == path or not os.path.exists(lab):
        raise SystemExit(f"{path}: cannot find the labels file beside it (looked for {lab})")
    return path, lab


# ---- genomes --------------------------------------------------------------

ACTS = {
    "identity": lambda x: x,
    "relu": F.relu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.01),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "gelu": lambda x: F.gelu(x),  # exact erf form (approximate="none")
}


def int_field(node, key, default=None, minimum=None):
    v = node.get(key, default)
    if v is None:
        raise GenomeError(f"node {node.get('id')}: {node.get('op')} needs {key}")
    if isinstance(v, bool) or not isinstance(v, int):
        raise GenomeError(f"node {node.get('id')}: {key} must be an integer, got {v!r}")
    if minimum is not None and v < minimum:
        raise GenomeError(f"node {node.get('id')}: {key} {v} below {minimum}")
    return v


class Net:
    """One genome compiled to a list of steps over reachable nodes."""

    def __init__(self, g, inp, num_classes, tensors):
        self.id = g.get("id")
        nodes = {}
        for n in g.get("nodes", []):
            nid = n.get("id")
            if not isinstance(nid, int) or isinstance(nid, bool) or nid < 1 or nid in nodes:
                raise GenomeError(f"node id {nid!r}: must be a unique positive integer")
            nodes[nid] = n
        out = g.get("output")
        if out not in nodes:
            raise GenomeError(f"output {out!r} is not a listed node")
        for n in nodes.values():
            ins = n.get("inputs")
            if not isinstance(ins, list) or not ins:
                raise GenomeError(f"node {n['id']}: inputs must be a non-empty list")
            for i in ins:
                if i != 0 and i not in nodes:
                    raise GenomeError(f"node {n['id']}: input {i!r} does not exist")
        # Cycle check over all listed nodes, then the order of reachable ones.
        state = {}

        def visit(nid, stack):
            if nid == 0 or state.get(nid) == 2:
                return
            if state.get(nid) == 1:
                raise GenomeError(f"node {nid}: the graph has a cycle")
            state[nid] = 1
            for i in nodes[nid]["inputs"]:
                visit(i, stack)
            state[nid] = 2
            stack.append(nid)

        sys.setrecursionlimit(max(1000, 4 * len(nodes) + 100))
        for nid in nodes:
            visit(nid, [])
        order = []
        seen = set()

        def reach(nid):
            if nid == 0 or nid in seen:
                return
            seen.add(nid)
            for i in nodes[nid]["inputs"]:
                reach(i)
            order.append(nid)

        reach(out)
        self.out = out
        self.steps = []
        self.flops = 0
        shapes = {0: ("4d", inp["channels"], inp["height"], inp["width"])}
        gid = self.id
        for nid in order:
            n = nodes[nid]
            op = n.get("op")
            ins = n["inputs"]
            merge = n.get("merge", "sum") if len(ins) > 1 else "single"
            ish = [shapes[i] for i in ins]
            if merge == "concat":
                if any(s[0] != "4d" for s in ish) or len({s[2:] for s in ish}) != 1:
                    raise GenomeError(f"node {nid}: concat needs 4-D inputs of one H×W")
                sh = ("4d", sum(s[1] for s in ish), ish[0][2], ish[0][3])
            elif merge in ("sum", "single"):
                if len({s[0] for s in ish}) != 1 or (ish[0][0] == "4d" and len({s[2:] for s in ish}) != 1):
                    raise GenomeError(f"node {nid}: sum merge needs inputs of one rank and H×W")
                sh = (ish[0][0], max(s[1] for s in ish)) + ish[0][2:]
            else:
                raise GenomeError(f"node {nid}: unknown merge {merge!r}")
            step = {"id": nid, "op": op, "inputs": ins, "merge": merge, "width": sh[1]}
            if op == "conv2d":
                if sh[0] != "4d":
                    raise GenomeError(f"node {nid}: conv2d input is 2-D")
                oc = int_field(n, "out_channels", minimum=1)
                k = int_field(n, "kernel", minimum=1)
                s = int_field(n, "stride", 1, 1)
                p = int_field(n, "padding", k // 2, 0)
                oh, ow = (sh[2] + 2 * p - k) // s + 1, (sh[3] + 2 * p - k) // s + 1
                if sh[2] + 2 * p < k or sh[3] + 2 * p < k or oh < 1 or ow < 1:
                    raise GenomeError(f"node {nid}: conv2d output size below 1")
                w, b = self.weights(tensors, gid, nid, (oc, sh[1], k, k), (oc,))
                step.update(w=w, b=b, stride=s, pad=p, act=self.act(n, "relu"))
                self.flops += 2 * oc * sh[1] * k * k * oh * ow
                out_sh = ("4d", oc, oh, ow)
            elif op in ("maxpool2d", "avgpool2d"):
                if sh[0] != "4d":
                    raise GenomeError(f"node {nid}: {op} input is 2-D")
                k = int_field(n, "kernel", minimum=1)
                s = int_field(n, "stride", k, 1)
                if sh[2] < k or sh[3] < k:
                    raise GenomeError(f"node {nid}: {op} output size below 1")
                step.update(k=k, stride=s)
                out_sh = ("4d", sh[1], (sh[2] - k) // s + 1, (sh[3] - k) // s + 1)
            elif op == "global_avg_pool":
                if sh[0] != "4d":
                    raise GenomeError(f"node {nid}: global_avg_pool input is 2-D")
                out_sh = ("2d", sh[1])
            elif op == "dense":
                fin = sh[1] * sh[2] * sh[3] if sh[0] == "4d" else sh[1]
                fout = int_field(n, "out_features", minimum=1)
                w, b = self.weights(tensors, gid, nid, (fout, fin), (fout,))
                step.update(w=w, b=b, act=self.act(n, "identity"))
                self.flops += 2 * fout * fin
                out_sh = ("2d", fout)
            else:
                raise GenomeError(f"node {nid}: unknown op {op!r}")
            shapes[nid] = out_sh
            self.steps.append(step)
        if shapes[out] != ("2d", num_classes):
            raise GenomeError(f"output node {out}: shape {list(shapes[out][1:])}, want [{num_classes}]")

    @staticmethod
    def act(n, default):
        a = n.get("activation", default)
        if a not in ACTS:
            raise GenomeError(f"node {n['id']}: unknown activation {a!r}")
        return ACTS[a]

    @staticmethod
    def weights(tensors, gid, nid, wshape, bshape):
        res = []
        for kind, shape in (("weight", wshape), ("bias", bshape)):
            name = f"g{gid}.n{nid}.{kind}"
            t = tensors.get(name)
            if t is None:
                raise GenomeError(f"node {nid}: {name}: shape {list(shape)} expected, none found")
            if isinstance(t, tuple):
                raise GenomeError(f"node {nid}: {name}: dtype {t[0]} not accepted")
            if tuple(t.shape) != shape:
                raise GenomeError(f"node {nid}: {name}: shape {list(shape)} expected, found {list(t.shape)}")
            if not np.isfinite(t).all():
                raise GenomeError(f"node {nid}: {name}: non-finite weight")
            res.append(torch.from_numpy(t))
        return res

    def forward(self, x):
        vals = {0: x}
        for st in self.steps:
            ins = [vals[i] for i in st["inputs"]]
            if st["merge"] == "concat":
                h = torch.cat(ins, dim=1)
            elif len(ins) == 1:
                h = ins[0]
            else:
                width = st["width"]
                h = None
                for v in ins:
                    if v.shape[1] < width:
                        pad = [0, 0] * (v.dim() - 2) + [0, width - v.shape[1]]
                        v = F.pad(v, pad)
                    h = v if h is None else h + v
            op = st["op"]
            if op == "conv2d":
                h = st["act"](F.conv2d(h, st["w"], st["b"], stride=st["stride"], padding=st["pad"]))
            elif op == "maxpool2d":
                h = F.max_pool2d(h, st["k"], st["stride"], ceil_mode=False)
            elif op == "avgpool2d":
                h = F.avg_pool2d(h, st["k"], st["stride"], ceil_mode=False)
            elif op == "global_avg_pool":
                h = h.mean(dim=(2, 3))
            elif op == "dense":
                if h.dim() == 4:
                    h = h.flatten(1)
                h = st["act"](F.linear(h, st["w"], st["b"]))
            vals[st["id"]] = h
        return vals[self.out]


# ---- evaluation -----------------------------------------------------------

def evaluate(net, images, labels, batch):
    correct, loss_sum, finite = 0, 0.0, True
    for i in range(0, images.shape[0], batch):
        logits = net.forward(images[i:i + batch])
        y = labels[i:i + batch]
        if not torch.isfinite(logits).all():
            finite = False
            continue
        # argmax: torch returns the first maximal index, as the spec asks.
        correct += int((logits.argmax(dim=1) == y).sum())
        lse = torch.logsumexp(logits.double(), dim=1)
        loss_sum += float((lse - logits.double().gather(1, y[:, None])[:, 0]).sum())
    n = images.shape[0]
    if not finite:
        return {"genome_id": net.id, "fitness": None, "accuracy": None, "loss": None, "images": n,
                "error": "non-finite logits (NaN or ±Inf)"}
    acc = correct / n
    return {"genome_id": net.id, "fitness": acc, "accuracy": acc, "loss": loss_sum / n, "images": n, "error": None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("population", help="population JSON")
    ap.add_argument("mnist", help="t10k images IDX file (.gz ok) or the folder holding it and its labels")
    ap.add_argument("--batch", type=int, default=256, help="images per forward (default 256)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N images (default all)")
    ap.add_argument("--results", help="write per-genome JSON lines to FILE, or - for stdout")
    ap.add_argument("--device", default="cpu",
                    help="torch device to evaluate on: cpu (default) or cuda (weights and images moved there once)")
    ap.add_argument("--warmup", action="store_true",
                    help="run one untimed batch per genome first (oneDNN builds its kernels per shape on first use)")
    a = ap.parse_args()
    if a.batch < 1 or a.threads < 1 or a.limit < 0:
        raise SystemExit("torch_ref.py: --batch and --threads must be ≥ 1, --limit ≥ 0")
    torch.set_num_threads(a.threads)

    try:
        with open(a.population) as f:
            pop = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"{a.population}: {e}")
    if not isinstance(pop, dict) or pop.get("format") != FORMAT:
        raise SystemExit(f"{a.population}: format is not {FORMAT!r}")
    inp, ncls = pop.get("input"), pop.get("num_classes")
    genomes = pop.get("genomes")
    if not isinstance(genomes, list) or not genomes:
        raise SystemExit(f"{a.population}: no genomes")
    wpath = os.path.join(os.path.dirname(os.path.abspath(a.population)), pop.get("weights", ""))
    tensors = read_safetensors(wpath)

    img_path, lab_path = find_mnist(a.mnist)
    imgs, labs = read_idx(img_path), read_idx(lab_path)
    if a.limit:
        imgs, labs = imgs[:a.limit], labs[:a.limit]
    if imgs.ndim == 3:
        imgs = imgs[:, None]
    if tuple(imgs.shape[1:]) != (inp["channels"], inp["height"], inp["width"]):
        raise SystemExit(f"{img_path}: images are {list(imgs.shape[1:])}, the population wants "
                         f"[{inp['channels']}, {inp['height']}, {inp['width']}]")
    images = torch.from_numpy(imgs.astype(np.float32) / 255.0).contiguous()
    labels = torch.from_numpy(labs.astype(np.int64))

    dev = torch.device(a.device)
    images, labels = images.to(dev), labels.to(dev)
    results, nets = [], []
    for g in genomes:
        try:
            net = Net(g, inp, ncls, tensors)
            for st in net.steps:
                if "w" in st:
                    st["w"], st["b"] = st["w"].to(dev), st["b"].to(dev)
            nets.append(net)
            results.append(None)
        except GenomeError as e:
            nets.append(None)
            results.append({"genome_id": g.get("id"), "fitness": None, "accuracy": None, "loss": None,
                            "images": 0, "error": f"genome {g.get('id')}: {e}"})
    flops, evaluated, secs = 0, 0, 0.0
    with torch.no_grad():
        for i, net in enumerate(nets):
            if net is None:
                continue
            if a.warmup:
                net.forward(images[:a.batch])
                if dev.type == "cuda":
                    torch.cuda.synchronize(dev)
            t0 = time.perf_counter()
            results[i] = evaluate(net, images, labels, a.batch)
            secs += time.perf_counter() - t0
            flops += net.flops * images.shape[0]
            evaluated += 1

    if a.results:
        out = sys.stdout if a.results == "-" else open(a.results, "w")
        for r in results:
            out.write(json.dumps(r) + "\n")
        if out is not sys.stdout:
            out.close()
    n = images.shape[0]
    print(json.dumps({
        "engine": f"pytorch {torch.__version__}", "device": str(dev), "threads": a.threads, "batch": a.batch,
        "genomes": evaluated, "invalid": len(nets) - evaluated, "images": n, "seconds": round(secs, 4),
        "images_genomes_per_s": round(evaluated * n / secs, 1) if secs > 0 else None,
        "gflops": round(flops / secs / 1e9, 2) if secs > 0 else None,
    }))


if __name__ == "__main__":
    main()
