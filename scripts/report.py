#!/usr/bin/env python3
"""multifit's report: one self-contained HTML page of a run's result document, to look at.

usage: python3 scripts/report.py RESULT.json -o report.html [--trace TRACE.json] [--title TEXT]

RESULT.json is `multifit run ... --json` (one mode, --mode all, or --repeat); TRACE.json, the same
run's --trace, adds the timeline of every model's steps, epochs and input batches. The page has the
modes side by side (wall with its start-up, throughput, speedup; median and range under --repeat),
each model's slowdown against its solo run, memory per model (its status, pool cap, reserved and
peak, its share of the data, its process's peak; in serial mode what the run held when it ended and
after its release) with the models that failed and why, the best models of the ranking with the
values they were made with, a scheduler's rungs (survivors and the metric's spread at each, the
compute spent), the machine the run was measured on, a timeline of each mode's last run, and last
the recommendation in one sentence: the mode to train these models with, or why none can be said. Charts are inline
SVG drawn by matplotlib, so the page opens without a network and runs no script.

Exit codes: 0 written; 2 a missing or unreadable file, or a document that is not multifit's.
"""
import argparse
import html
import io
import json
import statistics
import sys

import os

try:
    import matplotlib
except ImportError:  # Debian's python3-matplotlib is the system python's, which another python3 may shadow
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print(f"report: error: matplotlib is not installed for {sys.executable} (Debian: apt-get install python3-matplotlib)",
          file=sys.stderr)
    sys.exit(2)
matplotlib.use("svg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: each chart does not carry its own glyph outlines
import matplotlib.pyplot as plt  # noqa: E402

FULL_TABLE_MODELS = 24  # beyond, per-model charts become distributions


def fail(message):
    print(f"report: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail(f"{path}: cannot read the {what}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}: line {e.lineno}: not JSON ({e.msg}); expected multifit's {what}")


def runs_of(doc, path):
    if not isinstance(doc, dict):
        fail(f"{path}: not a multifit result document (JSON, but not an object)")
    if isinstance(doc.get("runs"), list):
        return doc["runs"]
    if "models" in doc and "mode" in doc:
        return [doc]
    fail(f"{path}: not a multifit result document (no models and mode, no runs): give run's --json document")


def svg(fig):
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = out.getvalue()
    return text[text.index("<svg"):]


def size(n):
    """Bytes in the unit that keeps three figures: 3.28 KiB, 209.62 MiB."""
    if n is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def seconds(s):
    if s is None:
        return "-"
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def mean_slowdown(run):
    values = [m["slowdown"] for m in run["models"] if isinstance(m.get("slowdown"), (int, float))]
    return statistics.mean(values) if values else None


def by_mode(runs):
    modes = {}
    for run in runs:
        modes.setdefault(run["mode"], []).append(run)
    return modes


def spread(values):
    values = [v for v in values if isinstance(v, (int, float))]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def modes_chart(modes):
    """Wall (start-up stacked under training), samples/s and speedup per mode; medians with ranges."""
    names = list(modes)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    panels = [("wall (s)", "wall_s"), ("samples/s while training", "samples_per_s"), ("speedup vs serial", "speedup_vs_serial")]
    for ax, (label, key) in zip(axes, panels):
        stats = [spread([r.get(key) for r in modes[n]]) for n in names]
        ax.set_title(label, fontsize=10)
        if not any(stats):  # speedup without a serial (or --solo) run to compare with
            ax.text(0.5, 0.5, "no serial run to compare with\n(--mode all, or --solo)", ha="center", va="center",
                    fontsize=9, color="gray", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        heights = [s[0] if s else 0 for s in stats]
        errors = [[s[0] - s[1] if s else 0 for s in stats], [s[2] - s[0] if s else 0 for s in stats]]
        bars = ax.bar(names, heights, yerr=errors if any(len(modes[n]) > 1 for n in names) else None,
                      color="#4c78a8", capsize=4)
        if key == "wall_s":
            startup = [spread([r.get("startup_s") for r in modes[n]]) for n in names]
            ax.bar(names, [s[0] if s else 0 for s in startup], color="#f58518", label="start-up")
            ax.legend(fontsize=8)
        if key == "speedup_vs_serial":
            ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
        ax.bar_label(bars, fmt="%.3g", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
    return svg(fig)


def slowdown_chart(modes):
    """Each model's slowdown against its solo run, per mode: bars for a few models, boxes for many."""
    names = [n for n in modes if n != "serial" and any(isinstance(m.get("slowdown"), (int, float))
                                                        for r in modes[n] for m in r["models"])]
    if not names:
        return None
    first = modes[names[0]][0]["models"]
    fig, ax = plt.subplots(figsize=(12, 3.4))
    if len(first) <= FULL_TABLE_MODELS:
        width = 0.8 / len(names)
        for i, mode in enumerate(names):
            values = []  # each model's median over the mode's runs (--repeat), 0 where it has none
            for z in range(len(first)):
                s = spread([r["models"][z].get("slowdown") for r in modes[mode] if z < len(r["models"])])
                values.append(s[0] if s else 0)
            ax.bar([x + i * width for x in range(len(values))], values, width, label=mode)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(first))], [m["name"] for m in first], rotation=45,
                      ha="right", fontsize=7)
    else:
        data = [[m["slowdown"] for r in modes[n] for m in r["models"] if isinstance(m.get("slowdown"), (int, float))]
                for n in names]
        ax.boxplot([d or [0] for d in data], labels=names)
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
    ax.set_ylabel("train time / solo train time")
    if len(first) <= FULL_TABLE_MODELS:
        ax.legend(fontsize=8)
    ax.set_title("each model's slowdown (a pack's: the pack's time over its members' solo times)", fontsize=10)
    return svg(fig)


