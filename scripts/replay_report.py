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
import math
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
TOP = 22  # room for a panel's title above it
LOAD_SHAPES = ("circle", "square", "triangle", "diamond")


def nice_ticks(lo, hi, most=6):
    """Ticks at round numbers in [lo, hi]: steps of 1, 2, 2.5 or 5 times a
    power of ten, as matplotlib's default locator (src/evaluate/report_axes.c)."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / (most - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next((k * mag for k in (1, 2, 2.5, 5) if k * mag >= raw * (1 - 1e-9)), 10 * mag)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    while first + len(ticks) * step <= hi + step * 1e-9 and len(ticks) < 16:
        ticks.append(round(first + len(ticks) * step, 10))
    return ticks


def marker(shape, x, y, color, tip, size=4.5):
    """One point: circle, square, triangle or diamond, with a tooltip."""
    t = f"<title>{tip}</title>"
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size}" fill="{color}">{t}</circle>'
    if shape == "square":
        return f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size}" height="{2 * size}" fill="{color}">{t}</rect>'
    if shape == "triangle":
        pts = f"{x:.1f},{y - size * 1.2:.1f} {x - size * 1.1:.1f},{y + size:.1f} {x + size * 1.1:.1f},{y + size:.1f}"
    else:
        pts = f"{x:.1f},{y - size * 1.3:.1f} {x + size:.1f},{y:.1f} {x:.1f},{y + size * 1.3:.1f} {x - size:.1f},{y:.1f}"
    return f'<polygon points="{pts}" fill="{color}" stroke="#000" stroke-width="0.5">{t}</polygon>'


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
    for fx in nice_ticks(x0, x1):
        px = scale(fx, x0, x1, PAD, W - 10)
        out.append(f'<line x1="{px:.1f}" y1="10" x2="{px:.1f}" y2="{H - PAD}" stroke="#eee"/>')
        out.append(f'<text x="{px:.1f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{fx:g}</text>')
    for fy in nice_ticks(y0, y1):
        py = scale(fy, y0, y1, H - PAD, 10)
        out.append(f'<line x1="{PAD}" y1="{py:.1f}" x2="{W - 10}" y2="{py:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{PAD - 4}" y="{py + 4:.1f}" font-size="11" text-anchor="end">{fy:g}</text>')
    out.append(f'<text x="{(W + PAD) / 2}" y="{H - 10}" font-size="12" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="12" y="{H / 2}" font-size="12" transform="rotate(-90 12 {H / 2})" '
               f'text-anchor="middle">{ylabel}</text>')
    return out


def scale(v, a, b, lo, hi):
    return lo + (hi - lo) * (v - a) / (b - a if b > a else 1)


def scatter_panel(runs, x0, x1, y0, loads):
    """SLO attainment against LP throughput for one HP/LP pair: colour is
    the policy, the marker's shape the load."""
    first = runs[0]
    # The pair's title above its panel (TOP pixels), the plot below it.
    out = [f'<svg width="{W + 150}" height="{H + TOP}" xmlns="http://www.w3.org/2000/svg">',
           f'<text x="{PAD}" y="15" font-size="13" font-weight="bold">HP {html.escape(first["hp"])} / '
           f'LP {html.escape(first["lp"])}</text>', f'<g transform="translate(0 {TOP})">']
    out += axis(x0, x1, y0, 1.0, "LP throughput (1 = LP alone on the whole GPU)", "SLO attainment")
    for r in runs:
        shape = LOAD_SHAPES[loads.index(r["load"]) % len(LOAD_SHAPES)]
        for name, p in r["policies"].items():
            x, y = p["lp_throughput"], p["slo_attainment"]
            tip = html.escape(f'{name} {r["hp"]}/{r["lp"]} load {r["load"]}: SLO {y:.3f}, LP {x:.3f}')
            out.append(marker(shape, scale(x, x0, x1, PAD, W - 10), scale(max(y, y0), y0, 1.0, H - PAD, 10),
                              COLORS.get(name, "#000"), tip))
    for i, (name, c) in enumerate(COLORS.items()):
        out.append(f'<rect x="{W + 8}" y="{16 + 18 * i}" width="10" height="10" fill="{c}"/>'
                   f'<text x="{W + 24}" y="{25 + 18 * i}" font-size="12">{name}</text>')
    for i, load in enumerate(loads):
        y = 25 + 18 * (len(COLORS) + 1 + i)
        out.append(marker(LOAD_SHAPES[i % len(LOAD_SHAPES)], W + 13, y - 4, "#777", f"load {load}"))
        out.append(f'<text x="{W + 24}" y="{y}" font-size="11">load {load:g}</text>')
    out.append(f'<text x="{W + 8}" y="{25 + 18 * (len(COLORS) + 2 + len(loads))}" font-size="11">'
               f'below {y0:g}: on the axis</text>')
    out.append("</g></svg>")
    return "\n".join(out)


