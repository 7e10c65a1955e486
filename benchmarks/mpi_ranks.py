#!/usr/bin/env python3
"""One sweep over MPI ranks against one process: the same numbers, and what the ranks took.

Runs `multifit run SWEEP --mode M --quiet --json ...` once in one process, then under
`mpirun --oversubscribe -np R` for each R, and checks that every model's numbers (its status, each
epoch's loss, accuracy, val_loss and val_accuracy, its test metrics) equal the one process's, model
by model. The figures are each run's document's: wall_s, startup_s and train_s (a run over ranks:
its slowest rank's), samples_per_s, and per rank its models and wall.

Writes into DIR:
  ranks.csv     one row per run: sweep, mode, ranks (0: one process), wall_s (around the command),
                the document's wall_s, startup_s, train_s, samples_per_s, models, models_equal,
                models per rank, each rank's wall_s
  runs/         every run's result document
  machine.txt   date, commit, CPU, cores, memory, Open MPI's version

usage: benchmarks/mpi_ranks.py --out DIR [--binary PATH] [--sweep examples/fashion-mnist-grid.json]
                               [--mode serial] [--ranks 2,3] [--backend cpu]
"""
import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["sweep", "mode", "ranks", "wall_s", "run_wall_s", "startup_s", "train_s", "samples_per_s", "models",
           "models_equal", "models_per_rank", "rank_wall_s"]


def numbers(model):
    """What two runs of a model must agree on, wherever it ran."""
    epochs = [(e["loss"], e["accuracy"], e["val_loss"], e["val_accuracy"]) for e in model["epochs"]]
    return (model["name"], model["status"], epochs, model["test_loss"], model["test_accuracy"])


def run(command, out):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    start = time.monotonic()
    done = subprocess.run(command + ["--json", out], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"mpi_ranks: {' '.join(command)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, json.load(open(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "multifit"))
    parser.add_argument("--sweep", default=os.path.join(ROOT, "examples", "fashion-mnist-grid.json"))
    parser.add_argument("--mode", default="serial")
    parser.add_argument("--ranks", default="3")
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    name = os.path.splitext(os.path.basename(args.sweep))[0]
    base = [args.binary, "run", args.sweep, "--backend", args.backend, "--mode", args.mode, "--quiet"]
    rows = []
    one_wall, one = run(base, os.path.join(args.out, "runs", f"{name}-{args.mode}-1process.json"))
    reference = [numbers(m) for m in one["models"]]
    for ranks in [0] + [int(r) for r in args.ranks.split(",")]:
        if ranks == 0:
            wall, doc = one_wall, one
        else:
            wall, doc = run(["mpirun", "--oversubscribe", "-np", str(ranks)] + base,
                            os.path.join(args.out, "runs", f"{name}-{args.mode}-{ranks}ranks.json"))
        rows.append({"sweep": name, "mode": args.mode, "ranks": ranks, "wall_s": round(wall, 3),
                     "run_wall_s": round(doc["wall_s"], 3), "startup_s": doc["startup_s"], "train_s": doc["train_s"],
                     "samples_per_s": doc["samples_per_s"], "models": len(doc["models"]),
                     "models_equal": sum(numbers(m) == r for m, r in zip(doc["models"], reference)),
                     "models_per_rank": " ".join(str(p["models"]) for p in doc["ranks"]),
                     "rank_wall_s": " ".join(f"{p['wall_s']:.3f}" for p in doc["ranks"])})
        print(rows[-1])
    with open(os.path.join(args.out, "ranks.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout
    mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    memory = next(l.split(":", 1)[1].strip() for l in open("/proc/meminfo") if l.startswith("MemTotal"))
    with open(os.path.join(args.out, "machine.txt"), "w") as f:
        f.write(f"date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}\n"
                f"commit: {commit.strip()}\ncpu: {cpu}\ncores: {os.cpu_count()}\nmemory: {memory}\n"
                f"mpi: {mpi[0] if mpi else 'none'}\n")


if __name__ == "__main__":
    main()