TIMELINE_TRACKS = 64  # beyond, the first ones: a page, not a poster


def trace_runs(trace, mode):
    """The trace's tracks ("MODE: model" each where the run compared modes, else the model's name,
    of `mode`) as the runs that made them, in the order they ran: [(mode, [track key, ...])], a run
    the consecutive tracks of one mode that name no track twice (--repeat runs each mode again), and
    {track key: name}."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    names = {(e.get("pid"), e.get("tid")): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and "args" in e}
    runs, seen = [], set()
    for key in sorted(names, key=lambda k: (k[1] or 0, k[0] or 0)):  # thread ids count up as the runs go
        track_mode = names[key].split(": ", 1)[0] if ": " in names[key] else mode
        if not runs or runs[-1][0] != track_mode or names[key] in seen:
            runs.append((track_mode, []))
            seen = set()
        runs[-1][1].append(key)
        seen.add(names[key])
    return runs, names


def timeline_charts(trace, mode):
    """A timeline per mode: its last run's tracks (a repeated run looks like the others, and the last
    is past any first-run warm-up), the first TIMELINE_TRACKS of them, from the run's own start.
    [(mode, run number, runs of the mode, svg)]; `mode` names the tracks of a run of one mode."""
    runs, names = trace_runs(trace, mode)
    charts = []
    for mode in dict.fromkeys(mode for mode, _ in runs):
        own = [tracks for m, tracks in runs if m == mode]
        charts.append((mode, len(own), len(own), timeline_chart(trace, own[-1], names)))
    return charts


def timeline_chart(trace, every, names):
    """The tracks `every` of the trace: steps as thin bars, epochs as light spans, input batches
    prepared; drawn as one image inside the SVG (thousands of bars as vectors would make the page
    megabytes)."""
    events = trace.get("traceEvents", [])
    tracks = every[:TIMELINE_TRACKS]
    row = {k: i for i, k in enumerate(tracks)}
    kinds = {"epoch": ("#c6dbef", 0.4, 1), "batch": ("#f58518", 0.3, 2), "step": ("#4c78a8", 0.25, 3)}
    spans = {}  # (track, kind) -> [(start, duration)]
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") != "X" or key not in row:
            continue
        name = e.get("name", "")
        kind = "epoch" if name.startswith("epoch") else "batch" if name == "batch" else "step"
        spans.setdefault((key, kind), []).append((e["ts"] / 1000, max(e.get("dur", 0) / 1000, 1e-3)))
    start = min((begin for bars in spans.values() for begin, _ in bars), default=0.0)
    spans = {k: [(begin - start, length) for begin, length in bars] for k, bars in spans.items()}
    fig, ax = plt.subplots(figsize=(12, 0.3 * len(tracks) + 1))
    for (key, kind), bars in spans.items():
        color, half, z = kinds[kind]
        ax.broken_barh(bars, (row[key] - half, 2 * half), color=color, zorder=z)
    ax.set_rasterization_zorder(10)
    ax.set_yticks(range(len(tracks)), [names[k] for k in tracks], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ms from the run's first event")
    shown = "" if len(every) == len(tracks) else f" (the first {len(tracks)} of {len(every)} tracks)"
    ax.set_title(f"timeline{shown}: epochs (light), steps (blue), input batches prepared (orange)", fontsize=10)
    return svg(fig)


def recommendation(runs):
    """The page's last sentence: which mode to run these models with on this machine, from the
    modes' median speedups over serial (their range under --repeat), or why none can be said."""
    modes = by_mode(runs)
    if len(modes) < 2:
        return ("Recommendation: none from one mode; run --mode all (with --repeat 3 on a shared machine) to "
                "compare the modes on these models.")
    unjudged = [r["mode"] for r in runs if r.get("unjudged")]
    if unjudged:
        return (f"Recommendation: none yet: {', '.join(dict.fromkeys(unjudged))} ran too briefly or beside other "
                f"work to be judged; run more epochs (or --repeat) on a quieter machine.")
    speedups = {mode: spread([r.get("speedup_vs_serial") for r in rs]) for mode, rs in modes.items()}
    speedups = {mode: s for mode, s in speedups.items() if s and mode != "serial"}
    if not speedups:
        return "Recommendation: none: no mode has a speedup over serial in the document."
    best = max(speedups, key=lambda mode: speedups[mode][0])
    median, low, high = speedups[best]
    if median <= 1:
        return (f"Recommendation: train these models one after another (--mode serial): no mode finished sooner on "
                f"this machine (the best, {best}, at {median:.2f}x serial's speed).")
    if low <= 1 < high:
        return (f"Recommendation: no mode is clearly faster: {best} reached {median:.2f}x serial's speed, but its "
                f"runs ranged from {low:.2f}x to {high:.2f}x; serial is the simplest.")
    return (f"Recommendation: train these models with --mode {best} on this machine: it finished {median:.2f}x "
            f"sooner than serial" + (f" ({low:.2f}x to {high:.2f}x over {len(modes[best])} runs)."
                                       if len(modes[best]) > 1 else "."))


