#!/usr/bin/env python3
"""Fit wgRatio's coefficients (evaluator/cpu/kernels/conv_winograd.go).

Reads the output of BenchmarkWinogradShapes on stdin:

    go test -run '^$' -bench WinogradShapes -benchtime 3x \\
        ./evaluator/cpu/kernels/ | python3 bench/wgfit.py

For each filter size K (3, 5) it fits, by least squares weighted by the
classic convolution's time,

    (t_winograd / t_classic) · u · taps/K² = a + b/OC + c/C + d/(OH·OW)

(u: the share of the 2×2 tiles' outputs inside the map; taps: the filter
taps the direct sum computes, those that read some pixel), prints the
coefficients as conv_winograd.go's wgFit holds them, and what choosing by
the fitted ratio costs against the faster variant of each shape, next to
always and never taking Winograd. Plain Python 3, no packages.
"""
import re
import sys

LINE = re.compile(r"WinogradShapes/c(\d+)_h(\d+)_w(\d+)_oc(\d+)_k(\d)_p(\d+)/(classic|winograd)\S*\s+\d+\s+([\d.]+) ns/op")


def used(k, p, o, i):
    return sum(1 for t in range(k) if any(0 <= y + t - p < i for y in range(o)))


def read(lines):
    times = {}
    for line in lines:
        m = LINE.search(line)
        if m:
            c, h, w, oc, k, p = map(int, m.groups()[:6])
            times.setdefault((c, h, w, oc, k, p), {})[m.group(7)] = float(m.group(8))
    rows = []
    for (c, h, w, oc, k, p), t in times.items():
        if len(t) != 2:
            continue
        oh, ow = h + 2 * p - k + 1, w + 2 * p - k + 1
        tiles = ((oh + 1) // 2) * ((ow + 1) // 2)
        rows.append(dict(C=c, OC=oc, OH=oh, OW=ow, K=k, u=oh * ow / (4 * tiles),
                         taps=used(k, p, oh, h) * used(k, p, ow, w) / (k * k),
                         tc=t["classic"], tw=t["winograd"]))
    return rows


def features(r):
    return [1, 1 / r["OC"], 1 / r["C"], 1 / (r["OH"] * r["OW"])]


def lstsq(a, y, wt):
    n = len(a[0])
    m = [[sum(w * x[i] * x[j] for x, w in zip(a, wt)) for j in range(n)] for i in range(n)]
    v = [sum(w * x[i] * t for x, t, w in zip(a, y, wt)) for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            f = m[j][i] / m[i][i]
            m[j] = [x - f * z for x, z in zip(m[j], m[i])]
            v[j] -= f * v[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (v[i] - sum(m[i][k] * x[k] for k in range(i + 1, n))) / m[i][i]
    return x


def main():
    rows = read(sys.stdin)
    if not rows:
        sys.exit("wgfit: no BenchmarkWinogradShapes results on stdin")
    fit = {}
    for k in (3, 5):
        rs = [r for r in rows if r["K"] == k]
        fit[k] = lstsq([features(r) for r in rs], [r["tw"] / r["tc"] * r["u"] * r["taps"] for r in rs],
                       [r["tc"] for r in rs])
    print("var wgFit = [2][4]float64{")
    for k in (3, 5):
        print("\t{%s}, // %d×%d" % (", ".join("%.3f" % v for v in fit[k]), k, k))
    print("}")
    best = sum(min(r["tc"], r["tw"]) for r in rows)
    chosen = sum(r["tw"] if sum(a * b for a, b in zip(fit[r["K"]], features(r))) < r["u"] * r["taps"] else r["tc"]
                 for r in rows)
    print("%d shapes; time over the faster variant of each: by the fit %.3f, always Winograd %.3f, never %.3f"
          % (len(rows), chosen / best, sum(r["tw"] for r in rows) / best, sum(r["tc"] for r in rows) / best))


if __name__ == "__main__":
    main()
