"""The replay section of the report (scripts/run.sh): SLO attainment against
LP throughput, one point per policy, pair and load, and the per-request
latency CDF of each policy, from the JSON and latency CSVs that
`pairsight replay --json --latencies` wrote into a folder.

Usage: replay_report.py DIR REPORT.html
Writes DIR/replay.html and puts the same section into REPORT.html (before
</body>) when that file exists. Standard library only.
"""

import csv
import glob
import html
import json
import os
import sys

COLORS = {
    "dedicated": "#555555",
    "static": "#8c564b",
    "orion": "#ff7f0e",
    "intensity": "#9467bd",
    "pairsight": "#1f77b4",
    "pairsight_bound": "#2ca02c",
    "oracle": "#d62728",
}
W, H, PAD = 520, 360, 48


def load(folder):
    runs = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            r = json.load(f)
        if r.get("stretch_fixed") is not None:
            continue  # the planners without the warm-up's stretch: a table of their own (planner.md)
        lat = {}
        csv_path = path[:-5] + ".csv"
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                for row in csv.DictReader(f):
                    lat.setdefault(row["policy"], []).append(float(row["latency_ns"]))
        r["latencies"] = lat
        runs.append(r)
    return runs


def axis(x0, x1, y0, y1, xlabel, ylabel):
    out = [f'<rect x="{PAD}" y="10" width="{W - PAD - 10}" height="{H - PAD - 10}" fill="none" stroke="#999"/>']
    for k in range(6):
        fx = x0 + (x1 - x0) * k / 5
        fy = y0 + (y1 - y0) * k / 5
        px = PAD + (W - PAD - 10) * k / 5
        py = H - PAD - (H - PAD - 10) * k / 5
        out.append(f'<text x="{px:.1f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{fx:.2f}</text>')
        out.append(f'<text x="{PAD - 4}" y="{py + 4:.1f}" font-size="11" text-anchor="end">{fy:.2f}</text>')
    out.append(f'<text x="{(W + PAD) / 2}" y="{H - 10}" font-size="12" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="12" y="{H / 2}" font-size="12" transform="rotate(-90 12 {H / 2})" '
               f'text-anchor="middle">{ylabel}</text>')
    return out


def scale(v, a, b, lo, hi):
    return lo + (hi - lo) * (v - a) / (b - a if b > a else 1)


def scatter(runs):
    pts = [(p["lp_throughput"], p["slo_attainment"], name, r)
           for r in runs for name, p in r["policies"].items()]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x0, x1 = min(xs) - 0.02, max(xs) + 0.02
    # The budget-keeping policies sit near 1; lower points go on the axis.
    y0, y1 = max(0.9, min(0.98, min(ys))), 1.0
    out = [f'<svg width="{W + 150}" height="{H}" xmlns="http://www.w3.org/2000/svg">']
    out += axis(x0, x1, y0, y1, "LP throughput (1 = LP alone on the whole GPU)", "SLO attainment")
    for x, y, name, r in pts:
        px = scale(x, x0, x1, PAD, W - 10)
        py = scale(max(y, y0), y0, y1, H - PAD, 10)
        shape = "circle" if r["load"] < 0.45 else "rect"
        tip = html.escape(f'{name} {r["hp"]}/{r["lp"]} load {r["load"]}: SLO {y:.3f}, LP {x:.3f}')
        if shape == "circle":
            out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{COLORS.get(name, "#000")}">'
                       f'<title>{tip}</title></circle>')
        else:
            out.append(f'<rect x="{px - 4:.1f}" y="{py - 4:.1f}" width="8" height="8" '
                       f'fill="{COLORS.get(name, "#000")}"><title>{tip}</title></rect>')
    for i, (name, c) in enumerate(COLORS.items()):
        out.append(f'<rect x="{W + 8}" y="{16 + 18 * i}" width="10" height="10" fill="{c}"/>'
                   f'<text x="{W + 24}" y="{25 + 18 * i}" font-size="12">{name}</text>')
    out.append(f'<text x="{W + 8}" y="{25 + 18 * 8}" font-size="11">circle: lower load</text>')
    out.append(f'<text x="{W + 8}" y="{25 + 18 * 9}" font-size="11">square: higher load</text>')
    out.append(f'<text x="{W + 8}" y="{25 + 18 * 10}" font-size="11">below {y0:.2f}: on the axis</text>')
    out.append("</svg>")
    return "\n".join(out)