def table(header, rows):
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def modes_table(modes):
    rows = []
    for mode, runs in modes.items():
        def cell(key, shown):
            s = spread([r.get(key) for r in runs])
            if not s:
                return "-"
            return shown(s[0]) if len(runs) == 1 else f"{shown(s[0])} [{shown(s[1])}-{shown(s[2])}]"
        slow = spread([mean_slowdown(r) for r in runs])
        rows.append([mode, len(runs), cell("wall_s", seconds), cell("startup_s", seconds),
                     cell("samples_per_s", lambda x: f"{x:.0f}"), cell("speedup_vs_serial", lambda x: f"{x:.2f}x"),
                     "-" if not slow else f"{slow[0]:.2f}x",
                     "; ".join(r["unjudged"] for r in runs if r.get("unjudged")) or "-"])
    return table(["mode", "runs", "wall", "start-up", "samples/s", "speedup", "mean slowdown", "not to be judged"], rows)


def memory_table(run):
    readers = {}
    for m in run["models"]:
        key = (m.get("host"), m.get("pid"), m.get("data", {}).get("source"))
        readers[key] = readers.get(key, 0) + 1
    # serial mode: what the backend held (pools and data sets) when each model ended, and after its release
    releases = any(m.get("memory", {}).get("in_use_before_release_bytes") is not None for m in run["models"])
    kept = run.get("pools_kept", False)  # --keep-pools: nothing was released until the run ended
    rows = []
    for m in run["models"][:FULL_TABLE_MODELS]:
        memory, data = m.get("memory", {}), m.get("data", {})
        key = (m.get("host"), m.get("pid"), data.get("source"))
        # its worker's own in processes mode (none for a worker that died), else the one process's
        process = memory.get("process_peak_rss_bytes") if run["mode"] == "processes" else run.get("host_peak_rss_bytes")
        held = [size(memory.get("in_use_before_release_bytes"))] if releases else []
        if releases and not kept:
            held.append(size(memory.get("in_use_after_release_bytes")))
        rows.append([m["name"], m.get("status", "-"), size(memory.get("cap_bytes")), size(memory.get("reserved_bytes")),
                     size(memory.get("peak_bytes")), size((data.get("bytes") or 0) / readers[key]), size(process),
                     size(memory.get("process_device_bytes"))] + held)
    note = "" if len(run["models"]) <= FULL_TABLE_MODELS else f"<p>the first {FULL_TABLE_MODELS} of {len(run['models'])} models</p>"
    header = ["model", "status", "pool cap", "pool reserved", "pool peak", "data share", "process peak (host)",
              "GPU process"] + (["held at its end"] if releases else []) + (["after its release"] if releases and not kept else [])
    if releases:
        note += ("<p>held at its end: what the run held (every pool, the data sets) when the model ended; "
                 + ("every pool was kept to the end of the run (--keep-pools), so it grows with each model</p>"
                    if kept else "after its release: the same, once its pool was given back</p>"))
    return note + table(header, rows) + failures(run)


