#!/usr/bin/env python3
"""The cpu backend's threads on a machine that is not idle: each workload with --threads 1 and
with every core, quiet and beside 1 and 2 busy processes (`python3 -c "while True: pass"`, one
core each), and the answer of `run --mode all --repeat R` in the same three conditions.

Workloads (multifit run --mode serial --backend cpu, each its train_s, the median of --reps
interleaved runs):
  W1          examples/binary-classifier.json, the seeds' tiny model, 2 epochs
  W2          examples/fashion-mnist-mlp.json, 784-256-128-10 at batch 32, --epochs epochs
  W3          examples/fashion-mnist-grid.json, its 8 models, --epochs epochs
  W4          examples/fashion-mnist-keras-mlp.json, 784-512-512-10 with Dropout at batch 128
  tiny-sweep  examples/tiny-sweep.json, 32 tiny models
  tiny-512    its base with 8 learning rates x 64 seeds (written into DIR), 512 tiny models
Answers (multifit run --mode all --repeat R): the grid (--epochs epochs), the tiny sweep (40
epochs, so that a run is long enough to judge: 20 were not, under 0.1 s) and the 512 tiny models: the
document's answer, each mode's speedup over serial and samples/s (median, least and most); of
those among --workloads.

--multifit BIN (repeatable, NAME=BIN) compares builds: every measurement of every build is taken
in the same condition, one after another, so that the table's columns share their machine.

Writes DIR/table.md (the tables), DIR/measurements.json (every run's figures), DIR/machine.txt.
Exits 1 when a run failed (the others still run; its stderr is shown).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = {
    "W1": ("examples/binary-classifier.json", None),
    "W2": ("examples/fashion-mnist-mlp.json", "epochs"),
    "W3": ("examples/fashion-mnist-grid.json", "epochs"),
    "W4": ("examples/fashion-mnist-keras-mlp.json", "epochs"),
    "tiny-sweep": ("examples/tiny-sweep.json", None),
    "tiny-512": (None, None),
}
# The answers' workloads and their epochs (None: the spec's; "epochs": --epochs).
ANSWERED = {"W3": "epochs", "tiny-sweep": 40, "tiny-512": None}
BUSY = "while True: pass"


class Load:
    """`count` busy processes, one core each, for the duration of a with-block."""

    def __init__(self, count):
        self.count, self.procs = count, []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(self.count)]
        time.sleep(0.5 if self.count else 0)  # let them take their cores
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def tiny_512(out):
    sweep = json.loads((ROOT / "examples/tiny-sweep.json").read_text())
    sweep["name"] = "tiny-512"
    sweep["grid"] = {"learning_rate": [0.0003, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.03],
                     "seed": list(range(1, 65))}
    path = out / "tiny-512.json"
    path.write_text(json.dumps(sweep, indent=1))
    return path


def run(binary, args, failures):
    """The document of `binary run ARGS --json`, or None (its stderr shown, a failure recorded)."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = pathlib.Path(tmp) / "r.json"
        cmd = [binary, "run", *args, "--backend", "cpu", "--quiet", "--json", str(doc)]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0 or not doc.exists():
            failures.append(" ".join(cmd) + f": exit {done.returncode}")
            sys.stderr.write(done.stderr[-2000:])
            return None
        return json.loads(doc.read_text())


def median(values):
    return statistics.median(values) if values else None


def measure_workloads(builds, specs, threads_list, loads, reps, epochs, failures):
    rows = []
    for load in loads:
        with Load(load):
            for name, spec in specs.items():
                extra = ["--epochs", str(epochs)] if WORKLOADS[name][1] else []
                for threads in threads_list:
                    times = {b: [] for b in builds}
                    for _ in range(reps):  # interleaved: build A, build B, A, B...
                        for build, binary in builds.items():
                            doc = run(binary, [str(spec), "--mode", "serial", "--threads",
                                               str(threads), *extra], failures)
                            if doc and doc.get("train_s") is not None:
                                times[build].append(doc["train_s"])
                    for build in builds:
                        rows.append({"workload": name, "busy": load, "threads": threads,
                                     "build": build, "train_s": median(times[build]),
                                     "runs": times[build]})
                        print(f"busy {load} {name:10} threads {threads} {build:8} "
                              f"train_s {rows[-1]['train_s']}", flush=True)
    return rows


