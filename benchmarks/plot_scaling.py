#!/usr/bin/env python3
"""Plots the scaling study that benchmarks/scaling.py wrote into DIR: from DIR/scaling.csv,
  DIR/throughput.png  samples/s while training (start-up apart) against the number of models,
  DIR/slowdown.png    mean per-model slowdown (train time against the model's serial train time)
                      against the number of models,
each with one panel per workload and one line per mode (serial, streams, processes, packed), and
per mode a dashed one with graphs where the study ran both ways; x axis in log2.

Needs matplotlib (Debian: apt-get install python3-matplotlib, then run it with /usr/bin/python3);
draws with the Agg backend, no display needed.

usage: benchmarks/plot_scaling.py DIR
"""
import csv
import os
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_scaling.py: needs matplotlib (Debian: apt-get install python3-matplotlib; run with /usr/bin/python3)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

MODES = ("serial", "streams", "processes", "packed")


def number(text):
    return float(text) if text not in ("", None) else None


def plot(rows, column, ylabel, title, path, reference=None):
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    fig, axes = plt.subplots(1, len(workloads), figsize=(5.5 * len(workloads), 4.2), squeeze=False)
    for ax, workload in zip(axes[0], workloads):
        mine = [r for r in rows if r["workload"] == workload]
        counts = sorted({int(r["models"]) for r in mine})
        settings = sorted({r.get("graphs", "") for r in mine})  # "True"/"False" when run both ways
        for mode in MODES:
            for graphs in settings:
                points = sorted((int(r["models"]), number(r[column])) for r in mine
                                if r["mode"] == mode and r.get("graphs", "") == graphs and number(r[column]) is not None)
                label = mode + (" + graphs" if graphs == "True" and len(settings) > 1 else "")
                style = "--" if graphs == "True" and len(settings) > 1 else "-"
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", label=label)
        if reference is not None:
            ax.axhline(reference, color="grey", linewidth=0.8, linestyle="--")
        ax.set_xscale("log", base=2)
        ax.set_xticks(counts)
        ax.set_xticklabels([str(c) for c in counts])
        ax.set_ylim(bottom=0)
        ax.set_title(f"{workload} ({mine[0]['backend']} backend)")
        ax.set_xlabel("models")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("wrote", path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    out = sys.argv[1]
    with open(os.path.join(out, "scaling.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_scaling.py: {out}/scaling.csv has no rows")
    plot(rows, "samples_per_s", "samples/s while training (start-up apart)", "Throughput",
         os.path.join(out, "throughput.png"))
    plot(rows, "mean_slowdown", "mean slowdown vs serial (x)", "Per-model slowdown",
         os.path.join(out, "slowdown.png"), reference=1.0)


if __name__ == "__main__":
    main()
