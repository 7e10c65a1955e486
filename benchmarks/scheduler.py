#!/usr/bin/env python3
"""What a sweep's scheduler saves: the same search trained in full and under each scheduler, in one
mode, on the same trials (the file's search and seed), with the compute (samples trained), the wall
and the best validation accuracy found by each.

Goal (issue 32): the full sweep's best within 0.5 points for at most 1/4 of its compute and wall.

usage: benchmarks/scheduler.py [--multifit BIN] [--trials N] [--epochs E] [--mode MODE] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sweep(trials, epochs, scheduler):
    doc = json.load(open(os.path.join(ROOT, "examples", "tiny-search-asha.json")))
    doc["search"]["trials"] = trials
    doc["base"]["fit"]["epochs"] = epochs
    if scheduler:
        doc["scheduler"] = {"type": scheduler, "metric": "val_accuracy", "grace_epochs": 1, "reduction_factor": 3}
    else:
        del doc["scheduler"]
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
    p.add_argument("--trials", type=int, default=243)
    p.add_argument("--epochs", type=int, default=27)
    p.add_argument("--mode", default="packed")
    p.add_argument("--out", help="folder for results.json and table.md")
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        full = run(a.multifit, sweep(a.trials, a.epochs, None), a.mode, folder, "full")
        rows.append(("full sweep", full))
        for kind in ("asha", "successive_halving", "hyperband"):
            rows.append((kind, run(a.multifit, sweep(a.trials, a.epochs, kind), a.mode, folder, kind)))
    lines = [f"{a.trials} trials of examples/tiny-search-asha.json's space, {a.epochs} epochs, --mode {a.mode}, cpu",
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
