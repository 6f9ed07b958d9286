"""gpu_ceilings.py: the card's ceilings through PyTorch, for the
performance model (docs/gpu-performance-model.md): a device-to-device copy
(bytes read plus written over the time), and 8192³ matrix products in
float32 with TF32 off, with TF32 on, and in bfloat16. Random data, three
warm-ups, the median of ten timed runs by CUDA events. Prints one line per
figure and a last line of JSON. About 10 s on an H200.

    python3 scripts/gpu_ceilings.py [--size N] [--copy-gib G]
"""

import argparse
import json
import statistics

import torch


def timed(f, reps=10, warm=3):
    for _ in range(warm):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=8192, help="matrix side (default 8192)")
    ap.add_argument("--copy-gib", type=float, default=2.0, help="GiB copied (default 2)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(0)}
    n = int(a.copy_gib * (1 << 30)) // 4
    src = torch.randn(n, device=dev)
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src))
    out["copy_tb_s"] = 2 * n * 4 / t / 1e12
    print(f"copy {2 * n * 4 / 1e9:.1f} GB read+written: {out['copy_tb_s']:.2f} TB/s")
    del src, dst
    s = a.size
    flops = 2 * s**3
    for name, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True), ("bf16", torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        x = torch.randn(s, s, device=dev, dtype=dtype)
        y = torch.randn(s, s, device=dev, dtype=dtype)
        t = timed(lambda: x @ y)
        out[f"matmul_{name}_tflop_s"] = flops / t / 1e12
        print(f"matmul {s}³ {name}: {flops / t / 1e12:.1f} TFLOP/s")
    torch.backends.cuda.matmul.allow_tf32 = False
    print(json.dumps(out))


if __name__ == "__main__":
    main()
