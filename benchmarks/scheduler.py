#!/usr/bin/env python3
"""What a sweep's scheduler saves: the same search trained in full and under each scheduler, in one
mode, on the same trials (the file's search and seed), with the compute (samples trained), the wall
and the best validation accuracy found by each.

The search is the base file's (--base, examples/tiny-search-asha.json by default) with --trials
trials of at most --epochs epochs. --fraction F (for a base whose data is fashion-mnist or mnist:DIR)
trains on the first F of its train and test rows instead, written once as IDX files to a temp folder
(idx_subset, which benchmarks/peers/search.py uses too).

Goal (issue 32): the full sweep's best within 0.5 points for at most 1/4 of its compute and wall.

usage: benchmarks/scheduler.py [--multifit BIN] [--base FILE] [--fraction F] [--trials N] [--epochs E]
                               [--mode MODE] [--out DIR]
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = os.path.join(ROOT, "examples", "tiny-search-asha.json")
FASHION_MNIST = os.environ.get("MULTIFIT_DATA", "/usr/share/datasets") + "/fashion-mnist"  # as multifit finds it
IDX = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def idx_subset(source, fraction, folder):
    """Writes the first `fraction` of each IDX file of the data source (fashion-mnist or mnist:DIR, each
    file plain or .gz) into folder, as plain IDX files; returns the source that reads them."""
    src = FASHION_MNIST if source == "fashion-mnist" else source.removeprefix("mnist:")
    for name in IDX:
        path = os.path.join(src, name)
        raw = open(path, "rb").read() if os.path.exists(path) else gzip.open(path + ".gz").read()
        dims = raw[3]  # the magic number's last byte; then a big-endian 32-bit size per dimension
        count = int.from_bytes(raw[4:8], "big")
        kept = int(count * fraction)
        header = 4 + 4 * dims
        record = (len(raw) - header) // count
        with open(os.path.join(folder, name), "wb") as out:
            out.write(raw[:4] + kept.to_bytes(4, "big") + raw[8:header] + raw[header:header + kept * record])
    return "mnist:" + folder


def sweep(base, trials, epochs, scheduler, data=None):
    doc = json.load(open(base))
    doc["search"]["trials"] = trials
    if data:
        doc["base"]["data"] = data
    doc["base"]["fit"]["epochs"] = epochs
    if scheduler:
        doc["scheduler"] = {"type": scheduler, "metric": "val_accuracy", "grace_epochs": 1, "reduction_factor": 3}
    else:
        doc.pop("scheduler", None)
    return doc


def run(binary, doc, mode, folder, name):
    path = os.path.join(folder, name + ".json")
    json.dump(doc, open(path, "w"))
    out = os.path.join(folder, name + ".result.json")
    subprocess.run([binary, "run", path, "--backend", "cpu", "--quiet", "--mode", mode, "--json", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.load(open(out))
    best = max((m["epochs"][-1]["val_accuracy"] for m in r["models"] if m["status"] == "ok" and m["epochs"]),
               default=float("nan"))
    samples = sum(m["samples"] for m in r["models"])
    return {"wall_s": r["wall_s"], "samples": samples, "best_val_accuracy": best,
            "stopped": sum(m["status"] == "stopped" for m in r["models"])}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--multifit", default=os.path.join(ROOT, "build", "bin", "multifit"))
    p.add_argument("--base", default=TINY, help="the sweep file whose base and search space are searched")
    p.add_argument("--fraction", type=float, help="train on the first F of the base's IDX data's rows")
    p.add_argument("--trials", type=int, default=243)
    p.add_argument("--epochs", type=int, default=27)
    p.add_argument("--mode", default="packed")
    p.add_argument("--out", help="folder for results.json and table.md")
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        source = json.load(open(a.base))["base"]["data"]
        data = idx_subset(source, a.fraction, folder) if a.fraction else None
        full = run(a.multifit, sweep(a.base, a.trials, a.epochs, None, data), a.mode, folder, "full")
        rows.append(("full sweep", full))
        for kind in ("asha", "successive_halving", "hyperband"):
            rows.append((kind, run(a.multifit, sweep(a.base, a.trials, a.epochs, kind, data), a.mode, folder, kind)))
    subset = f", the first {a.fraction:.0%} of {source}'s rows" if a.fraction else ""
    lines = [f"{a.trials} trials of {os.path.relpath(a.base, ROOT)}'s space{subset}, {a.epochs} epochs, "
             f"--mode {a.mode}, cpu",
             "", "| run | stopped | samples | compute | wall s | wall | best val_accuracy | vs full |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in rows:
        lines.append(f"| {name} | {r['stopped']} | {r['samples']} | {r['samples'] / full['samples']:.1%} | "
                     f"{r['wall_s']:.3f} | {r['wall_s'] / full['wall_s']:.1%} | {r['best_val_accuracy']:.4f} | "
                     f"{100 * (r['best_val_accuracy'] - full['best_val_accuracy']):+.2f} pt |")
    print("\n".join(lines))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        json.dump(dict(rows), open(os.path.join(a.out, "results.json"), "w"), indent=2)
        open(os.path.join(a.out, "table.md"), "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
