#!/usr/bin/env python3
"""Scaling study: how training N small models at once shares the machine, in each of multifit's
four ways (serial, one stream per model in one process, one process per model, and packed: models
of one shape trained together in shared kernels).

For each workload, N and --graphs setting it writes a sweep of N models and runs
`multifit run SWEEP --mode all --graphs G` once (G from --graphs: on and off, to see what
replaying each training step from a CUDA graph, or on the cpu a recorded step, buys).
Workloads:
  tiny        N copies of the seeds' tiny model, Dense(64, relu) -> Dense(1, sigmoid) on
              synthetic:binary (1024x20), batch 64, 2 epochs (examples/binary-classifier.json),
              with seeds 1..N and learning rates cycling through 1e-3, 3e-3, 1e-2, 3e-2:
              one shape, so packed mode trains them as one pack; N from --tiny-counts (8, 32, 128)
  fmnist-mlp  N copies of the Fashion-MNIST MLP 784-256-128-10 (examples/fashion-mnist-mlp.json),
              seeds 1..N, --fmnist-epochs epochs (default 1), memory limit 64MiB grow; N from
              --fmnist-counts (1, 2, 4, 8)
  fmnist-grid examples/fashion-mnist-grid.json: 8 models of 8 shapes (so 8 packs of one),
              --fmnist-epochs epochs

It also measures the overhead of separate processes (the target: a sweep of 32 tiny models in
serial or streams mode costs under a fifth of 32 separate processes): examples/tiny-sweep.json with
`multifit run --mode serial`, `streams`, `processes` and `packed`, against its 32 models as 32
separate `multifit train` commands, one after another; each way's wall clock is timed here, around
the commands.

Writes into DIR:
  scaling.csv         one row per (workload, N, graphs, mode): wall_s, startup_s, samples_per_s,
                      speedup_vs_serial, overlap, mean/max model slowdown, mean model startup_s,
                      models_ok, packs (the run's own figures, from its --json document); graphs
                      says whether its steps ran as graphs, threads the cpu threads each model had
                      (its settings.threads: one value, or the values seen, joined by /) and
                      training_threads the most host threads that trained at once
  overheads.csv       way, wall_s, ratio to the 32 separate processes
  runs/WORKLOAD-N[-graphs-G].json, runs/overhead-MODE.json   every run's result document
  failures.txt        the runs that failed, one line each (only when one did)
  machine.txt         date, commit, CPU, cores, memory, `multifit info`
Then benchmarks/plot_scaling.py DIR draws it and benchmarks/summarize_scaling.py DIR tabulates it.
A run that exits non-zero is recorded (its stderr shown, a line in failures.txt) and passed over: the
others still run, and the script exits 1 at the end. On the cuda backend at most --concurrency models
(default 32) train at once, so processes mode starts at most 32 worker processes on the GPU; the
rest run in later phases (`multifit run --concurrency`).

usage: benchmarks/scaling.py --out DIR [--backend auto|cpu|cuda|host-exec] [--binary PATH]
                             [--workloads tiny,fmnist-mlp,fmnist-grid] [--tiny-counts 8,32,128]
                             [--fmnist-counts 1,2,4,8] [--fmnist-epochs 1] [--graphs auto|on,off]
                             [--concurrency K] [--no-overheads]
"""
import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
MODES = ("serial", "streams", "processes", "packed")
COLUMNS = ["workload", "models", "graphs", "threads", "training_threads", "mode", "backend", "wall_s", "startup_s",
           "samples_per_s", "speedup_vs_serial", "overlap", "mean_slowdown", "max_slowdown", "mean_model_startup_s",
           "models_ok", "packs"]
TINY_LEARNING_RATES = (1e-3, 3e-3, 1e-2, 3e-2)