def scatter(runs):
    """One panel per HP/LP pair, on shared axes."""
    pts = [(p["lp_throughput"], p["slo_attainment"]) for r in runs for p in r["policies"].values()]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x0, x1 = min(xs) - 0.02, max(xs) + 0.02
    # The budget-keeping policies sit near 1; lower points go on the axis.
    y0 = max(0.9, min(0.98, min(ys)))
    loads = sorted({r["load"] for r in runs})
    pairs = {}
    for r in runs:
        pairs.setdefault((r["hp"], r["lp"]), []).append(r)
    return '<div class="grid">' + "\n".join(scatter_panel(v, x0, x1, y0, loads) for v in pairs.values()) + "</div>"


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


CAMPAIGN = {}


def campaign_note():
    """', A100-SXM4-40GB, model trained on seed 1' from the campaign.json above the replay folder."""
    if not CAMPAIGN:
        return ""
    return f': {html.escape(str(CAMPAIGN.get("gpu", "")))}, model trained on the twin campaign of seed {CAMPAIGN.get("seed", "?")}'


def md_to_html(text):
    """The little markdown of results.py's prose: paragraphs, **bold**, `code`."""
    out = []
    for para in text.split("\n\n"):
        t = html.escape(para.strip())
        for mark, tag in (("**", "b"), ("`", "code")):
            parts = t.split(mark)
            t = "".join(p if i % 2 == 0 else f"<{tag}>{p}</{tag}>" for i, p in enumerate(parts))
        out.append(f"<p>{t}</p>")
    return "\n".join(out)


def headline(runs):
    """The first screen's headline: each replay's LP throughput against the dedicated GPU (no sharing), and
    the sentence of README's headline (scripts/results.py, one implementation)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import results  # noqa: E402 (scripts/results.py, beside this file)

    if not all({"dedicated", "orion", "pairsight_bound"} <= set(r["policies"]) for r in runs):
        return ""  # replays of a subset of the policies: no comparison to lead with
    rows = []
    for r in runs:
        q = r["policies"]
        d = q["dedicated"]["lp_throughput"]
        cells = "".join(f'<td>{q[n]["lp_throughput"] / d:.2f}x</td>' if n in q else "<td></td>"
                        for n in ("pairsight_bound", "orion", "oracle"))
        rows.append(f'<tr><td>{html.escape(r["hp"])}/{html.escape(r["lp"])}</td><td>{r["load"]:g}</td>'
                    f'<td>{d:.3f}</td>{cells}<td>{100 * q["pairsight_bound"]["slo_attainment"]:.1f}</td></tr>')
    return "\n".join([
        '<div class="headline"><h2>Headline: LP throughput against the dedicated GPU</h2>',
        md_to_html(results.replay_headline({"_replay": runs})),
        "<table><tr><th>pair (HP/LP)</th><th>load</th><th>dedicated LP tput</th><th>pairsight_bound / "
        "dedicated</th><th>orion / dedicated</th><th>oracle / dedicated</th><th>SLO % bound</th></tr>",
        "\n".join(rows), "</table>",
        '<p class="src">Replays on the twin (simulated, not measured); every policy and column in the '
        '<a href="#replay">replay section</a>.</p></div>'])


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
        f"Simulated on today's twin, not measured on a GPU{campaign_note()} (docs/planner.md). "
        "One panel per HP/LP pair; colour: the policy, shape: the load.</p>",
        scatter(runs),
        f'<p>Per-request latency CDF, {html.escape(first["hp"])}/{html.escape(first["lp"])} at load '
        f'{first["load"]} (dashed: the budget).</p>',
        cdf(first),
        "<p>Columns: SLO %, the HP requests whose latency (queue included) stayed within the budget; p50 and "
        "p99 us, HP request latency; LP tput, LP work over the wall time (1 = LP alone on the whole GPU "
        "throughout); <b>busy</b>, the share of the wall time the GPU spent serving HP requests (under "
        "dedicated about the load; larger where co-running slows HP, and that time is taken from LP's work "
        "alone on the whole GPU); <b>kept %</b>, the share of requests whose service time stayed within the "
        "service budget the planner planned for it (planners only; blank for the rule policies, which plan "
        "none).</p>",
        "<table><tr><th>pair</th><th>load</th><th>policy</th><th>SLO %</th><th>p50 us</th><th>p99 us</th>"
        "<th>LP tput</th><th>busy</th><th>kept %</th></tr>",
        "\n".join(rows),
        "</table>",
    ]
    return "\n".join(parts)


def main():
    folder, report = sys.argv[1], sys.argv[2]
    runs = load(folder)
    meta = os.path.join(folder, os.pardir, "campaign.json")
    if os.path.exists(meta):
        with open(meta) as f:
            CAMPAIGN.update(json.load(f))
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
        # The headline on the first screen, where the evaluation's page left its place.
        text = text.replace("<!-- pairsight:headline -->", headline(runs), 1)
        with open(report + ".tmp", "w") as f:
            f.write(text)
        os.replace(report + ".tmp", report)


if __name__ == "__main__":
    main()
