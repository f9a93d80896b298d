#!/usr/bin/env python3
"""Fits the DMA timing model of the athread emulator to the published measurements.

Model (target_sw/emulator/src/timing.cpp, parameters in target_sw/Machine.h, DmaTiming):
a request of a CPE goes through its DMA engine in three stages,
    setup    blocks * get_block_cycles | put_block_cycles     (per CPE, one request at a time)
    data     its 128-byte-line bytes through a channel shared by the CPEs moving data
             (processor sharing: a get line byte costs 1/get_bytes_per_cycle of the channel's
             time, a put one 1/put_bytes_per_cycle; one request at a time per CPE, after
             its own setup)
    latency  get_latency_cycles | put_latency_cycles          (pipelined)
Every measurement below is a symmetric kernel: the 64 CPEs run the same request sequence in
lockstep, so one CPE replayed with 1/64 of the channel is exact (`replay`), spawn and join
overheads included as the emulator charges them. The fit minimises the worst relative error
(Nelder-Mead on the logs of the six parameters, from the previous solution) over:
  * CAND's STREAM copy/triad curve (shared/sunway/dma_bandwidth.csv) from 128 B, each request
    waited, arrays 10 doubles after a 128-byte boundary, as tests/timing_model_test.cpp runs
    it (sub-line points reported, not fitted: the line-byte model charges a whole line);
  * SW26010.md's strided copy ranges (24 KB per descriptor, gaps b/2 and 3b as the test runs
    them), error = distance to the nearer end of the range, 0 inside;
  * swDNN's "Multiple DMA Read" test (feifeibear/swDNN swCNNv12-4cg-opt-batch-size-aware
    test.c DMA_banchmark + swCNNv13 dma.c dma_read, figures from swCNNv12 run.log): 10 x
    (spawn, 64 CPEs x 20 blocking strided gets of B/8 x Ni/8 doubles in blocks of B/8 doubles,
    stride 8 blocks, all CPEs the same addresses, join), one range per shape (see SWDNN);
  * constraints: the get channel no faster than GET_CAP_GBPS, the put channel no faster than
    DDR3's 34.1 GB/s, and the reads-only figure (64 CPEs, blocking 4 KB contiguous gets)
    between 20 and 28.5 GB/s.
What cannot be reproduced within 10% (the values in Machine.h, errors as printed below):
  * CAND copy 128 B (+10.2%), triad 256 B (-10.3%), copy 8 KB (+10.2%): CAND's time per request
    falls from 128 B to 256 B (copy 8,050 -> 7,930 cycles per iteration, triad 8,885 -> 8,610),
    while the model must move the 128 extra line bytes of every request through channels no
    faster than their caps; with GET_CAP_GBPS at DDR3's 34.1 the same fit reaches 9.6%.
  * swDNN 4 KB in 256 B blocks (-10.2% against its single 26.0 GB/s run): with gets capped at
    28.5 GB/s and spawn + join [U] 12 us per spawn, 20 gets of 4 KB cannot reach 26 GB/s
    together with the other points.
  * the sub-line points (< 128 B, reported): a sub-line request costs less than the whole line
    the model charges for it (0-50% slow).
Run: python3 tools/fit_dma_model.py [path/to/dma_bandwidth.csv]   (no numpy needed, ~20 s)
"""
import math
import sys

CLOCK_GHZ = 1.45
NCPE = 64
LINE = 128
OFFSET = 80  # CAND: arrays + 10 doubles
MIN_FIT_BYTES = 128  # below, requests are sub-line and the line-byte model does not hold
# Fixed [U] parameters of Machine.h the fit does not touch.
SPAWN_CYCLES = 14500
JOIN_CYCLES = 2900
CPE_CAP = 5.9

# SW26010.md, strided DMA, copy: (block bytes, low GB/s, high GB/s)
STRIDED = [(64, 2.7, 3.3), (256, 7.9, 9.2), (1024, 14.4, 15.8), (4096, 17.3, 18.9),
           (8192, 19.3, 19.7)]
STRIDED_DESC = 24 * 1024
STRIDED_ITERS = 4  # as tests/timing_model_test.cpp and apps/bench/model_calibration.cpp

