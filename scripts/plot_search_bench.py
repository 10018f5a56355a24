#!/usr/bin/env python3
"""Plots the search bench's curves (ingot_search_bench OUT_DIR writes OUT_DIR/curves.csv) as one SVG: a panel per
task, best-so-far (ms, log scale) against trials, a line per strategy and the fixed schedule dashed.
Standard library only. Usage: scripts/plot_search_bench.py OUT_DIR/curves.csv docs/search_bench.svg"""
import csv
import math
import sys
from collections import OrderedDict

COLORS = {"random": "#888888", "evolutionary_no_model": "#1f77b4", "evolutionary_model": "#d62728"}
W, H, PAD_L, PAD_B, PAD_T, PAD_R = 420, 260, 60, 40, 30, 10


def panel(task, series, fixed, x0, y0):
    out = []
    points = [p for s in series.values() for p in s]
    xmax = max(t for t, _ in points)
    values = [v for _, v in points] + ([fixed] if fixed else [])
    lo, hi = math.log10(min(values)) - 0.05, math.log10(max(values)) + 0.05
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def sx(t):
        return x0 + PAD_L + pw * t / xmax

    def sy(v):
        return y0 + PAD_T + ph * (hi - math.log10(v)) / (hi - lo)

    out.append(f'<rect x="{x0 + PAD_L}" y="{y0 + PAD_T}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>')
    out.append(f'<text x="{x0 + PAD_L}" y="{y0 + 18}" font-size="13" font-weight="bold">{task}</text>')
    for k in range(5):
        v = 10 ** (lo + (hi - lo) * k / 4)
        out.append(f'<text x="{x0 + PAD_L - 4}" y="{sy(v) + 4:.1f}" font-size="10" text-anchor="end">{v:.3g}</text>')
    for k in range(5):
        t = xmax * k / 4
        out.append(f'<text x="{sx(t):.1f}" y="{y0 + H - PAD_B + 14}" font-size="10" text-anchor="middle">{t:.0f}</text>')
    out.append(f'<text x="{x0 + PAD_L + pw / 2}" y="{y0 + H - 6}" font-size="10" text-anchor="middle">trials</text>')
    out.append(f'<text x="{x0 + 12}" y="{y0 + PAD_T + ph / 2}" font-size="10" '
               f'transform="rotate(-90 {x0 + 12} {y0 + PAD_T + ph / 2})" text-anchor="middle">best ms</text>')
    if fixed:
        out.append(f'<line x1="{x0 + PAD_L}" x2="{x0 + PAD_L + pw}" y1="{sy(fixed):.1f}" y2="{sy(fixed):.1f}" '
                   'stroke="#2ca02c" stroke-dasharray="5,4"/>')
    for name, pts in series.items():
        path = " ".join(f"{'M' if i == 0 else 'L'}{sx(t):.1f},{sy(v):.1f}" for i, (t, v) in enumerate(pts))
        out.append(f'<path d="{path}" fill="none" stroke="{COLORS.get(name, "#000")}" stroke-width="2"/>')
    return out


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    tasks = OrderedDict()
    fixed = {}
    for r in rows:
        tasks.setdefault(r["task"], OrderedDict()).setdefault(r["strategy"], []).append(
            (int(r["trial"]), float(r["best_ms"])))
        if r["fixed_ms"]:
            fixed[r["task"]] = float(r["fixed_ms"])
    cols = 2
    nrows = (len(tasks) + 1) // cols + 1
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * cols}" height="{H * nrows}" font-family="sans-serif">',
           f'<rect width="{W * cols}" height="{H * nrows}" fill="#fff"/>']
    for i, (task, series) in enumerate(tasks.items()):
        svg += panel(task, series, fixed.get(task), (i % cols) * W, (i // cols) * H)
    # Legend in the last cell.
    lx, ly = (len(tasks) % cols) * W + PAD_L, (len(tasks) // cols) * H + PAD_T
    entries = list(COLORS.items()) + [("fixed schedule", "#2ca02c")]
    for k, (name, color) in enumerate(entries):
        dash = ' stroke-dasharray="5,4"' if name == "fixed schedule" else ""
        svg.append(f'<line x1="{lx}" x2="{lx + 30}" y1="{ly + 20 * k}" y2="{ly + 20 * k}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        svg.append(f'<text x="{lx + 36}" y="{ly + 20 * k + 4}" font-size="12">{name}</text>')
    svg.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