def cdf(run):
    lat = run["latencies"]
    if not lat:
        return ""
    base = run["dedicated_ns"]
    x1 = max(max(v) for v in lat.values()) / base
    x1 = min(x1, 3 * run["slo_ns"] / base)
    out = [f'<svg width="{W + 150}" height="{H}" xmlns="http://www.w3.org/2000/svg">']
    out += axis(0, x1, 0, 1, "HP request latency / dedicated latency", "share of requests")
    slo = scale(run["slo_ns"] / base, 0, x1, PAD, W - 10)
    out.append(f'<line x1="{slo:.1f}" y1="10" x2="{slo:.1f}" y2="{H - PAD}" stroke="#000" stroke-dasharray="4"/>')
    for name, v in lat.items():
        v = sorted(x / base for x in v)
        step = max(1, len(v) // 400)
        pts = " ".join(f"{scale(min(x, x1), 0, x1, PAD, W - 10):.1f},{scale((i + 1) / len(v), 0, 1, H - PAD, 10):.1f}"
                       for i, x in enumerate(v) if i % step == 0 or i == len(v) - 1)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS.get(name, "#000")}" stroke-width="1.5"/>')
    for i, (name, c) in enumerate(COLORS.items()):
        if name in lat:
            out.append(f'<rect x="{W + 8}" y="{16 + 18 * i}" width="10" height="10" fill="{c}"/>'
                       f'<text x="{W + 24}" y="{25 + 18 * i}" font-size="12">{name}</text>')
    out.append("</svg>")
    return "\n".join(out)


def section(runs):
    rows = []
    for r in runs:
        for name, p in r["policies"].items():
            kept = p.get("budget_kept")
            knob = ""
            if "orion_lp_tpcs" in p:
                knob = f' (LP {p["orion_lp_tpcs"]} TPCs)'
            elif "stretch" in p:
                knob = " (stretch none)" if p["stretch"] is None else f' (stretch {p["stretch"]:g})'
            rows.append(f'<tr><td>{html.escape(r["hp"])}/{html.escape(r["lp"])}</td><td>{r["load"]}</td>'
                        f'<td>{name}{knob}</td><td>{100 * p["slo_attainment"]:.2f}</td>'
                        f'<td>{p["hp_p50_ns"] / 1e3:.0f}</td><td>{p["hp_p99_ns"] / 1e3:.0f}</td>'
                        f'<td>{p["lp_throughput"]:.3f}</td><td>{p["gpu_busy"]:.3f}</td>'
                        f'<td>{"" if kept is None else f"{100 * kept:.1f}"}</td></tr>')
    first = runs[0]
    parts = [
        '<h2 id="replay">Replay: decisions on the twin</h2>',
        "<p>An HP request stream (Poisson arrivals) beside an always-backlogged LP task, every step timed by "
        "the simulator's co-execution physics; budget = 1.2 x the dedicated p99. "
        "Measured on today's twin (docs/planner.md).</p>",
        scatter(runs),
        f'<p>Per-request latency CDF, {html.escape(first["hp"])}/{html.escape(first["lp"])} at load '
        f'{first["load"]} (dashed: the budget).</p>',
        cdf(first),
        "<table><tr><th>pair</th><th>load</th><th>policy</th><th>SLO %</th><th>p50 us</th><th>p99 us</th>"
        "<th>LP tput</th><th>busy</th><th>kept %</th></tr>",
        "\n".join(rows),
        "</table>",
    ]
    return "\n".join(parts)


def main():
    folder, report = sys.argv[1], sys.argv[2]
    runs = load(folder)
    if not runs:
        sys.exit(f"replay_report: no replay JSON in {folder}")
    sec = section(runs)
    with open(os.path.join(folder, "replay.html"), "w") as f:
        f.write("<!doctype html><meta charset=utf-8><title>pairsight replay</title><body>\n" + sec + "\n</body>\n")
    if os.path.exists(report):
        with open(report) as f:
            text = f.read()
        marker = "</body>"
        text = text.replace(marker, sec + "\n" + marker, 1) if marker in text else text + sec
        with open(report + ".tmp", "w") as f:
            f.write(text)
        os.replace(report + ".tmp", report)


if __name__ == "__main__":
    main()
