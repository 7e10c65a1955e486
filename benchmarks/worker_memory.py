#!/usr/bin/env python3
"""The default concurrency of processes mode at scale: a sweep of MODELS tiny models
(examples/tiny-sweep.json's model, 8 learning rates by MODELS/8 seeds) run with
`--mode processes` and no --concurrency, its workers' resident memory (VmRSS of
every child of the run, summed) sampled every 0.2 s. Prints and writes the wall,
the concurrency chosen and why, the sampled peak of the workers together, the
most workers at once, and the most any worker held (its VmHWM) times the
concurrency: what the phases could hold at most. Target (the issue): the
workers never hold more than half the machine's memory.

usage: benchmarks/worker_memory.py [--multifit BIN] [--models N] [--json OUT] [-- EXTRA RUN ARGS]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEARNING_RATES = [0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.03, 0.05]


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(ppid):
    """The pids whose parent is ppid (field 4 of /proc/PID/stat, after the command's parentheses)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
            if int(text[text.rindex(")") + 2:].split()[1]) == ppid:
                found.append(int(entry))
        except (OSError, ValueError):
            pass
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--multifit", default=os.path.join(ROOT, "build", "bin", "multifit"))
    parser.add_argument("--models", type=int, default=4096, help="a multiple of 8")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("extra", nargs="*", help="more arguments for multifit run (after --)")
    args = parser.parse_args()
    with open(os.path.join(ROOT, "examples", "tiny-sweep.json")) as f:
        sweep = json.load(f)
    sweep["name"] = f"tiny-{args.models}"
    sweep["grid"] = {"learning_rate": LEARNING_RATES, "seed": list(range(1, args.models // 8 + 1))}
    with tempfile.TemporaryDirectory() as tmp:
        sweep_path, doc_path = os.path.join(tmp, "sweep.json"), os.path.join(tmp, "r.json")
        with open(sweep_path, "w") as f:
            json.dump(sweep, f)
        command = [args.multifit, "run", sweep_path, "--mode", "processes", "--backend", "cpu", "--quiet",
                   "--json", doc_path] + args.extra
        start = time.time()
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        peak_kib = most = 0
        while run.poll() is None:
            workers = children(run.pid)
            peak_kib = max(peak_kib, sum(rss_kib(w) for w in workers))
            most = max(most, len(workers))
            time.sleep(0.2)
        wall = time.time() - start
        with open(doc_path) as f:
            doc = json.load(f)
    with open("/proc/meminfo") as f:
        total_kib = int(next(line for line in f if line.startswith("MemTotal:")).split()[1])
    worker_peak = max(m["memory"]["process_peak_rss_bytes"] or 0 for m in doc["models"])
    result = {
        "models": args.models, "exit_code": run.returncode, "wall_s": round(wall, 2), "run_wall_s": doc["wall_s"],
        "concurrency": doc["concurrency"], "concurrency_reason": doc["concurrency_reason"],
        "ok": sum(m["status"] == "ok" for m in doc["models"]),
        "workers_sampled_peak_bytes": peak_kib * 1024, "most_workers_at_once": most,
        "worker_peak_bytes": worker_peak, "concurrency_times_worker_peak_bytes": doc["concurrency"] * worker_peak,
        "half_the_machine_bytes": total_kib * 1024 // 2,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0 if result["ok"] == args.models and result["concurrency_times_worker_peak_bytes"] <= result["half_the_machine_bytes"] else 1


if __name__ == "__main__":
    sys.exit(main())