# swDNN run.log (swCNNv12-4cg-opt-batch-size-aware), "Multiple DMA Read", every run that
# printed a figure: (label, bytes per get, block bytes, low, high GB/s, runs).
#  B=128 Ni=128: 16 blocks of 128 B = 2 KB: 16.78 (first run, 28 Sep), 20.92, 21.14, 21.23,
#                21.81, 22.12 -> range 20.9-22.1 (the 16.8 run is an outlier: reported)
#  B=128 Ni=320: 40 blocks of 128 B = 5 KB: 21.33, 21.44, 21.54, 21.67 (sw3run), 23.04, 23.47,
#                23.55, 23.63, 23.75, 23.97, 24.01, 24.20, 24.30 (sw3run-all) -> 21.3-24.3
#  B=256 Ni=128: 16 blocks of 256 B = 4 KB: 26.02 (one run)
# The source array comes from malloc (alignment unknown); taken 128-byte aligned [U]: a
# block straddling two lines would put the 2 KB shape at 42 GB/s of line bytes, above DDR3.
SWDNN = [("swdnn 2K/128", 2048, 128, 20.9, 22.1), ("swdnn 5K/128", 5120, 128, 21.3, 24.3),
         ("swdnn 4K/256", 4096, 256, 26.0, 26.0)]
SWDNN_GETS = 20  # gets per CPE per spawn
SWDNN_OUTLIER = ("swdnn 2K/128 first run", 2048, 128, 16.8)

# Caps. DDR3 peak [V] GK. Reads: no measurement supports more than ~28.5 GB/s [D]:
# decomposing CAND's 4-24 KB copy/triad plateau (copy = get + put, triad = 2 gets + put)
# gives gets of 26.6-28.5 GB/s and puts of 16.6-18.6 GB/s; swDNN's best reads-only run is
# 26.0 GB/s [V]. Machine.h's DmaTiming::get_cap_gbps holds the same number.
THEORETICAL_GBPS = 34.1
GET_CAP_GBPS = 28.5
READ_ONLY_RANGE = (20.0, 28.5)  # the figure the calibration benchmark reports
READ_ONLY_BYTES, READ_ONLY_ITERS = 4096, 256

# SW26010.md, SW26010-Pro (OPS, few points, copy = triad assumed)
PRO_POINTS = [(16, 3.4), (256, 17.6), (1024, 23.5), (4096, 26.0)]
PRO_CLOCK_GHZ = 2.25

NAMES = ["get_latency_cycles", "put_latency_cycles", "get_block_cycles", "put_block_cycles",
         "get_bytes_per_cycle", "put_bytes_per_cycle"]
# Start point of the search: a previous run of this fit (from the old single-block-cost
# solution 1572, 1572, 1044, 1044, 23.54, 11.41 and from random starts it ends at the same
# minimax point).
START = [846, 2596, 77, 1720, 19.68, 13.56]


def line_bytes(start, n):
    return (start + n + LINE - 1) // LINE * LINE - start // LINE * LINE


def replay(ops, p):
    """Cycles of one iteration of a symmetric kernel: `ops` is a list of ("get"|"put", blocks,
    line bytes, reply), ("wait", reply) and ("compute", cycles); every request is waited by
    the end of the iteration. Same rules as timing.cpp's Simulator with 64 equal shares."""
    lg, lp, bg, bp, g, pu = p
    t = setup_free = data_free = 0.0
    done = {}
    for op in ops:
        if op[0] in ("get", "put"):
            put = op[0] == "put"
            ss = max(t, setup_free)
            se = ss + op[1] * (bp if put else bg)
            setup_free = se
            rate = min(CPE_CAP, (pu if put else g) / NCPE)
            de = max(se, data_free) + op[2] / rate
            data_free = de
            done[op[3]] = de + (lp if put else lg)
        elif op[0] == "wait":
            t = max(t, done[op[1]])
        else:
            t += op[1]
    return max([t] + list(done.values()))


def kernel_seconds(ops, iters, p):
    return (SPAWN_CYCLES + iters * replay(ops, p) + JOIN_CYCLES) / (CLOCK_GHZ * 1e9)


