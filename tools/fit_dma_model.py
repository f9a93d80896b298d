#!/usr/bin/env python3
"""Fits the DMA timing model of the athread emulator to the published measurements.

Model (target_sw/emulator/src/timing.cpp): one request of a CPE costs
    latency(get|put) + blocks * block_cycles            (per CPE, not shared)
  + its 128-byte-line bytes through a channel shared by all active CPEs
    (processor sharing; a get line byte costs 1/get_bw channel cycles, a put one 1/put_bw).
A CPE's requests are served one after the other. In the STREAM kernels of CAND
(jameslinsjtu/swCandle memory/stream_sw/PE/PE_CONT) the 64 CPEs run in lockstep, so one
iteration takes the sum over its requests of latency + blocks * block + 64 * line_bytes / bw
(+ the few cycles of the LDM copy loop). That is linear in (Lg, Lp, block, 1/bw_get, 1/bw_put):
a weighted linear least squares on the relative error of the time does the fit.

Data: shared/sunway/dma_bandwidth.csv (copy = get B + put B; triad = 2 gets + 1 put; each
request waited for; arrays offset by 10 doubles as in CAND, so a B-byte request touches the
lines of [80, 80 + B) mod 128) and the strided copy ranges of SW26010.md (24 KB per
descriptor, blocks of b bytes; line bytes taken as b + 120, the mean over 8-aligned offsets).
Run: python3 tools/fit_dma_model.py [path/to/dma_bandwidth.csv]   (no numpy needed)
"""
import math
import sys

CLOCK_GHZ = 1.45
NCPE = 64
LINE = 128
OFFSET = 80  # CAND: arrays + 10 doubles
MIN_FIT_BYTES = 128  # below, requests are sub-line and the linear model does not hold

# SW26010.md, strided DMA, copy: (block bytes, low GB/s, high GB/s)
STRIDED = [(64, 2.7, 3.3), (256, 7.9, 9.2), (1024, 14.4, 15.8), (4096, 17.3, 18.9),
           (8192, 19.3, 19.7)]
STRIDED_WEIGHT = 1.0
THEORETICAL_GBPS = 34.1  # per CG [V] GK: no line-byte rate may exceed it
LAWSON_ROUNDS = 100
# SW26010.md, SW26010-Pro (OPS, few points, copy = triad assumed)
PRO_POINTS = [(16, 3.4), (256, 17.6), (1024, 23.5), (4096, 26.0)]
PRO_CLOCK_GHZ = 2.25


def line_bytes(start, n):
    return (start + n + LINE - 1) // LINE * LINE - start // LINE * LINE


def mean_line_bytes(b):
    """Mean line bytes of the b-byte requests of CPE i, iteration k at 80 + b * (i + 64 k)."""
    offs = [(OFFSET + b * j) % LINE for j in range(LINE)]
    return sum(line_bytes(o, b) for o in offs) / len(offs)


def compute_cycles(b, kind):
    """Cycles of the LDM loop of the test kernels (tests/timing_model_kernels.c): per 32-byte
    vector, copy = 1 load + 1 store, triad = 2 loads + 1 store + 1 FMA (P1 bound)."""
    nvec = (b + 31) // 32
    return (2 if kind == "copy" else 3) * nvec


def rows_for(kind, b, gbps, x=None):
    """(coefficients of L (= mean of the get and put latencies), block, inv_get, inv_put; measured cycles; compute cycles).
    Copy: get (setup, data, latency), then put. Triad: the second get's setup overlaps the
    first get's data, its data follows the first one's: the pair takes
    max(2 setup, setup + data) + data + latency; the branch is chosen with the current fit x."""
    stream_bytes = (2 if kind == "copy" else 3) * b
    t = NCPE * stream_bytes / (gbps * 1e9) * CLOCK_GHZ * 1e9
    lb = mean_line_bytes(b)
    if kind == "copy":
        return [2, 2, NCPE * lb, NCPE * lb], t, compute_cycles(b, kind)
    setup_bound = x is not None and x[1] > NCPE * lb * x[2]
    if setup_bound:  # 2 setups + 1 data
        return [2, 3, NCPE * lb, NCPE * lb], t, compute_cycles(b, kind)
    return [2, 2, 2 * NCPE * lb, NCPE * lb], t, compute_cycles(b, kind)


