#!/usr/bin/env python3
"""Tabulates the scaling study that benchmarks/scaling.py wrote into DIR as Markdown, for the
README: one table per workload from DIR/scaling.csv (models, mode, wall, samples/s, speedup vs
serial, overlap, mean slowdown, packs, whether steps ran as graphs, each model's cpu threads) and the table of DIR/overheads.csv (32 tiny models: serial,
streams, processes and packed modes against 32 separate `multifit train` processes). Prints it and
writes it to DIR/summary.md, with DIR/machine.txt's first lines as a heading note.

usage: benchmarks/summarize_scaling.py DIR
"""
import csv
import os
import sys


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    return float(text) if text not in ("", None) else None


def seconds(text):
    s = number(text)
    return "-" if s is None else f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def fixed(text, spec, suffix=""):
    x = number(text)
    return "-" if x is None else format(x, spec) + suffix


def table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return out


def summary(out):
    lines = []
    machine = os.path.join(out, "machine.txt")
    if os.path.exists(machine):
        with open(machine) as f:
            facts = dict(l.rstrip("\n").split(": ", 1) for l in f if ": " in l and not l.startswith("device:"))
        lines += [f"Machine: {facts.get('cpu', '?')}, {facts.get('cores', '?')} cores, {facts.get('memory', '?')}; "
                  f"commit {facts.get('commit', '?')}, {facts.get('date', '?')}.", ""]
    rows = read_csv(os.path.join(out, "scaling.csv"))
    for workload in dict.fromkeys(r["workload"] for r in rows):
        mine = [r for r in rows if r["workload"] == workload]
        lines += [f"### {workload} ({mine[0]['backend']} backend)", ""]
        lines += table(["models", "graphs", "threads", "mode", "wall", "samples/s", "speedup vs serial", "overlap",
                        "mean slowdown", "ok", "packs"],
                       [[r["models"], {"True": "on", "False": "off"}.get(r.get("graphs"), "-"), r.get("threads") or "-",
                         r["mode"],
                         seconds(r["wall_s"]), fixed(r["samples_per_s"], ",.0f"),
                         fixed(r["speedup_vs_serial"], ".2f", "x"),
                         "-" if number(r["overlap"]) is None else f"{number(r['overlap']):.0%}",
                         fixed(r["mean_slowdown"], ".2f", "x"), f"{r['models_ok']}/{r['models']}",
                         r.get("packs") or "-"] for r in mine])
        lines.append("")
    overheads = read_csv(os.path.join(out, "overheads.csv"))
    if overheads:
        lines += ["### 32 tiny models (examples/tiny-sweep.json): one run against separate processes", ""]
        lines += table(["way", "wall", "vs separate processes"],
                       [[r["way"], seconds(r["wall_s"]), fixed(r["ratio_to_separate"], ".2f")] for r in overheads])
        lines.append("")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    text = summary(sys.argv[1])
    print(text)
    with open(os.path.join(sys.argv[1], "summary.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
