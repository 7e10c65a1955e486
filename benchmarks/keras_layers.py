#!/usr/bin/env python3
"""What the Keras layers cost, and what an early stop saves a pack.

Layer costs: Keras's MLP (examples/fashion-mnist-keras-mlp.json: 784-512-512-10, RMSprop, batch
128, the last 10% of the rows for validation) in four variants, each trained --epochs epochs,
alternately, --reps times; the table gives each variant's median epoch (the epochs after the
first) and its cost over the plain MLP:
  plain      Dense(512, relu), Dense(512, relu), Dense(10, softmax)
  dropout    the example: Dropout(0.2) after each hidden layer
  batchnorm  Dense(512), BatchNormalization, Activation(relu), twice (Keras's usual order)
  both       Dense(512), BatchNormalization, Activation(relu), Dropout(0.2), twice
Each run's memory plan is checked against its pool: the pool's peak must be the plan's bytes and
the batches' (what the per-model cap counts), exactly.

Early stop in a pack: --members models of one shape (Dense(256, relu), Dense(10, softmax) on
synthetic:teacher, 64 features, 16384 rows, batch 128, 6 epochs) as one `multifit run --mode packed`
pack; half of them have EarlyStopping(monitor "loss", mode "max", patience 1), which stops them after
epoch 2 (a falling loss never improves in max mode). The pack's epochs before and after the stop
give the saving: the stopped members' kernels return at once (the pack is not compacted).

usage: benchmarks/keras_layers.py --out DIR [--binary build/bin/multifit] [--backend cpu] [--epochs 3]
                                  [--reps 3] [--members 8]
Writes DIR/keras_layers.json (every run), DIR/summary.md (both tables) and DIR/machine.txt.
"""
import argparse
import copy
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def variants():
    base = json.load(open(os.path.join(ROOT, "examples", "fashion-mnist-keras-mlp.json")))
    base["fit"].pop("callbacks")
    dense = lambda units, activation="linear": {"type": "Dense", "units": units, "activation": activation}  # noqa: E731
    norm, relu, drop = {"type": "BatchNormalization"}, {"type": "Activation", "activation": "relu"}, \
        {"type": "Dropout", "rate": 0.2}
    out = dense(10, "softmax")
    layers = {
        "plain": [dense(512, "relu"), dense(512, "relu"), out],
        "dropout": [dense(512, "relu"), drop, dense(512, "relu"), drop, out],
        "batchnorm": [dense(512), norm, relu, dense(512), norm, relu, out],
        "both": [dense(512), norm, relu, drop, dense(512), norm, relu, drop, out],
    }
    specs = {}
    for name, l in layers.items():
        spec = copy.deepcopy(base)
        spec["name"], spec["layers"] = "keras-mlp-" + name, l
        specs[name] = spec
    return specs


def run(binary, args):
    proc = subprocess.run([binary] + args, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"keras_layers: multifit {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")


def train(binary, backend, spec, epochs, work):
    spec_path, doc_path = os.path.join(work, spec["name"] + ".json"), os.path.join(work, spec["name"] + ".result.json")
    json.dump(spec, open(spec_path, "w"))
    run(binary, ["train", spec_path, "--backend", backend, "--epochs", str(epochs), "--quiet", "--json", doc_path])
    return json.load(open(doc_path))