def failures(run):
    """The models that failed (not ok, and not stopped by the scheduler), with why: a few, then a count."""
    bad = [m for m in run["models"] if m.get("status") not in ("ok", "stopped")]
    items = "".join(f"<li>{html.escape(m['name'])} {html.escape(str(m.get('status')))}: {html.escape(m.get('error') or '')}"
                    "</li>" for m in bad[:8])
    more = f"<li>and {len(bad) - 8} more</li>" if len(bad) > 8 else ""
    return f"<p>{len(bad)} of {len(run['models'])} models failed:</p><ul>{items}{more}</ul>" if bad else ""


def metric_at_end(m, name):
    """The model's `name` (val_accuracy, loss, test_accuracy, ...) as the ranking reads it: its last epoch's, or its test's."""
    if name.startswith("test_"):
        return m.get(name)
    epochs = m.get("epochs") or []
    return epochs[-1].get(name) if epochs else None


def best_models(run, shown=10):
    """The ranking's first models (multifit ranks the models that ended ok), with the values they were made with."""
    ranking, by = run.get("ranking") or [], run.get("rank_by")
    if not ranking or not by:
        return "<p>no ranking: no model ended ok with the metric the run ranks by</p>"
    models = {m["name"]: m for m in run["models"]}
    rows = []
    for i, name in enumerate(ranking[:shown]):
        m = models[name]
        value = metric_at_end(m, by)
        values = ", ".join(f"{k} {v}" for k, v in (m.get("values") or {}).items()) or "-"
        rows.append([i + 1, name, "-" if value is None else f"{value:.4f}", len(m.get("epochs") or []), values])
    finite = [v for v in (metric_at_end(models[n], by) for n in ranking) if isinstance(v, (int, float))]
    spread = (f": best {finite[0]:.4f}, median {statistics.median(finite):.4f}, worst {finite[-1]:.4f}"
              if finite else "")  # in the ranking's order, best first, whichever way the metric improves
    note = f"<p>{len(ranking)} ranked by {html.escape(by)}{spread}</p>"
    return note + table(["rank", "model", by, "epochs", "values"], rows)


