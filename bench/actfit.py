"""Fit the rational approximations of kernels/act.go (and gen_vec.go).

f(x) ~ x*P(z)/Q(z), z = x^2, Q(0) = 1, of least maximum relative error on
(0, c]: iteratively reweighted least squares (Lawson's weights, the
denominator's previous values dividing them, Loeb/Sanathanan-Koerner) on a
dense grid, in 40-digit arithmetic. Needs mpmath (pure Python).

    python3 bench/actfit.py tanh 9.5 6 3   # tanhN, tanhD (max rel 1.6e-8)
    python3 bench/actfit.py erf 5.5 5 5    # erfP, erfQ of erf(x/sqrt 2) (2.7e-8)

Prints the maximum relative error and the coefficients of P and Q in z.
"""
import sys, mpmath as mp
mp.mp.dps = 40
def fit(f, c, m, n, npts=400, iters=60):
    # Chebyshev-like nodes in x on (0,c]
    xs = [c*(mp.mpf(i)+0.5)/npts for i in range(npts)]  # uniform
    xs = sorted(set(xs + [c*(1-mp.cos(mp.pi*(i+0.5)/npts))/2 for i in range(npts)]))
    fv = [f(x) for x in xs]
    s = c*c  # scale z to [0,1]
    w = [mp.mpf(1)]*len(xs); qprev = [mp.mpf(1)]*len(xs)
    best = None
    for it in range(iters):
        A = []; b = []
        for x, fx, wi, qp in zip(xs, fv, w, qprev):
            t = x*x/s
            scale = wi / (abs(fx) * qp)
            row = [x*t**j*scale for j in range(m+1)] + [-fx*t**j*scale for j in range(1, n+1)]
            A.append(row); b.append(fx*scale)
        sol, res = mp.qr_solve(mp.matrix(A), mp.matrix(b))
        p = [sol[j] for j in range(m+1)]; q = [mp.mpf(1)] + [sol[m+1+j] for j in range(n)]
        errs = []; qs = []
        for x, fx in zip(xs, fv):
            t = x*x/s
            P = sum(p[j]*t**j for j in range(m+1)); Q = sum(q[j]*t**j for j in range(n+1))
            errs.append(abs(x*P/Q - fx)/abs(fx)); qs.append(abs(Q))
        e = max(errs)
        if best is None or e < best[0]:
            best = (e, p, q)
        tot = sum(wi*ei for wi, ei in zip(w, errs))
        w = [wi*ei/tot for wi, ei in zip(w, errs)]
        qprev = qs
    e, p, q = best
    # unscale: t = z/s -> coefficient of z^j is p_j / s^j
    P = [p[j]/s**j for j in range(m+1)]; Q = [q[j]/s**j for j in range(n+1)]
    return e, P, Q
if __name__ == "__main__":
    which, c, m, n = sys.argv[1], mp.mpf(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    f = {"tanh": mp.tanh, "erf": lambda x: mp.erf(x/mp.sqrt(2))}[which]
    e, P, Q = fit(f, c, m, n)
    print(which, "c", c, "m", m, "n", n, "maxrel", mp.nstr(e, 5))
    print("P", [mp.nstr(v, 17) for v in P])
    print("Q", [mp.nstr(v, 17) for v in Q])
