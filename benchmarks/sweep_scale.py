#!/usr/bin/env python3
"""Sweeps at scale: how many tiny models each mode trains, in what wall time, with what peak
memory and how many threads.

For each count N (a multiple of 8) it writes a grid of examples/tiny-sweep.json's model, 8 learning
rates by N/8 seeds (Dense(64, relu) -> Dense(1, sigmoid) on synthetic:teacher, 1024 rows of which a
quarter are validation rows, batch 64, 2 epochs; the records of 2026-12-01 were made when it trained on
synthetic:binary's 1024 rows, none held out), and runs `multifit run SWEEP --mode M --quiet --json ...` once per mode. While it runs, it
samples every 0.2 s the runner and its worker processes (processes mode) from /proc: the most host
threads at once, the most resident memory at once, summed over the runner and its workers, the most
workers at once, and the most any one worker held (its VmHWM); and the runner's own peak (its
VmHWM, from wait4), which a sample can miss. The issue's targets: every model ok,
the threads bounded, and in processes mode the workers never holding half the machine's memory.

Writes into DIR:
  scale.csv      one row per (tag, mode, models), appended to: wall_s (around the command), the run's wall_s,
                 startup_s and train_s, models_ok, concurrency and its reason, training_threads,
                 runner_peak_rss_bytes, and sampled: peak_threads, peak_rss_bytes, peak_workers and
                 worker_peak_rss_bytes,
                 machine_memory_bytes, exit code
  runs/[TAG-]MODE-N.json   every run's result document without its models (a 65,536-model document is
                 over 200 MB), with the count of models per status in their place
  machine.txt    date, commit, CPU, cores, memory, `multifit info`

usage: benchmarks/sweep_scale.py --out DIR [--binary PATH] [--backend cpu] [--modes streams,packed,processes]
                                 [--counts 4096,65536] [--processes-counts 4096] [--tag NAME] [-- RUN ARGS]
RUN ARGS go to every `multifit run` (e.g. `-- --concurrency 1199`); --tag names the rows and files.
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
COLUMNS = ["tag", "mode", "models", "backend", "exit_code", "wall_s", "run_wall_s", "startup_s", "train_s", "models_ok",
           "concurrency", "concurrency_reason", "training_threads", "runner_peak_rss_bytes", "peak_threads", "peak_rss_bytes",
           "peak_workers", "worker_peak_rss_bytes", "machine_memory_bytes"]
LEARNING_RATES = [0.001 * (i + 1) for i in range(8)]


def tiny_grid(models):
    sweep = json.load(open(os.path.join(ROOT, "examples", "tiny-sweep.json")))
    sweep["name"] = f"tiny-{models}"
    sweep["grid"] = {"learning_rate": LEARNING_RATES, "seed": list(range(1, models // 8 + 1))}
    return sweep


def process_tree(root):
    """The pids of `root` and of every process below it, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def status_fields(pid):
    """(threads, resident bytes, peak resident bytes) of one process, or zeros once it is gone."""
    threads = rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    threads = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return threads, rss, hwm


def machine_memory():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def run_one(binary, backend, mode, models, out_dir, tag, run_args):
    with tempfile.TemporaryDirectory() as tmp:
        sweep_path = os.path.join(tmp, "sweep.json")
        json.dump(tiny_grid(models), open(sweep_path, "w"))
        doc_path = os.path.join(tmp, "r.json")
        command = [binary, "run", sweep_path, "--mode", mode, "--backend", backend, "--quiet", "--json", doc_path] + run_args
        start = time.monotonic()
        err_path = os.path.join(tmp, "stderr")
        with open(err_path, "w") as err:  # a file, not a pipe: a pipe left unread would block the run
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        peak_threads = peak_rss = peak_workers = worker_peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            tree = process_tree(proc.pid)
            sampled = [status_fields(pid) for pid in tree]
            peak_threads = max(peak_threads, sum(t for t, _, _ in sampled))
            peak_rss = max(peak_rss, sum(r for _, r, _ in sampled))
            peak_workers = max(peak_workers, len(tree) - 1)
            worker_peak = max([worker_peak] + [h for _, _, h in sampled[1:]])
            time.sleep(0.2)
        wall = time.monotonic() - start
        stderr = open(err_path).read()
        exit_code = os.waitstatus_to_exitcode(status)
        try:
            doc = json.load(open(doc_path))
        except (OSError, ValueError):
            doc = None
    row = {"tag": tag, "mode": mode, "models": models, "backend": backend, "exit_code": exit_code, "wall_s": round(wall, 3),
           "runner_peak_rss_bytes": usage.ru_maxrss * 1024, "peak_threads": peak_threads, "peak_rss_bytes": peak_rss,
           "peak_workers": peak_workers,
           "worker_peak_rss_bytes": worker_peak, "machine_memory_bytes": machine_memory()}
    if doc is None:
        print(f"{mode} {models}: no document (exit {exit_code}):\n{stderr[-2000:]}", file=sys.stderr)
        return row
    row.update({"run_wall_s": doc.get("wall_s"), "startup_s": doc.get("startup_s"), "train_s": doc.get("train_s"),
                "models_ok": sum(m["status"] == "ok" for m in doc["models"]), "concurrency": doc.get("concurrency"),
                "concurrency_reason": doc.get("concurrency_reason"), "training_threads": doc.get("training_threads")})
    statuses = {}
    for m in doc.pop("models"):
        statuses[m["status"]] = statuses.get(m["status"], 0) + 1
    doc["model_statuses"] = statuses
    json.dump(doc, open(os.path.join(out_dir, "runs", f"{tag}{mode}-{models}.json"), "w"), indent=2)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "multifit"))
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--modes", default="streams,packed,processes")
    parser.add_argument("--counts", default="4096,65536", help="models per run of the in-process modes")
    parser.add_argument("--processes-counts", default="4096", help="models per run of processes mode")
    parser.add_argument("--tag", default="", help="a prefix for the rows and the files of this invocation")
    parser.add_argument("run_args", nargs="*", help="after --: more arguments of every multifit run")
    args = parser.parse_args()
    tag = args.tag + "-" if args.tag else ""
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    info = subprocess.run([args.binary, "info"], capture_output=True, text=True).stdout
    with open(os.path.join(args.out, "machine.txt"), "w") as f:
        f.write(f"date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}\n"
                f"commit: {commit.strip()}\ncpu: {platform.processor() or platform.machine()}, {os.cpu_count()} cores\n"
                f"memory: {machine_memory()} bytes\n\n{info}")
    rows = []
    for mode in args.modes.split(","):
        counts = args.processes_counts if mode == "processes" else args.counts
        for models in (int(n) for n in counts.split(",")):
            row = run_one(args.binary, args.backend, mode, models, args.out, tag, args.run_args)
            print(json.dumps(row), flush=True)
            rows.append(row)
    table = os.path.join(args.out, "scale.csv")
    new = not os.path.exists(table)
    with open(table, "a", newline="") as f:  # invocations with other tags add their rows
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
