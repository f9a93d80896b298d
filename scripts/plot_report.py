#!/usr/bin/python3
"""Plots a per-layer report of sw_net (--report FILE.json or FILE.csv).

    /usr/bin/python3 scripts/plot_report.py REPORT.json [-o OUT.png|OUT.svg] [--title TEXT]

Draws two panels into one PNG or SVG (by the output's extension; default: the report's
name with .png):
  - a roofline: each layer's modelled GFLOPS against its arithmetic intensity (analytic
    flops per byte of DMA lines moved), under the core group's peak and the DMA roofs of
    the machine description the report carries (the modelled get plateau, solid, and the
    theoretical bandwidth, dashed);
  - the modelled time of each layer, split as on its busiest CPE: compute, DMA wait, sync
    wait, register-communication wait, and the rest (spawn, join, other cycles), with the
    layer's roofline bound beside it (a black bar: max(flops / peak, inputs once / get
    plateau + output once / put plateau)) and the model's roofline fraction (sum of bounds /
    sum of times) in the title. Reports written before the roofline fields (bound_ms) are
    drawn without them.

Needs matplotlib: Debian's python3-matplotlib (scripts/install_deps.sh --tests), hence
/usr/bin/python3 (another python3 first in PATH may not see Debian's packages).
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NUMBERS = ("gflop", "dma_line_bytes", "modelled_ms", "gflops", "busiest_compute_ms", "busiest_dma_wait_ms",
           "busiest_sync_wait_ms", "busiest_regcomm_wait_ms")


def fail(message):
    sys.stderr.write("error: %s\n" % message)
    sys.exit(1)


def load(path):
    """(net, machine dict, list of layer dicts) from a JSON or CSV report."""
    try:
        with open(path, newline="") as f:
            if path.endswith(".csv"):
                rows = list(csv.DictReader(f))
                if not rows:
                    fail("%s: no layers" % path)
                first = rows[0]
                machine = {"name": first["machine"], "peak_gflops": float(first["machine_peak_gflops"]),
                           "dma_get_gbps": float(first["machine_dma_get_gbps"]),
                           "dma_theoretical_gbps": float(first["machine_dma_theoretical_gbps"])}
                net, layers = first["net"], rows
            else:
                doc = json.load(f)
                net, machine, layers = doc["net"], doc["machine"], doc["layers"]
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    except (ValueError, KeyError) as e:
        fail("%s: not a sw_net report (%s: %s)" % (path, type(e).__name__, e))
    try:
        for layer in layers:
            for key in NUMBERS:
                layer[key] = float(layer[key])
    except (KeyError, ValueError) as e:
        fail("%s: layer without a number for %s" % (path, e))
    # The roofline bound: in every layer or in none (older reports).
    if all("bound_ms" in layer for layer in layers):
        try:
            for layer in layers:
                layer["bound_ms"] = float(layer["bound_ms"])
        except ValueError as e:
            fail("%s: layer without a number for bound_ms (%s)" % (path, e))
    else:
        for layer in layers:
            layer.pop("bound_ms", None)
    return net, machine, layers


def roofline(ax, machine, layers):
    peak = machine["peak_gflops"]
    points = [(l["gflop"] * 1e9 / l["dma_line_bytes"], l["gflops"], l) for l in layers
              if l["dma_line_bytes"] > 0 and l["gflops"] > 0]
    if not points:
        fail("no layer has both flops and DMA bytes")
    lo = min(p[0] for p in points) / 4
    hi = max(max(p[0] for p in points) * 4, 4 * peak / machine["dma_get_gbps"])
    xs = [lo * (hi / lo) ** (i / 200.0) for i in range(201)]
    for key, style, label in (("dma_get_gbps", "-", "DMA get plateau (model)"),
                              ("dma_theoretical_gbps", "--", "DMA theoretical")):
        bw = machine[key]
        ax.plot(xs, [min(peak, x * bw) for x in xs], style, color="black", linewidth=1,
                label="%s %.1f GB/s" % (label, bw))
    ax.axhline(peak, color="grey", linewidth=0.8, linestyle=":")
    kinds = sorted(set(p[2]["kind"] for p in points))
    markers = "osD^v<>ph*"
    for i, kind in enumerate(kinds):
        sel = [p for p in points if p[2]["kind"] == kind]
        ax.scatter([p[0] for p in sel], [p[1] for p in sel], marker=markers[i % len(markers)], s=28,
                   label=kind, zorder=3)
    for x, y, l in points:
        ax.annotate(l["layer"], (x, y), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop per byte of DMA lines)")
    ax.set_ylabel("GFLOPS (modelled)")
    ax.set_title("roofline: %s, peak %.1f GFLOPS" % (machine["name"], peak))
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", linewidth=0.3)


def breakdown(ax, layers):
    names = [l["layer"] for l in layers]
    xs = list(range(len(layers)))
    has_bound = bool(layers) and "bound_ms" in layers[0]
    # With the bound, the time's bar leaves room for a narrow bar of the bound at its right.
    pos, width = ([x - 0.1 for x in xs], 0.6) if has_bound else (xs, 0.8)
    parts = [("compute", "busiest_compute_ms", "tab:blue"), ("DMA wait", "busiest_dma_wait_ms", "tab:orange"),
             ("sync wait", "busiest_sync_wait_ms", "tab:green"),
             ("reg. comm. wait", "busiest_regcomm_wait_ms", "tab:purple")]
    bottom = [0.0] * len(layers)
    for label, key, colour in parts:
        values = [l[key] for l in layers]
        ax.bar(pos, values, width=width, bottom=bottom, label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, values)]
    rest = [max(0.0, l["modelled_ms"] - b) for l, b in zip(layers, bottom)]
    ax.bar(pos, rest, width=width, bottom=bottom, label="other (spawn, join, ...)", color="lightgrey")
    total = sum(l["modelled_ms"] for l in layers)
    title = "time per layer: %.2f ms in all" % total
    if has_bound:
        bounds = [l["bound_ms"] for l in layers]
        ax.bar([x + 0.3 for x in xs], bounds, width=0.2, color="black", label="roofline bound")
        if total > 0:
            title += "; roofline bound %.2f ms (fraction %.2f)" % (sum(bounds), sum(bounds) / total)
    ax.set_xticks(xs)
    ax.set_xticklabels(names)
    ax.set_ylabel("modelled ms (busiest CPE)")
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=90, labelsize=7)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", linewidth=0.3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", help="sw_net --report output (.json or .csv)")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default: REPORT with .png)")
    parser.add_argument("--title", help="figure title (default: the network and machine)")
    args = parser.parse_args()
    out = args.output or os.path.splitext(args.report)[0] + ".png"
    if not out.endswith((".png", ".svg")):
        fail("%s: the output must end in .png or .svg" % out)
    net, machine, layers = load(args.report)
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [1, 1.3]})
    roofline(left, machine, layers)
    breakdown(right, layers)
    fig.suptitle(args.title or "%s on the emulated %s core group (modelled)" % (net, machine["name"]))
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=110)
    except OSError as e:
        fail("%s: %s" % (out, e.strerror))
    print("written %s" % out)


if __name__ == "__main__":
    main()
