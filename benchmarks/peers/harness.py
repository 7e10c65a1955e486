#!/usr/bin/env python3
"""multifit side by side with Keras and PyTorch on the same machine, in one invocation.

Workloads (benchmarks/peers/workloads.py):
  W1 step     seconds per training step of the tiny model, steady state (after a warm-up epoch)
  W1 process  the whole process as a user runs it: interpreter or binary start, imports, 2 epochs
  W2 epoch    seconds per epoch of the Fashion-MNIST MLP at batch 32 and 128 (median of epochs 2..E)
  W2 accuracy test accuracy after 10 epochs at batch 32 (once per framework)
  W4 epoch    seconds per epoch of Keras's MLP (Dropout, RMSprop, batch 128, validation rows, EarlyStopping),
              the median of epochs 2..3
  W3 sweep    the Fashion-MNIST grid (8 MLPs), 1 epoch each, the ways users run it: multifit run in
              its best mode on this machine; Keras and PyTorch as a serial loop in one process, as one
              process per model (all at once), and for PyTorch torch.func vmap by shape
The ways are run alternately (A, B, C, A, B, C, ...), --reps times; the table gives each median with
its min and max, and each peer's ratio to multifit (how many times slower it is; in W2, to multifit
on its default threads). Peers run once with one thread and once with their defaults, and so does
multifit in W2 (--threads 1, and its default: the cores it may use). Start-up
(imports, context) is reported apart from training where the task measures training.

usage: benchmarks/peers/harness.py --out DIR [--python .venv-peers/bin/python] [--multifit build/bin/multifit]
                                   [--reps 3] [--only w1,w2,w3,w4] [--device cpu|cuda]
Writes DIR/peers.json (every measurement, and the machine: CPU, cores, memory, load averages,
versions, commit, date) and DIR/summary.md (the table).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, env=None):
    """(seconds of the whole process, its stdout); a failure stops the harness with its stderr."""
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"harness: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return seconds, p.stdout


def last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


class Harness:
    def __init__(self, a):
        self.a, self.results = a, []  # results: {"workload", "way", "value", "unit", ...}
        self.versions = {}
        # A peer that cannot be imported here (Keras on a GPU machine, say) is left out and said so.
        self.peers = [(script, name) for script, name, module in
                      (("keras_peer.py", "keras", "keras"), ("torch_peer.py", "torch", "torch"))
                      if subprocess.run([a.python, "-c", f"import {module}"], capture_output=True).returncode == 0]
        self.absent = [name for name in ("keras", "torch") if name not in (n for _, n in self.peers)]

    def peer(self, script, task, threads, *extra):
        seconds, out = run([self.a.python, script, task, "--threads", threads, *extra] +
                           (["--device", self.a.device] if script == "torch_peer.py" else []))
        result = last_json(out)
        self.versions[result["peer"]] = {k: result[k] for k in ("keras", "tensorflow", "torch") if k in result}
        return seconds, result

    def multifit(self, *args):
        return run([self.a.multifit, *args])

    def record(self, workload, way, value, **extra):
        self.results.append({"workload": workload, "way": way, "value": value, **extra})
        print(f"  {workload:14s} {way:34s} {value:12.6g}", flush=True)

    def alternate(self, ways):
        """Runs the ways (name, function) alternately, --reps times."""
        for _ in range(self.a.reps):
            for way, measure in ways:
                measure(way)

    # ---- W1 ----------------------------------------------------------------------------------------
    def w1(self):
        spec = os.path.join(ROOT, "examples", "binary-classifier.json")

        def multifit_step(way):
            with tempfile.NamedTemporaryFile(suffix=".json") as doc:
                self.multifit("train", spec, "--backend", self.a.backend, "--epochs", "50", "--quiet", "--json", doc.name)
                epochs = json.load(open(doc.name))["models"][0]["epochs"][1:]
            self.record("W1 step", way, statistics.median(e["seconds"] for e in epochs) / 16, unit="s")

        def peer_step(script, threads):
            return lambda way: self.record("W1 step", way, self.peer(script, "w1-step", threads, "--epochs", "20")[1]["step_s"], unit="s")

        ways = [("multifit", multifit_step)]
        for script, name in self.peers:
            for threads in ("1", "default"):
                ways.append((f"{name} ({threads} thread{'s' if threads != '1' else ''})", peer_step(script, threads)))
        self.alternate(ways)

        def process(way, cmd):
            self.record("W1 process", way, run(cmd)[0], unit="s")

        ways = [("multifit", lambda w: process(w, [self.a.multifit, "train", spec, "--backend", self.a.backend, "--quiet"]))]
        for script, name in self.peers:
            ways.append((name, lambda w, s=script: process(w, [self.a.python, s, "w1-process"])))
        self.alternate(ways)

    # ---- W2 ----------------------------------------------------------------------------------------
    def w2(self):
        spec = os.path.join(ROOT, "examples", "fashion-mnist-mlp.json")
        epochs = 3
        for batch in (32, 128):
            workload = f"W2 epoch b{batch}"

            def multifit_epoch(*threads, batch=batch, workload=workload):
                def measure(way):
                    with tempfile.NamedTemporaryFile(suffix=".json") as doc:
                        self.multifit("train", spec, "--backend", self.a.backend, "--epochs", str(epochs),
                                      "--batch-size", str(batch), *threads, "--quiet", "--json", doc.name)
                        seconds = [e["seconds"] for e in json.load(open(doc.name))["models"][0]["epochs"][1:]]
                    self.record(workload, way, statistics.median(seconds), unit="s")
                return measure

            def peer_epoch(script, threads, batch=batch, workload=workload):
                def measure(way):
                    result = self.peer(script, "w2", threads, "--batch", str(batch), "--epochs", str(epochs))[1]
                    self.record(workload, way, statistics.median(result["epoch_s"][1:]), unit="s")
                return measure

            ways = [("multifit (default threads)", multifit_epoch()),
                    ("multifit (1 thread)", multifit_epoch("--threads", "1"))]
            for script, name in self.peers:
                for threads in ("1", "default"):
                    ways.append((f"{name} ({threads} thread{'s' if threads != '1' else ''})", peer_epoch(script, threads)))
            self.alternate(ways)
        # The accuracy after 10 epochs at batch 32, once each (the same seed gives the same numbers).
        with tempfile.NamedTemporaryFile(suffix=".json") as doc:
            self.multifit("train", spec, "--backend", self.a.backend, "--quiet", "--json", doc.name)
            self.record("W2 accuracy", "multifit", json.load(open(doc.name))["models"][0]["test_accuracy"], unit="")
        for script, name in self.peers:
            self.record("W2 accuracy", name, self.peer(script, "w2", "default", "--epochs", "10")[1]["test_accuracy"], unit="")

    # ---- W4 ----------------------------------------------------------------------------------------
    def w4(self):
        spec = os.path.join(ROOT, "examples", "fashion-mnist-keras-mlp.json")
        epochs = 3

        def multifit_epoch(*threads):
            def measure(way):
                with tempfile.NamedTemporaryFile(suffix=".json") as doc:
                    self.multifit("train", spec, "--backend", self.a.backend, "--epochs", str(epochs), *threads,
                                  "--quiet", "--json", doc.name)
                    seconds = [e["seconds"] for e in json.load(open(doc.name))["models"][0]["epochs"][1:]]
                self.record("W4 epoch b128", way, statistics.median(seconds), unit="s")
            return measure

        def peer_epoch(script, threads):
            def measure(way):
                result = self.peer(script, "w4", threads, "--epochs", str(epochs))[1]
                self.record("W4 epoch b128", way, statistics.median(result["epoch_s"][1:]), unit="s")
            return measure

        ways = [("multifit (default threads)", multifit_epoch()), ("multifit (1 thread)", multifit_epoch("--threads", "1"))]
        for script, name in self.peers:
            for threads in ("1", "default"):
                ways.append((f"{name} ({threads} thread{'s' if threads != '1' else ''})", peer_epoch(script, threads)))
        self.alternate(ways)

    # ---- W3 ----------------------------------------------------------------------------------------
    def w3(self):
        grid = os.path.join(ROOT, "examples", "fashion-mnist-grid.json")
        models = 8

        def multifit_sweep(way):
            seconds, _ = self.multifit("run", grid, "--mode", self.a.w3_mode, "--backend", self.a.backend,
                                       "--epochs", "1", "--quiet")
            self.record("W3 sweep", way, seconds, unit="s")

        def serial(script, threads):
            return lambda way: self.record("W3 sweep", way, self.peer(script, "w3-serial", threads, "--epochs", "1")[0], unit="s")

        def processes(script, threads):
            def measure(way):
                start = time.perf_counter()
                extra = ["--device", self.a.device] if script == "torch_peer.py" else []
                children = [subprocess.Popen([self.a.python, script, "w3-one", "--model", str(i), "--threads", threads,
                                              "--epochs", "1", *extra], cwd=HERE, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL) for i in range(models)]
                if any(c.wait() != 0 for c in children):
                    sys.exit(f"harness: a {script} w3-one process failed")
                self.record("W3 sweep", way, time.perf_counter() - start, unit="s")
            return measure

        def vmapped(threads):
            return lambda way: self.record("W3 sweep", way, self.peer("torch_peer.py", "w3-vmap", threads, "--epochs", "1")[0], unit="s")

        ways = [(f"multifit run --mode {self.a.w3_mode}", multifit_sweep)]
        for threads in ("1", "default"):
            t = f"{threads} thread{'s' if threads != '1' else ''}"
            for script, name in self.peers:
                ways += [(f"{name} serial loop ({t})", serial(script, threads)),
                         (f"{name} process per model ({t})", processes(script, threads))]
                if name == "torch":
                    ways.append((f"torch vmap ({t})", vmapped(threads)))
        self.alternate(ways)

    # ---- the table ---------------------------------------------------------------------------------
    def summary(self):
        lines = []
        for workload in dict.fromkeys(r["workload"] for r in self.results):
            rows = [r for r in self.results if r["workload"] == workload]
            by_way = {}
            for r in rows:
                by_way.setdefault(r["way"], []).append(r["value"])
            reference = next(w for w in by_way if w.startswith("multifit"))  # the first multifit way
            ours = statistics.median(by_way[reference])
            accuracy = workload.endswith("accuracy")
            lines += [f"\n### {workload}\n", "| way | median | min | max | vs multifit |", "| --- | --- | --- | --- | --- |"]
            for way, values in by_way.items():
                m = statistics.median(values)
                ratio = f"{m - ours:+.4f}" if accuracy else f"{m / ours:.2f}x slower" if m >= ours else f"{ours / m:.2f}x faster"
                fmt = (lambda v: f"{v:.4f}") if accuracy else fmt_seconds
                lines.append(f"| {way} | {fmt(m)} | {fmt(min(values))} | {fmt(max(values))} | "
                             f"{'-' if way == reference else ratio} |")
        return "\n".join(lines) + "\n"


def fmt_seconds(s):
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    memory = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": commit,
            "cpu": cpu, "cores": os.cpu_count(), "memory_kib": int(memory) if memory.isdigit() else memory,
            "python": platform.python_version()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--python", default=os.path.join(ROOT, ".venv-peers", "bin", "python"))
    p.add_argument("--multifit", default=os.path.join(ROOT, "build", "bin", "multifit"))
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--only", default="w1,w2,w3")
    p.add_argument("--device", default="cpu", help="cpu, or cuda: multifit's backend and PyTorch's device")
    p.add_argument("--w3-mode", default="streams", help="multifit's mode for W3 (its best on this machine)")
    a = p.parse_args()
    a.backend = "cuda" if a.device == "cuda" else "cpu"
    a.python, a.multifit = os.path.abspath(a.python), os.path.abspath(a.multifit)
    os.makedirs(a.out, exist_ok=True)
    h = Harness(a)
    about = machine()
    about["load_before"] = os.getloadavg()
    for w in a.only.split(","):
        print(f"{w}:", flush=True)
        getattr(h, w)()
    about["load_after"] = os.getloadavg()
    about["versions"], about["absent_peers"] = h.versions, h.absent
    about["multifit_info"] = subprocess.run([a.multifit, "info"], capture_output=True, text=True).stdout
    about["reps"], about["device"] = a.reps, a.device
    json.dump({"machine": about, "results": h.results}, open(os.path.join(a.out, "peers.json"), "w"), indent=1)
    head = (f"Machine: {about['cpu']}, {about['cores']} cores; commit {about['commit']}, {about['date']}; "
            f"load average {about['load_before'][0]:.2f} before, {about['load_after'][0]:.2f} after; "
            f"{a.reps} repetitions, alternated; versions {json.dumps(h.versions)}"
            f"{'; not installed here: ' + ', '.join(h.absent) if h.absent else ''}.\n")
    table = head + h.summary()
    open(os.path.join(a.out, "summary.md"), "w").write(table)
    print(table)


if __name__ == "__main__":
    main()
