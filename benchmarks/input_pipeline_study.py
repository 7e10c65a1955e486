#!/usr/bin/env python3
"""The input pipeline study on the CPU: does a better pipeline, or models at once, help a model whose
batches take longer to prepare than to train on?

Two workloads, each model trained alone with every (workers, prefetch) in {1, 2} x {1, 4}:
  fmnist-augmented  examples/fashion-mnist-augmented.json (a flip and a translation of up to 5% on
                    28x28 images), --fmnist-epochs epochs (default 2), and the same spec without
                    its preprocessing (the resident path) beside it
  tiny-hostwork     the seeds' tiny model, Dense(64, relu) -> Dense(1, sigmoid) on
                    synthetic:teacher:rows=4096, batch 64, 2 epochs, with a HostWork of
                    --host-work microseconds a sample (default 20): about 1.3 ms to prepare a
                    batch that trains in microseconds, so it is input-bound
Then 4 tiny-hostwork models (seeds 1..4) with 1 worker and prefetch 2 as one sweep, `multifit run
--mode serial`, `streams` and `processes`: whether models at once finish the sweep sooner.

It checks that the losses and accuracies are the same for every (workers, prefetch) of a workload,
and writes into DIR:
  pipeline.csv   one row per single-model run: workload, workers, prefetch, the backend's training
                 threads (the run's less the pipeline's workers), seconds per epoch (the
                 median of the epochs after the first), input_wait_s and input_busy_s per epoch, the
                 input wait as a fraction of the epoch, test_accuracy
  sweep.csv      one row per mode of the 4-model sweep: wall_s, train_s, mean input wait fraction
  summary.md     both tables, and whether the numbers agreed across pipelines
  machine.txt    date, commit, CPU, `multifit info`
  runs/*.json    every run's document

usage: benchmarks/input_pipeline_study.py --out DIR [--binary PATH] [--fmnist-epochs 2] [--host-work 20]
"""
import argparse
import csv
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = [(1, 1), (1, 4), (2, 1), (2, 4)]


def tiny_hostwork(micros, seed=1):
    return {"name": f"tiny-hostwork-{seed}", "data": "synthetic:teacher:rows=4096", "input": 20,
            "layers": [{"units": 64, "activation": "relu"}, {"units": 1, "activation": "sigmoid"}],
            "loss": "binary_crossentropy", "optimizer": {"name": "adam"},
            "fit": {"epochs": 2, "batch_size": 64}, "seed": seed, "memory": {"limit": "4MiB"},
            "preprocessing": [{"type": "HostWork", "microseconds_per_sample": micros}]}