def layer_costs(a, work):
    rows, runs = {name: [] for name in variants()}, []
    for _ in range(a.reps):
        for name, spec in variants().items():
            doc = train(a.binary, a.backend, spec, a.epochs, work)
            m = doc["models"][0]
            seconds = statistics.median(e["seconds"] for e in m["epochs"][1:])
            plan = sum(part["bytes"] for part in m["memory"]["plan"])
            rows[name].append(seconds)
            runs.append({"variant": name, "epoch_s": seconds, "plan_bytes": plan, "peak_bytes": m["memory"]["peak_bytes"],
                         "test_accuracy": m["test_accuracy"], "epochs": m["epochs"]})
            print(f"  {name:10s} {seconds:.3f} s/epoch, plan {plan} B, pool peak {m['memory']['peak_bytes']} B",
                  flush=True)
    plain = statistics.median(rows["plain"])
    lines = ["| variant | epoch (median) | min | max | cost over plain | memory plan = pool peak |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, values in rows.items():
        exact = all(r["plan_bytes"] == r["peak_bytes"] for r in runs if r["variant"] == name)
        peak = next(r["peak_bytes"] for r in runs if r["variant"] == name)
        lines.append(f"| {name} | {statistics.median(values):.3f} s | {min(values):.3f} s | {max(values):.3f} s | "
                     f"{statistics.median(values) / plain - 1:+.1%} | {'yes' if exact else 'NO'} ({peak} B) |")
    return "\n".join(lines), runs


def early_stop(a, work):
    members = []
    for i in range(a.members):
        spec = {"name": f"member-{i}", "data": "synthetic:teacher:rows=16384,features=64,classes=10", "input": 64,
                "layers": [{"type": "Dense", "units": 256, "activation": "relu"},
                           {"type": "Dense", "units": 10, "activation": "softmax"}],
                "loss": "sparse_categorical_crossentropy", "optimizer": "adam",
                "fit": {"epochs": 6, "batch_size": 128}, "seed": i, "memory": {"limit": "16MiB"}}
        if i % 2:
            spec["fit"]["callbacks"] = [{"type": "EarlyStopping", "monitor": "loss", "mode": "max", "patience": 1}]
        members.append(spec)
    rows = []
    for _ in range(a.reps):
        sweep, doc_path = os.path.join(work, "pack.json"), os.path.join(work, "pack.result.json")
        json.dump({"name": "early-stop-pack", "models": members}, open(sweep, "w"))
        run(a.binary, ["run", sweep, "--mode", "packed", "--backend", a.backend, "--quiet", "--json", doc_path])
        doc = json.load(open(doc_path))
        going = next(m for m in doc["models"] if m["fit"]["stopped_epoch"] is None)
        stopped = [m["fit"]["stopped_epoch"] for m in doc["models"] if m["fit"]["stopped_epoch"] is not None]
        seconds = [e["seconds"] for e in going["epochs"]]
        before, after = statistics.median(seconds[1:2]), statistics.median(seconds[3:])
        rows.append({"epoch_s": seconds, "stopped_after": stopped, "before_s": before, "after_s": after})
        print(f"  pack of {a.members}: epoch {before:.3f} s with all, {after:.3f} s with half stopped", flush=True)
    before = statistics.median(r["before_s"] for r in rows)
    after = statistics.median(r["after_s"] for r in rows)
    text = (f"| pack | epoch 2 (every member) | epochs 4-6 ({a.members // 2} stopped after epoch "
            f"{rows[0]['stopped_after'][0]}) | saving |\n| --- | --- | --- | --- |\n"
            f"| {a.members} members, {a.backend} | {before:.3f} s | {after:.3f} s | {1 - after / before:.0%} |")
    return text, rows


def machine(binary):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    info = subprocess.run([binary, "info"], capture_output=True, text=True).stdout
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"date: {date}\ncommit: {commit}\ncpu: {cpu}\ncores: {os.cpu_count()}\n{info}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "multifit"))
    p.add_argument("--backend", default="cpu")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--members", type=int, default=8)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="keras-layers-") as work:
        print("layer costs:", flush=True)
        costs, cost_runs = layer_costs(a, work)
        print("early stop in a pack:", flush=True)
        saving, pack_runs = early_stop(a, work)
    about = machine(a.binary)
    open(os.path.join(a.out, "machine.txt"), "w").write(about)
    json.dump({"layer_costs": cost_runs, "early_stop": pack_runs}, open(os.path.join(a.out, "keras_layers.json"), "w"),
              indent=1)
    summary = (f"# The Keras layers' cost and an early stop's saving ({a.backend})\n\n{about.splitlines()[1]}, "
               f"{a.reps} repetitions, alternated\n\n## Keras's MLP at batch 128, {a.epochs} epochs\n\n{costs}\n\n"
               f"## An early stop in a pack\n\n{saving}\n")
    open(os.path.join(a.out, "summary.md"), "w").write(summary)
    print(summary)


if __name__ == "__main__":
    main()