def load_example(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return json.load(f)


def workload_sweep(name, n, fmnist_epochs):
    """The sweep of one workload with n models."""
    if name == "fmnist-grid":
        sweep = load_example("fashion-mnist-grid.json")
        sweep["base"]["fit"]["epochs"] = fmnist_epochs
        return sweep
    if name == "tiny":
        spec = load_example("binary-classifier.json")
    elif name == "fmnist-mlp":
        spec = load_example("fashion-mnist-mlp.json")
        spec["fit"]["epochs"] = fmnist_epochs
        spec["memory"] = {"limit": "64MiB", "mode": "grow"}
    else:
        sys.exit(f"scaling.py: unknown workload {name!r} (tiny, fmnist-mlp, fmnist-grid)")
    spec["name"] = name
    spec.pop("seed", None)  # each model sets its own
    models = []
    for i in range(n):
        model = {"name": f"{name}-{i + 1}", "seed": i + 1}
        if name == "tiny":
            model["optimizer"] = {"learning_rate": TINY_LEARNING_RATES[i % len(TINY_LEARNING_RATES)]}
        models.append(model)
    return {"name": f"{name}-x{n}", "base": spec, "models": models}


def write_json(path, document):
    with open(path, "w") as f:
        json.dump(document, f, indent=1)


class RunFailed(Exception):
    pass


def run(argv, result=None):
    """Runs a command, its output captured, and returns its wall seconds. If it fails, shows its stderr and
    the errors of the models in its result document (`run` prints those on stdout) and raises RunFailed."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        try:
            with open(result) as f:
                document = json.load(f)
            bad = [(r["mode"], m) for r in document.get("runs", [document]) for m in r["models"] if m["status"] != "ok"]
            for mode, m in bad:
                sys.stderr.write(f"{mode}: {m['name']}: {m['status']}: {m['error']}\n")
            if not bad:
                sys.stderr.write(f"(every model in {result} says ok)\n")
        except (TypeError, OSError, ValueError, KeyError):
            pass
        raise RunFailed(f"exit code {done.returncode} from: {' '.join(argv)}")
    return wall


def mean(values):
    return sum(values) / len(values) if values else None


def rows_of(workload, n, document):
    """One CSV row per mode of a `--mode all` document."""
    rows = []
    for r in document["runs"]:
        models = r["models"]
        graphs = {m["settings"].get("graphs") for m in models if m.get("settings")}
        threads = {m["settings"].get("threads") for m in models if m.get("settings")}
        slowdowns = [m["slowdown"] for m in models if m.get("slowdown") is not None]
        startups = [m["startup_s"] for m in models if m.get("startup_s") is not None]
        rows.append({
            "workload": workload, "models": n, "graphs": graphs.pop() if len(graphs) == 1 else None,
            "threads": "/".join(str(t) for t in sorted(t for t in threads if t is not None)) or None,
            "training_threads": r.get("training_threads"), "mode": r["mode"], "backend": r["backend"],
            "wall_s": r["wall_s"], "startup_s": r["startup_s"], "samples_per_s": r["samples_per_s"],
            "speedup_vs_serial": r["speedup_vs_serial"], "overlap": (r.get("overlap") or {}).get("fraction"),
            "mean_slowdown": mean(slowdowns), "max_slowdown": max(slowdowns) if slowdowns else None,
            "mean_model_startup_s": mean(startups), "models_ok": sum(m["status"] == "ok" for m in models),
            "packs": len({m["pack"] for m in models if m.get("pack") is not None}) or None,
        })
    return rows


def fmt(value, spec, suffix=""):
    return "-" if value is None else format(value, spec) + suffix


def print_row(row):
    graphs = {True: "on", False: "off"}.get(row["graphs"], "-")
    print(f"{row['workload']:>11} {row['models']:>3} {graphs:>6} {row['threads'] or '-':>7} {row['mode']:>9} "
          f"{fmt(row['wall_s'], '9.3f')} "
          f"{fmt(row['startup_s'], '9.3f')} {fmt(row['samples_per_s'], '12.0f')} "
          f"{fmt(row['speedup_vs_serial'], '7.2f', 'x'):>8} {fmt(row['overlap'], '7.0%'):>7} "
          f"{fmt(row['mean_slowdown'], '8.2f', 'x'):>9} {row['models_ok']:>3}/{row['models']}", flush=True)


def describe_machine(binary, out):
    def command(argv):
        try:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, cwd=ROOT).stdout.strip()
        except OSError as e:
            return f"unknown ({e})"

    cpu = platform.processor() or "unknown"
    memory = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
        with open("/proc/meminfo") as f:
            kib = int(next(l.split()[1] for l in f if l.startswith("MemTotal")))
            memory = f"{kib / 2**20:.1f}Gi"
    except OSError:
        pass
    lines = [datetime.datetime.now(datetime.timezone.utc).strftime("date: %Y-%m-%dT%H:%M:%SZ"),
             "commit: " + (command(["git", "rev-parse", "--short", "HEAD"]) or "unknown"),
             "cpu: " + cpu, f"cores: {os.cpu_count()}", "memory: " + memory,
             "command: " + " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])]
    lines += ["device: " + l for l in command([binary, "info"]).splitlines()]
    with open(os.path.join(out, "machine.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def record_failure(args, what, error):
    """One failed run: said on stderr and appended to failures.txt, so that the rest of the study still runs."""
    sys.stderr.write(f"scaling.py: {what} failed, passed over: {error}\n")
    with open(os.path.join(args.out, "failures.txt"), "a") as f:
        f.write(f"{what}: {error}\n")
    args.failures += 1


def concurrency(args):
    """The --concurrency option of each `multifit run`: the bound on a GPU, none elsewhere (there multifit's
    own bound, the machine's cores and memory, applies; passing one would override it)."""
    return ["--concurrency", str(args.concurrency)] if args.backend == "cuda" and args.concurrency else []


def scaling(args, tmp):
    table = open(os.path.join(args.out, "scaling.csv"), "w", newline="")  # written as it goes: a failure keeps the rows so far
    writer = csv.DictWriter(table, COLUMNS)
    writer.writeheader()
    print(f"{'workload':>11} {'N':>3} {'graphs':>6} {'threads':>7} {'mode':>9} {'wall_s':>9} {'startup_s':>9} {'samples/s':>12} "
          f"{'speedup':>8} {'overlap':>7} {'slowdown':>9} {'ok':>5}")
    for workload in args.workloads:
        counts = {"tiny": args.tiny_counts, "fmnist-mlp": args.fmnist_counts, "fmnist-grid": [8]}[workload]
        for n in counts:
            sweep = os.path.join(tmp, f"{workload}-{n}.json")
            write_json(sweep, workload_sweep(workload, n, args.fmnist_epochs))
            for graphs in args.graphs:
                suffix = "" if graphs == "auto" else f"-graphs-{graphs}"
                result = os.path.join(args.out, "runs", f"{workload}-{n}{suffix}.json")
                try:
                    run([args.binary, "run", sweep, "--mode", "all", "--backend", args.backend, "--graphs", graphs,
                         "--quiet", "--json", result] + concurrency(args), result)
                except RunFailed as e:
                    record_failure(args, f"{workload}-{n}{suffix}", e)
                    continue
                with open(result) as f:
                    for row in rows_of(workload, n, json.load(f)):
                        print_row(row)
                        writer.writerow(row)
                table.flush()
    table.close()


def tiny_sweep_models():
    """The single-model specs of examples/tiny-sweep.json's grid, in the sweep's order (learning rate, then seed)."""
    sweep = load_example("tiny-sweep.json")
    base, grid = sweep["base"], sweep["grid"]
    if set(grid) != {"learning_rate", "seed"}:
        sys.exit(f"scaling.py: tiny-sweep.json's axes are {sorted(grid)}; this script expands learning_rate and seed")
    specs = []
    for lr in grid["learning_rate"]:
        for seed in grid["seed"]:
            spec = json.loads(json.dumps(base))
            spec["name"] = f"{base['name']}-lr{lr:g}-s{seed}"
            spec["optimizer"]["learning_rate"] = lr
            spec["seed"] = seed
            specs.append(spec)
    return specs


def overheads(args, tmp):
    sweep = os.path.join(EXAMPLES, "tiny-sweep.json")
    specs = tiny_sweep_models()
    walls = {}
    try:
        for mode in MODES:
            result = os.path.join(args.out, "runs", f"overhead-{mode}.json")
            walls[f"run --mode {mode}"] = run([args.binary, "run", sweep, "--mode", mode, "--backend", args.backend,
                                               "--quiet", "--json", result] + concurrency(args), result)
    except RunFailed as e:  # the ratios need every way: the overheads are left out
        record_failure(args, f"overhead-{mode}", e)
        return
    paths = []
    for spec in specs:
        paths.append(os.path.join(tmp, spec["name"] + ".json"))
        write_json(paths[-1], spec)
    start = time.perf_counter()
    try:
        for path in paths:
            run([args.binary, "train", path, "--backend", args.backend, "--quiet", "--json", path[:-5] + "-result.json"],
                path[:-5] + "-result.json")
    except RunFailed as e:
        record_failure(args, f"overhead-train {os.path.basename(path)}", e)
        return
    separate = f"{len(paths)} x train"
    walls[separate] = time.perf_counter() - start

    print(f"\n{len(specs)} tiny models (examples/tiny-sweep.json), wall clock around the commands:")
    print(f"  {'way':22} {'wall_s':>9} {'vs separate':>12}")
    with open(os.path.join(args.out, "overheads.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["way", "wall_s", "ratio_to_separate"])
        for way, wall in walls.items():
            ratio = wall / walls[separate]
            writer.writerow([way, wall, ratio])
            print(f"  {way:22} {wall:9.3f} {ratio:12.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "multifit"))
    parser.add_argument("--backend", default="auto", help="auto, cpu, cuda or host-exec")
    parser.add_argument("--tiny-counts", default="8,32,128", help="numbers of tiny models, comma-separated")
    parser.add_argument("--fmnist-counts", default="1,2,4,8", help="numbers of fmnist-mlp models, comma-separated")
    parser.add_argument("--workloads", default="tiny,fmnist-mlp,fmnist-grid",
                        help="tiny, fmnist-mlp, fmnist-grid, comma-separated")
    parser.add_argument("--fmnist-epochs", type=int, default=1, help="epochs of the fmnist-mlp and fmnist-grid models")
    parser.add_argument("--no-overheads", action="store_true", help="leave out the 32-tiny-models overhead runs")
    parser.add_argument("--concurrency", type=int, default=32,
                        help="on the cuda backend, at most K models at once, each a process in processes mode (0: all)")
    parser.add_argument("--graphs", default="auto", help="--graphs settings to run each sweep with, comma-separated: "
                                                          "auto, or on,off (a GPU, or host-exec's emulation)")
    args = parser.parse_args()
    args.tiny_counts = [int(c) for c in args.tiny_counts.split(",")]
    args.fmnist_counts = [int(c) for c in args.fmnist_counts.split(",")]
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.graphs = [g for g in args.graphs.split(",") if g]
    if not args.graphs or set(args.graphs) - {"auto", "on", "off"}:
        sys.exit(f"scaling.py: --graphs takes auto, on and off, comma-separated (got {','.join(args.graphs)!r})")
    args.binary = os.path.abspath(args.binary)
    args.failures = 0
    for w in args.workloads:
        workload_sweep(w, 1, args.fmnist_epochs)  # an unknown name stops here, before anything runs
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    if os.path.exists(os.path.join(args.out, "failures.txt")):  # an earlier run's
        os.remove(os.path.join(args.out, "failures.txt"))
    describe_machine(args.binary, args.out)
    with tempfile.TemporaryDirectory(prefix="multifit-scaling-") as tmp:
        scaling(args, tmp)
        if not args.no_overheads:
            overheads(args, tmp)
    if args.failures:
        sys.exit(f"scaling.py: {args.failures} run(s) failed, listed in {os.path.join(args.out, 'failures.txt')}")


if __name__ == "__main__":
    main()