def strided_row(b, gbps):
    per_req = 24 * 1024
    nblk = per_req // b
    t = NCPE * 2 * per_req / (gbps * 1e9) * CLOCK_GHZ * 1e9
    lb = nblk * (b + LINE - 8)
    return [2, 2 * nblk, NCPE * lb, NCPE * lb], t, compute_cycles(per_req, "copy")


def solve(a, y, w):
    """Weighted least squares by the normal equations (tiny, well scaled after row scaling)."""
    n = len(a[0])
    # scale columns for conditioning
    scale = [max(abs(r[j]) for r in a) or 1.0 for j in range(n)]
    m = [[sum(w[k] * a[k][i] / scale[i] * a[k][j] / scale[j] for k in range(len(a)))
          for j in range(n)] for i in range(n)]
    v = [sum(w[k] * a[k][i] / scale[i] * y[k] for k in range(len(a))) for i in range(n)]
    for c in range(n):  # Gauss-Jordan with partial pivoting
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p], v[c], v[p] = m[p], m[c], v[p], v[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * z for x, z in zip(m[r], m[c])]
                v[r] -= f * v[c]
    return [v[i] / m[i][i] / scale[i] for i in range(n)]


def nelder_mead(f, x0, step=0.1, rounds=3000):
    """Plain Nelder-Mead minimisation (no scipy here)."""
    n = len(x0)
    simplex = [list(x0)] + [[v + (step if i == j else 0.0) for j, v in enumerate(x0)]
                            for i in range(n)]
    vals = [f(p) for p in simplex]
    for _ in range(rounds):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in simplex[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - simplex[-1][j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - simplex[-1][j]) for j in range(n)]
            fe = f(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (simplex[-1][j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                simplex = [simplex[0]] + [[simplex[0][j] + 0.5 * (p[j] - simplex[0][j])
                                           for j in range(n)] for p in simplex[1:]]
                vals = [vals[0]] + [f(p) for p in simplex[1:]]
    return simplex[min(range(n + 1), key=lambda i: vals[i])]


def model_gbps(x, coef, t_meas, comp, gbps):
    t = sum(c * p for c, p in zip(coef, x)) + comp
    return gbps * t_meas / t


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/sunway/dma_bandwidth.csv"
    curve = []
    for line in open(path):
        if line[0].isdigit():
            b, c, t = line.strip().split(",")
            curve.append((int(b), float(c), float(t)))
    def build(x):
        pts = []  # (label, coef, t_meas, comp, gbps, weight)
        for b, c, t in curve:
            for kind, g in (("copy", c), ("triad", t)):
                coef, tm, comp = rows_for(kind, b, g, x)
                pts.append(("%s %d" % (kind, b), coef, tm, comp, g,
                            1.0 if b >= MIN_FIT_BYTES else 0.0))
        for b, lo, hi in STRIDED:
            coef, tm, comp = strided_row(b, (lo + hi) / 2)
            pts.append(("strided %d" % b, coef, tm, comp, (lo + hi) / 2, STRIDED_WEIGHT))
        fit = [p for p in pts if p[5] > 0]
        a = [[c / p[2] for c in p[1]] for p in fit]
        y = [(p[2] - p[3]) / p[2] for p in fit]
        return pts, fit, a, y

    x = None
    for _ in range(6):  # least squares; refit until the triad branches (setup- or data-bound) settle
        pts, fit, a, y = build(x)
        x = solve(a, y, [p[5] for p in fit])
    # Then minimise the worst relative error of the bandwidths (the curve is to be met
    # within a few percent everywhere), strided points counted only outside their range,
    # by Nelder-Mead on the log of the parameters, from the least-squares solution.
    def worst(logx):
        xx = [math.exp(v) for v in logx]
        pts_, _, _, _ = build(xx)
        e = 0.0
        for label, coef, tm, comp, g, wt in pts_:
            if wt <= 0:
                continue
            m = model_gbps(xx, coef, tm, comp, g)
            if label.startswith("strided"):
                lo, hi = [(l, h) for b, l, h in STRIDED if "strided %d" % b == label][0]
                m_abs = m  # model_gbps scales the measured mid value
                e = max(e, STRIDED_WEIGHT * max(0.0, lo - m_abs, m_abs - hi) / g)
            else:
                e = max(e, abs(m - g) / g)
        for inv in xx[2:]:  # a channel faster than the DDR3 peak is not physical: a hard wall
            e = max(e, 100.0 * (CLOCK_GHZ / inv / THEORETICAL_GBPS - 1.0))
        return e

    x = [math.exp(v) for v in nelder_mead(worst, [math.log(v) for v in x])]
    pts, fit, a, y = build(x)
    lat, blk, ig, ip = x
    print("SW26010 (cycles at %.2f GHz):" % CLOCK_GHZ)
    print("  latency_cycles        = %.0f  (get and put alike: only their sum is identifiable)" % lat)
    print("  block_cycles          = %.0f" % blk)
    print("  get_bytes_per_cycle   = %.3f  (%.2f GB/s of line bytes)" % (1 / ig, CLOCK_GHZ / ig))
    print("  put_bytes_per_cycle   = %.3f  (%.2f GB/s of line bytes)" % (1 / ip, CLOCK_GHZ / ip))
    print("  point           measured  model   error")
    worst = 0.0
    for label, coef, tm, comp, g, w in pts:
        m = model_gbps(x, coef, tm, comp, g)
        err = (m - g) / g * 100
        if w > 0 and not label.startswith("strided"):
            worst = max(worst, abs(err))
        print("  %-14s %7.2f %7.2f %+7.1f%%%s" % (label, g, m, err, "" if w > 0 else "  (not fitted)"))
    for b, lo, hi in STRIDED:
        coef, tm, comp = strided_row(b, 1.0)
        m = model_gbps(x, coef, tm, comp, 1.0)
        print("  strided %-5d range %.2f-%.2f model %.2f" % (b, lo, hi, m))
    print("  worst copy/triad error from %d B: %.1f%%" % (MIN_FIT_BYTES, worst))

    # SW26010-Pro: 4 points only. Same structure (a blocking get + put per iteration), one
    # bandwidth for both directions, one fixed cost per request (latency + 1 block) split
    # between latency and block overhead in SW26010's proportion.
    rows, ys = [], []
    for b, g in PRO_POINTS:
        t = NCPE * 2 * b / (g * 1e9) * PRO_CLOCK_GHZ * 1e9
        rows.append([2 / t, 2 * NCPE * mean_line_bytes(b) / t])
        ys.append((t - compute_cycles(b, "copy")) / t)
    fixed, inv = solve(rows, ys, [1.0] * len(rows))
    fixed = max(fixed, 0.0)
    print("SW26010-Pro (cycles at %.2f GHz; copy = triad assumed; 4 points):" % PRO_CLOCK_GHZ)
    print("  fixed cycles per request = %.0f -> latency_cycles = %.0f, block_cycles = %.0f"
          % (fixed, fixed * lat / (lat + blk), fixed * blk / (lat + blk)))
    print("  bytes_per_cycle = %.3f (%.2f GB/s of line bytes, get and put)" % (1 / inv, PRO_CLOCK_GHZ / inv))
    for b, g in PRO_POINTS:
        t = 2 * fixed + 2 * NCPE * mean_line_bytes(b) * inv + compute_cycles(b, "copy")
        m = NCPE * 2 * b / t * PRO_CLOCK_GHZ
        print("  copy %5d B: measured %5.1f model %5.1f (%+.1f%%)" % (b, g, m, (m - g) / g * 100))


if __name__ == "__main__":
    main()