def measure_answers(builds, specs, repeat, loads, epochs, failures):
    rows = []
    for load in loads:
        with Load(load):
            for name, spec in specs.items():
                answer_epochs = epochs if ANSWERED[name] == "epochs" else ANSWERED[name]
                extra = ["--epochs", str(answer_epochs)] if answer_epochs else []
                for build, binary in builds.items():
                    doc = run(binary, [str(spec), "--mode", "all", "--repeat", str(repeat), *extra],
                              failures)
                    if not doc:
                        continue
                    speedups, rates = {}, {}
                    for r in doc["runs"]:
                        if r.get("samples_per_s") is not None:
                            rates.setdefault(r["mode"], []).append(r["samples_per_s"])
                        if r["mode"] != "serial" and r.get("speedup_vs_serial") is not None:
                            speedups.setdefault(r["mode"], []).append(r["speedup_vs_serial"])
                    spread = lambda v: [median(v), min(v), max(v)]
                    rows.append({"workload": name, "busy": load, "build": build,
                                 "answer": doc.get("answer"),
                                 "speedups": {m: spread(v) for m, v in speedups.items()},
                                 "samples_per_s": {m: spread(v) for m, v in rates.items()}})
                    print(f"busy {load} {name:10} {build:8} {doc.get('answer')}", flush=True)
    return rows


def table(rows, answers, builds, threads_list, loads):
    lines = ["# The cpu backend's threads, quiet and beside busy processes", "",
             "train_s of `multifit run SPEC --mode serial --backend cpu --threads T` (median of the",
             "interleaved runs); busy: processes running `while True: pass` beside it.", ""]
    head = "| workload | busy | " + " | ".join(
        f"{b} threads {t}" for b in builds for t in threads_list) + " |"
    lines += [head, "|" + " --- |" * (2 + len(builds) * len(threads_list))]
    keyed = {(r["workload"], r["busy"], r["build"], r["threads"]): r["train_s"] for r in rows}
    for name in dict.fromkeys(r["workload"] for r in rows):
        for load in loads:
            cells = []
            for b in builds:
                for t in threads_list:
                    v = keyed.get((name, load, b, t))
                    cells.append("-" if v is None else f"{v:.4g}")
            lines.append(f"| {name} | {load} | " + " | ".join(cells) + " |")
    if answers:
        lines += ["", "## The answer of `run --mode all --repeat R`", "",
                  "| workload | busy | build | answer | speedups (median [min-max]) | "
                  "samples/s (median) |", "| --- | --- | --- | --- | --- | --- |"]
        for a in answers:
            speed = "; ".join(f"{m} {v[0]:.2f} [{v[1]:.2f}-{v[2]:.2f}]"
                              for m, v in a["speedups"].items())
            rate = "; ".join(f"{m} {v[0]:.0f}" for m, v in a["samples_per_s"].items())
            lines.append(f"| {a['workload']} | {a['busy']} | {a['build']} | {a['answer']} | "
                         f"{speed} | {rate} |")
    return "\n".join(lines) + "\n"


def machine(builds):
    info = [time.strftime("%Y-%m-%d %H:%M"),
            subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()]
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            info.append(line.split(":", 1)[1].strip())
            break
    info.append(f"{os.cpu_count()} hardware threads, {len(os.sched_getaffinity(0))} usable")
    info += [f"{b}: {p}" for b, p in builds.items()]
    return "\n".join(info) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--multifit", action="append", default=[],
                        help="NAME=BIN, repeatable (default: now=build/bin/multifit)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--threads", default=f"1,{len(os.sched_getaffinity(0))}")
    parser.add_argument("--busy", default="0,1,2", help="busy processes beside each run")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="--repeat of the answers' runs")
    parser.add_argument("--no-answers", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    builds = dict(b.split("=", 1) for b in args.multifit) or {
        "now": str(ROOT / "build/bin/multifit")}
    specs = {}
    for name in args.workloads.split(","):
        if name not in WORKLOADS:
            parser.error(f"--workloads: no workload '{name}' (the workloads: {', '.join(WORKLOADS)})")
        specs[name] = WORKLOADS[name][0] or tiny_512(args.out)
    threads_list = [int(t) for t in args.threads.split(",")]
    loads = [int(b) for b in args.busy.split(",")]
    failures = []
    rows = measure_workloads(builds, specs, threads_list, loads, args.reps, args.epochs, failures)
    answered = {n: specs[n] for n in ANSWERED if n in specs}  # those of --workloads
    answers = [] if args.no_answers else measure_answers(builds, answered, args.repeat, loads,
                                                         args.epochs, failures)
    (args.out / "measurements.json").write_text(
        json.dumps({"workloads": rows, "answers": answers}, indent=1))
    (args.out / "table.md").write_text(table(rows, answers, builds, threads_list, loads))
    (args.out / "machine.txt").write_text(machine(builds))
    print((args.out / "table.md").read_text())
    if failures:
        print("failed:\n" + "\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