def scheduler_section(run):
    """The scheduler's rungs: survivors and the metric's spread at each, and the compute spent."""
    s = run.get("scheduler")
    if not s:
        return ""
    spec = s["spec"]
    number = lambda x: "-" if not isinstance(x, (int, float)) else f"{x:.4f}"
    rows = [[r["bracket"], r["epochs"], r["trials"], r["kept"], number(r["best"]), number(r["median"]),
             number(r["worst"])] for r in s["rungs"]]
    stopped = sum(m.get("status") == "stopped" for m in run["models"])
    fraction = s.get("compute_fraction")
    summary = (f"{spec['type']} on {spec['metric']} ({spec['mode']}), reduction factor {spec['reduction_factor']}, "
               f"grace {spec['grace_epochs']} epoch(s), at most {spec['max_epochs']}: {stopped} of "
               f"{len(run['models'])} trials stopped at a rung; "
               + (f"the run trained {fraction:.1%} of the samples the full sweep would have"
                  if isinstance(fraction, (int, float)) else "no samples to compare"))
    return (f"<h2>The scheduler's rungs ({html.escape(run['mode'])})</h2><p>{html.escape(summary)}</p>"
            + table(["bracket", "after epoch", "judged", "kept", "best", "median", "worst"], rows))


def page(doc, runs, trace, title):
    modes = by_mode(runs)
    first = runs[0]
    machine = first.get("machine") or {}
    # The answer first: the document's sentence where modes were compared, else why one run cannot be judged.
    answer = doc.get("answer") or (f"not to be judged: {first['unjudged']}" if len(runs) == 1 and first.get("unjudged")
                                    else "")
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p><b>{html.escape(answer)}</b></p>" if answer else "",
             "<p>" + html.escape(f"{len(first['models'])} models on {first.get('backend') or '?'}: "
                                 f"{first.get('device_name') or '?'}; {machine.get('multifit', '')}; "
                                 f"{machine.get('cores', '?')} cores, load average "
                                 f"{machine.get('load_average_before', '?')} before") + "</p>",
             *[f"<p><b>error:</b> {html.escape(e)}</p>" for e in dict.fromkeys(r["error"] for r in runs if r.get("error"))],
             "<h2>Modes side by side</h2>", modes_table(modes), modes_chart(modes)]
    slow = slowdown_chart(modes)
    parts += ["<h2>Each model against its solo run</h2>",
              slow or "<p>no model has a solo run to compare with: --mode all, or --solo, gives each its slowdown</p>"]
    parts += ["<h2>Memory per model</h2>",
              "<p>pool: the model's own arena (weights, gradients, optimizer state, activations, batches); data share: "
              "its part of the data set its process read once; process peak: the host memory its process held at "
              "most (one process for every model of an in-process run)</p>", memory_table(runs[-1])]
    parts += [f"<h2>Best models ({html.escape(runs[-1]['mode'])})</h2>", best_models(runs[-1])]
    parts += [scheduler_section(r) for r in runs]
    if trace is not None:
        charts = timeline_charts(trace, first["mode"])
        parts += ["<h2>Timeline</h2>"]
        parts += [f"<h3>{html.escape(mode)}" + (f" (run {run} of {count}: the last, past the first run's warm-up)"
                                                if count > 1 else "") + "</h3>" + chart
                  for mode, run, count, chart in charts] or ["<p>the trace has no tracks</p>"]
    else:
        parts += ["<h2>Timeline</h2><p>give the run's --trace file (--trace TRACE.json) to draw every model's steps</p>"]
    parts += [f"<p><b>{html.escape(recommendation(runs))}</b></p>"]
    style = ("body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}"
             "td:first-child,th:first-child{text-align:left}svg{max-width:100%;height:auto}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("result")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--trace")
    parser.add_argument("--title")
    args = parser.parse_args()
    doc = read_json(args.result, "result document")
    runs = runs_of(doc, args.result)
    if not runs:
        fail(f"{args.result}: a document of no runs: give the --json document of a run that trained")
    if not all(isinstance(r, dict) and isinstance(r.get("mode"), str) and isinstance(r.get("models"), list) for r in runs):
        fail(f"{args.result}: a run without its mode or its models list: give run's --json document")
    trace = read_json(args.trace, "trace") if args.trace else None
    name = (runs[0].get("sweep") or {}).get("name") or os.path.basename(args.result)
    modes = ", ".join(dict.fromkeys(r["mode"] for r in runs))
    text = page(doc, runs, trace, args.title or f"multifit: {name} ({len(runs[0]['models'])} models; {modes})")
    try:
        with open(args.output, "w") as f:
            f.write(text)
    except OSError as e:
        fail(f"{args.output}: cannot write the report: {e.strerror}")


if __name__ == "__main__":
    main()