def stream_gbps(b, triad, p):
    """tests/timing_model_test.cpp run_stream: CAND's copy / triad at b bytes per request."""
    iters = min(max((1 << 20) // b, 8), 1024)
    # chunk j = id + 64 k at 80 + b j: mean line bytes over the chunks (equal from 128 B)
    lb = sum(line_bytes(OFFSET + b * j, b) for j in range(LINE)) / LINE
    nvec = (b + 31) // 32
    if triad:
        ops = [("get", 1, lb, "g"), ("get", 1, lb, "g"), ("wait", "g"), ("compute", 3 * nvec),
               ("put", 1, lb, "p"), ("wait", "p")]
    else:
        ops = [("get", 1, lb, "g"), ("wait", "g"), ("compute", 2 * nvec),
               ("put", 1, lb, "p"), ("wait", "p")]
    return (3 if triad else 2) * b * iters * NCPE / kernel_seconds(ops, iters, p) / 1e9


_STRIDED_LB = {}


def strided_line_bytes(b, gap):
    """Mean line bytes of a request of the test: CPE id, iteration k at 80 + (id + 64 k) span."""
    if (b, gap) not in _STRIDED_LB:
        nblk = STRIDED_DESC // b
        span = nblk * (b + gap)
        total = 0
        for cpe in range(NCPE):
            for k in range(STRIDED_ITERS):
                base = OFFSET + (cpe + 64 * k) * span
                total += sum(line_bytes(base + i * (b + gap), b) for i in range(nblk))
        _STRIDED_LB[(b, gap)] = total / (NCPE * STRIDED_ITERS)
    return _STRIDED_LB[(b, gap)]


def strided_gbps(b, gap, p):
    """tests/timing_model_test.cpp StridedWithinCandRanges: strided get then put of 24 KB."""
    nblk = STRIDED_DESC // b
    lb = strided_line_bytes(b, gap)
    ops = [("get", nblk, lb, "g"), ("wait", "g"), ("put", nblk, lb, "p"), ("wait", "p")]
    return 2 * STRIDED_DESC * STRIDED_ITERS * NCPE / kernel_seconds(ops, STRIDED_ITERS, p) / 1e9


def swdnn_gbps(size, b, p):
    """swDNN dma_read: 20 blocking strided gets (aligned blocks: line bytes = bytes) per CPE
    per spawn; swDNN's figure is bytes / (10 x (spawn + kernel + join))."""
    ops = [("get", size // b, size, "g"), ("wait", "g")]
    return NCPE * size * SWDNN_GETS / kernel_seconds(ops, SWDNN_GETS, p) / 1e9


def read_only_gbps(p):
    """The calibration benchmark's read_only_gbps: 64 CPEs, blocking 4 KB contiguous gets."""
    ops = [("get", 1, READ_ONLY_BYTES, "g"), ("wait", "g")]
    return (NCPE * READ_ONLY_BYTES * READ_ONLY_ITERS /
            kernel_seconds(ops, READ_ONLY_ITERS, p) / 1e9)


def range_error(m, lo, hi):
    """Relative distance of m to [lo, hi] (0 inside)."""
    if m < lo:
        return (m - lo) / lo
    if m > hi:
        return (m - hi) / hi
    return 0.0


def evaluate(p, curve):
    """[(label, measured text, model, signed error, fitted)] for every measurement."""
    rows = []
    for b, c, t in curve:
        for triad, g in ((False, c), (True, t)):
            m = stream_gbps(b, triad, p)
            rows.append(("%s %d" % ("triad" if triad else "copy", b), "%.2f" % g, m,
                         (m - g) / g, b >= MIN_FIT_BYTES))
    for b, lo, hi in STRIDED:
        for gap in (b // 2, 3 * b):
            m = strided_gbps(b, gap, p)
            rows.append(("strided %d gap %d" % (b, gap), "%.1f-%.1f" % (lo, hi), m,
                         range_error(m, lo, hi), True))
    for label, size, b, lo, hi in SWDNN:
        m = swdnn_gbps(size, b, p)
        rows.append((label, "%.1f-%.1f" % (lo, hi), m, range_error(m, lo, hi), True))
    label, size, b, meas = SWDNN_OUTLIER
    m = swdnn_gbps(size, b, p)
    rows.append((label, "%.1f" % meas, m, (m - meas) / meas, False))
    m = read_only_gbps(p)
    rows.append(("read-only 4K", "%.1f-%.1f" % READ_ONLY_RANGE, m,
                 range_error(m, *READ_ONLY_RANGE), True))
    return rows


def worst(p, curve):
    e = max(abs(r[3]) for r in evaluate(p, curve) if r[4])
    # hard walls: no get channel above the measured cap, no put channel above DDR3's peak
    e = max(e, 100.0 * (p[4] * CLOCK_GHZ / GET_CAP_GBPS - 1.0),
            100.0 * (p[5] * CLOCK_GHZ / THEORETICAL_GBPS - 1.0))
    return e


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


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/sunway/dma_bandwidth.csv"
    curve = []
    for line in open(path):
        if line[0].isdigit():
            b, c, t = line.strip().split(",")
            curve.append((int(b), float(c), float(t)))

    def f(logx):
        return worst([math.exp(v) for v in logx], curve)

    x = [math.log(v) for v in START]
    for _ in range(3):  # restarts: Nelder-Mead stalls on the minimax's kinks
        x = nelder_mead(f, x, step=0.05, rounds=1500)
    # The values Machine.h gets: whole cycles, bytes per cycle to 0.01 (the get rate rounded
    # down, to stay under its cap); the table below is computed with them.
    p = [float(round(math.exp(v))) for v in x[:4]]
    p += [min(math.floor(math.exp(x[4]) * 100), math.floor(GET_CAP_GBPS / CLOCK_GHZ * 100)) / 100,
          round(math.exp(x[5]), 2)]
    print("SW26010 (cycles at %.2f GHz; spawn %d, join %d, per-CPE cap %.1f B/cycle fixed):"
          % (CLOCK_GHZ, SPAWN_CYCLES, JOIN_CYCLES, CPE_CAP))
    for name, v in zip(NAMES, p):
        extra = ""
        if name.endswith("bytes_per_cycle"):
            extra = "  (%.2f GB/s of line bytes)" % (v * CLOCK_GHZ)
        print("  %-20s = %9.2f%s" % (name, v, extra))
    print("  get cap %.1f GB/s, put cap %.1f GB/s" % (GET_CAP_GBPS, THEORETICAL_GBPS))
    print("  %-26s %11s %7s %7s" % ("measurement", "published", "model", "error"))
    rows = evaluate(p, curve)
    for label, meas, m, err, fitted in rows:
        print("  %-26s %11s %7.2f %+6.1f%%%s" % (label, meas, m, 100 * err,
                                                "" if fitted else "  (reported, not fitted)"))
    for kind, pred in (("copy/triad from 128 B", lambda r: r[0].split()[0] in ("copy", "triad")),
                       ("strided ranges", lambda r: r[0].startswith("strided")),
                       ("swDNN reads-only ranges", lambda r: r[0].startswith("swdnn")),
                       ("read-only 4 KB range", lambda r: r[0].startswith("read-only"))):
        print("  worst %-24s %5.1f%%" % (kind, 100 * max(abs(r[3]) for r in rows
                                                        if r[4] and pred(r))))

    # SW26010-Pro: 4 points only. Same structure (a blocking get + put per iteration), one
    # bandwidth for both directions, one fixed cost per request (latency + 1 block): the
    # points leave no room for more parameters.
    def pro_cycles(b, fixed, inv):
        lb = sum(line_bytes(OFFSET + b * j, b) for j in range(LINE)) / LINE
        return 2 * fixed + 2 * NCPE * lb * inv + 2 * ((b + 31) // 32)

    best = None
    for fixed in [i * 10.0 for i in range(0, 400)]:
        for inv_gbps in [26.0 + i * 0.02 for i in range(0, 100)]:
            inv = PRO_CLOCK_GHZ / inv_gbps
            e = max(abs(NCPE * 2 * b / pro_cycles(b, fixed, inv) * PRO_CLOCK_GHZ - g) / g
                    for b, g in PRO_POINTS)
            if best is None or e < best[0]:
                best = (e, fixed, inv_gbps)
    e, fixed, gbps = best
    print("SW26010-Pro (cycles at %.2f GHz; copy = triad assumed; 4 points):" % PRO_CLOCK_GHZ)
    print("  fixed cycles per request = %.0f (latency + 1 block), %.3f B/cycle (%.2f GB/s of"
          " line bytes, get and put)" % (fixed, gbps / PRO_CLOCK_GHZ, gbps))
    for b, g in PRO_POINTS:
        m = NCPE * 2 * b / pro_cycles(b, fixed, PRO_CLOCK_GHZ / gbps) * PRO_CLOCK_GHZ
        print("  copy %5d B: measured %5.1f model %5.2f (%+.1f%%)" % (b, g, m, (m - g) / g * 100))


if __name__ == "__main__":
    main()