def run(binary, args, doc):
    proc = subprocess.run([binary] + args + ["--backend", "cpu", "--json", doc, "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"input_pipeline_study: {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    with open(doc) as f:
        return json.load(f)


def epoch_row(workload, workers, prefetch, model):
    epochs = model["epochs"]
    later = epochs[1:] or epochs
    seconds = statistics.median(e["seconds"] for e in later)
    wait = statistics.median(e["input_wait_s"] for e in later)
    busy = statistics.median(e["input_busy_s"] for e in later)
    return {"workload": workload, "workers": workers, "prefetch": prefetch,
            "threads": model["settings"]["threads"], "epoch_s": round(seconds, 4),
            "input_wait_s": round(wait, 4), "input_busy_s": round(busy, 4),
            "input_wait_fraction": round(wait / seconds, 3) if seconds > 0 else 0,
            "test_accuracy": model.get("test_accuracy")}


def numbers(model):
    return [(e["loss"], e["accuracy"]) for e in model["epochs"]] + [model.get("test_loss")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "multifit"))
    parser.add_argument("--fmnist-epochs", type=int, default=2)
    parser.add_argument("--host-work", type=float, default=20)
    args = parser.parse_args()
    runs = os.path.join(args.out, "runs")
    os.makedirs(runs, exist_ok=True)
    specs = tempfile.mkdtemp()

    with open(os.path.join(ROOT, "examples", "fashion-mnist-augmented.json")) as f:
        fmnist = json.load(f)
    fmnist["fit"]["epochs"] = args.fmnist_epochs
    workloads = {"fmnist-augmented": fmnist, "tiny-hostwork": tiny_hostwork(args.host_work)}

    rows, agreed = [], {}
    for name, spec in workloads.items():
        seen = None
        for workers, prefetch in PIPELINES:
            spec = dict(spec, pipeline={"workers": workers, "prefetch": prefetch})
            path = os.path.join(specs, f"{name}-{workers}-{prefetch}.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            doc = run(args.binary, ["train", path], os.path.join(runs, f"{name}-w{workers}-p{prefetch}.json"))
            model = doc["models"][0]
            rows.append(epoch_row(name, workers, prefetch, model))
            seen = seen or numbers(model)
            agreed[name] = agreed.get(name, True) and numbers(model) == seen
            print(rows[-1], flush=True)
    resident = {k: v for k, v in fmnist.items() if k not in ("preprocessing", "input_shape", "pipeline")}
    path = os.path.join(specs, "fmnist-resident.json")
    with open(path, "w") as f:
        json.dump(resident, f)
    doc = run(args.binary, ["train", path], os.path.join(runs, "fmnist-resident.json"))
    rows.append(epoch_row("fmnist-resident", 0, 0, doc["models"][0]))
    print(rows[-1], flush=True)

    sweep = {"name": "tiny-hostwork-4", "models": [tiny_hostwork(args.host_work, seed) for seed in (1, 2, 3, 4)]}
    for m in sweep["models"]:
        m["pipeline"] = {"workers": 1, "prefetch": 2}
    sweep_path = os.path.join(specs, "tiny-hostwork-4.json")
    with open(sweep_path, "w") as f:
        json.dump(sweep, f)
    sweep_rows = []
    for mode in ("serial", "streams", "processes"):
        doc = run(args.binary, ["run", sweep_path, "--mode", mode], os.path.join(runs, f"sweep-{mode}.json"))
        fractions = [statistics.median(e["input_wait_s"] / e["seconds"] for e in m["epochs"]) for m in doc["models"]]
        sweep_rows.append({"mode": mode, "wall_s": round(doc["wall_s"], 3), "train_s": round(doc["train_s"], 3),
                           "mean_input_wait_fraction": round(statistics.mean(fractions), 3)})
        print(sweep_rows[-1], flush=True)

    for name, table in (("pipeline.csv", rows), ("sweep.csv", sweep_rows)):
        with open(os.path.join(args.out, name), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(table[0].keys()))
            writer.writeheader()
            writer.writerows(table)
    with open(os.path.join(args.out, "machine.txt"), "w") as f:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        info = subprocess.run([args.binary, "info"], capture_output=True, text=True)
        f.write(f"{datetime.datetime.now(datetime.timezone.utc).isoformat()}\n{commit.stdout}{os.cpu_count()} cores\n"
                f"{info.stdout}")
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("| workload | workers | prefetch | training threads | epoch | input wait | input busy | wait share | "
                "test accuracy |\n")
        f.write("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for r in rows:
            f.write(f"| {r['workload']} | {r['workers'] or '-'} | {r['prefetch'] or '-'} | {r['threads']} | {r['epoch_s']} s | "
                    f"{r['input_wait_s']} s | {r['input_busy_s']} s | {r['input_wait_fraction']:.0%} | "
                    f"{'-' if r['test_accuracy'] is None else format(r['test_accuracy'], '.4f')} |\n")
        f.write("\n| 4 input-bound tiny models | wall | train | mean input wait |\n| --- | ---: | ---: | ---: |\n")
        for r in sweep_rows:
            f.write(f"| {r['mode']} | {r['wall_s']} s | {r['train_s']} s | {r['mean_input_wait_fraction']:.0%} |\n")
        for name, same in agreed.items():
            f.write(f"\n{name}: the losses, accuracies and test loss were "
                    f"{'the same' if same else 'NOT the same'} for every workers and prefetch.\n")
    if not all(agreed.values()):
        sys.exit("input_pipeline_study: the numbers differed across pipelines (summary.md)")


if __name__ == "__main__":
    main()
