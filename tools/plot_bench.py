#!/usr/bin/env python3
"""Plots `tilejit bench gemm --out FILE.csv|FILE.json` results as a PNG or SVG.

    python3 tools/plot_bench.py RESULTS.csv [MORE.csv|.json ...] -o docs/plot.png [--title TEXT]

For each group of rows with the same dtype, math and timing method, two panels: TFLOP/s of tilejit
and cuBLAS side by side per shape and layout, and tilejit's speed over cuBLAS's (the ratio, with the
range over rounds where there were several) against a line at 1.0. Needs matplotlib (Debian's
python3-matplotlib, which tools/setup.sh installs).
"""
import argparse
import csv
import json
import os
import sys


def read_rows(path):
    with open(path, newline="") as f:
        if path.endswith(".json"):
            rows = json.load(f)
        else:
            rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        try:
            out.append({
                "shape": str(r["shape"]),
                "layout": str(r["layout"]),
                "dtype": str(r.get("dtype", "")),
                "math": str(r.get("math", "exact")),
                "method": str(r.get("method", "synced")),
                "tilejit": float(r["tilejit_tflops"]),
                "cublas": float(r["cublas_tflops"]),
                "ratio": float(r["ratio"]),
                "ratio_min": float(r.get("ratio_min", r["ratio"])),
                "ratio_max": float(r.get("ratio_max", r["ratio"])),
            })
        except (KeyError, ValueError) as e:
            raise SystemExit(f"plot_bench: {path}: a row lacks a usable field ({e}); expected the columns of `tilejit bench gemm --out`")
    if not out:
        raise SystemExit(f"plot_bench: {path}: no rows")
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+", help="CSV or JSON files written by tilejit bench gemm --out")
    ap.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    ap.add_argument("--title", default=None, help="figure title (default: the inputs' names)")
    args = ap.parse_args(argv)
    if not args.output.endswith((".png", ".svg")):
        raise SystemExit("plot_bench: --output must end in .png or .svg")
    rows = []
    for path in args.inputs:
        rows += read_rows(path)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = {}
    for r in rows:
        key = (r["dtype"] + ("/tf32" if r["math"] == "tf32" else ""), r["method"])
        groups.setdefault(key, []).append(r)

    # Long groups wrap onto several panel pairs of at most `per_row` cases each, so labels stay readable.
    per_row = 24
    panels = []
    for (dtype, method), g in sorted(groups.items()):
        for start in range(0, len(g), per_row):
            panels.append((f"{dtype}, method {method}" + (f" ({start // per_row + 1})" if len(g) > per_row else ""), g[start:start + per_row]))
    fig, axes = plt.subplots(2 * len(panels), 1, figsize=(14, 5.0 * len(panels)), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2] * len(panels)})
    for pi, (title, g) in enumerate(panels):
        tf, ra = axes[2 * pi][0], axes[2 * pi + 1][0]
        labels = [f"{r['shape']} {r['layout']}" for r in g]
        xs = list(range(len(g)))
        w = 0.4
        tf.bar([x - w / 2 for x in xs], [r["tilejit"] for r in g], w, label="tilejit", color="#1f77b4")
        tf.bar([x + w / 2 for x in xs], [r["cublas"] for r in g], w, label="cuBLAS", color="#aaaaaa")
        tf.set_ylabel("TFLOP/s")
        tf.set_title(title)
        tf.set_xticks(xs)
        tf.set_xticklabels([])
        tf.set_xlim(-0.6, per_row - 0.4)
        tf.legend(fontsize=8, loc="lower left")
        tf.grid(axis="y", alpha=0.3)
        ratios = [r["ratio"] for r in g]
        lo = [max(0.0, r["ratio"] - r["ratio_min"]) for r in g]
        hi = [max(0.0, r["ratio_max"] - r["ratio"]) for r in g]
        colors = ["#2ca02c" if v >= 1.0 else "#d62728" for v in ratios]
        # Ratios on a log scale around 1.0: 0.9 and 1.1 look alike, and a 4x case does not flatten the rest.
        ra.bar(xs, [v - 1.0 for v in ratios], 0.6, bottom=1.0, yerr=[lo, hi], color=colors, capsize=2)
        ra.axhline(1.0, color="black", linewidth=0.8)
        ra.set_yscale("log")
        top = max(1.25, max(r["ratio_max"] for r in g) * 1.1)
        bottom = min(0.8, min(r["ratio_min"] for r in g) / 1.1)
        ra.set_ylim(bottom, top)
        candidates = (0.5, 0.8, 1.0, 1.25, 2, 3, 4, 5) if top > 2 else (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2)
        ticks = [t for t in candidates if bottom <= t <= top]
        ra.set_yticks(ticks)
        ra.set_yticklabels([f"{t:g}" for t in ticks])
        ra.minorticks_off()
        ra.set_ylabel("tilejit / cuBLAS")
        ra.set_xticks(xs)
        ra.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ra.set_xlim(-0.6, per_row - 0.4)
        ra.grid(axis="y", alpha=0.3)
    fig.suptitle(args.title or ", ".join(os.path.basename(p) for p in args.inputs), fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"plot_bench: wrote {args.output} ({len(rows)} rows, {len(groups)} groups)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
