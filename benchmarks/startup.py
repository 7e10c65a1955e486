#!/usr/bin/env python3
"""Start-up cost of the multifit binary: wall time and peak resident memory of
`multifit --help` and of a 2-epoch run of the seeds' tiny model (Dense(64) ->
Dense(1), 1024x20 synthetic rows) on the CPU backend, each the median of many
runs; and that run again under a 1 GB address-space limit (ulimit -v), which
must finish or fail clearly within a second.

Targets (issue: libraries loaded only when used): under 20 ms wall and 30 MiB
peak RSS for both commands on the 2-core development machine.

And a sweep's fixed cost: examples/tiny-sweep.json (32 tiny models, 2 epochs) run
in each mode, the medians of the process's wall, the document's wall_s, the
difference (the process's fixed cost outside wall_s: loading, reading the sweep,
choosing the concurrency, writing the document) and each model's start-up
(build and warm-up: the document's startup_s over the models; in serial mode
also its release and test evaluation, the wall less the models' training).
Targets (issue 32): at most 0.3 ms a model, at most 10 ms outside wall_s.

usage: benchmarks/startup.py [--multifit BIN] [--runs N] [--json OUT]
"""
import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WALL_TARGET_MS, RSS_TARGET_MIB = 20.0, 30.0
MODEL_TARGET_MS, OUTSIDE_TARGET_MS = 0.3, 10.0
GNU_TIME = "/usr/bin/time"  # Debian's package time


def run_once(argv, address_space=None):
    """(wall seconds, peak RSS in MiB, exit code) of one run. The peak RSS is GNU time's (%M): a child
    of this interpreter would count the interpreter's pages it was forked with, a child of the small
    `time` program counts almost only its own. A limit is set by sh's ulimit (KiB) before the exec; a
    run still going after 10 s is killed and counted as exit code 124."""
    if address_space:
        argv = ["sh", "-c", f'ulimit -v {address_space // 1024}; exec "$@"', "sh"] + argv
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        child = subprocess.Popen([GNU_TIME, "-q", "-f", "%M", "-o", report.name] + argv, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            code = child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)  # time and what it runs
            child.wait()
            return 10.0, float("nan"), 124
        wall = time.perf_counter() - start
        return wall, int(report.read().split()[-1]) / 1024.0, code


def measure(name, argv, runs, address_space=None):
    samples = [run_once(argv, address_space) for _ in range(runs)]
    walls = [s[0] * 1e3 for s in samples]
    return {
        "name": name,
        "command": "multifit " + " ".join(argv[1:]).replace(ROOT + os.sep, ""),  # the repository's paths, relative
        "runs": runs,
        "address_space_limit_bytes": address_space,
        "exit_codes": sorted({s[2] for s in samples}),
        "wall_ms_median": statistics.median(walls),
        "wall_ms_max": max(walls),
        "peak_rss_mib_max": max((s[1] for s in samples if not math.isnan(s[1])), default=None),
    }


def measure_sweep(binary, mode, runs):
    """Medians over `runs` runs of tiny-sweep.json in `mode`: the process's wall, the document's, the
    difference, and per model the start-up (and in serial, everything but training)."""
    sweep = os.path.join(ROOT, "examples", "tiny-sweep.json")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "run.json")
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([binary, "run", sweep, "--backend", "cpu", "--quiet", "--mode", mode, "--json", out],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            process = time.perf_counter() - start
            doc = json.load(open(out))
            models = doc["models"]
            startup = doc["startup_s"] / len(models)  # the phases' start-up, however many models each had
            untrained = (doc["wall_s"] - sum(m["train_s"] for m in models)) / len(models)
            rows.append((process, doc["wall_s"], process - doc["wall_s"], startup, untrained))
    ms = lambda k: statistics.median(r[k] for r in rows) * 1e3
    return {"name": f"tiny_sweep_{mode}", "mode": mode, "models": len(models), "runs": runs,
            "probe": "no probe" not in doc["concurrency_reason"] and mode != "serial",
            "process_ms_median": ms(0), "wall_ms_median": ms(1), "outside_wall_ms_median": ms(2),
            "startup_ms_per_model_median": ms(3),
            "not_training_ms_per_model_median": ms(4) if mode == "serial" else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--multifit", default=os.path.join(ROOT, "build", "bin", "multifit"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", help="write the measurements here")
    args = parser.parse_args()
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"startup.py: {GNU_TIME} not found; install the Debian package time")
    tiny = [args.multifit, "train", os.path.join(ROOT, "examples", "binary-classifier.json"),
            "--backend", "cpu", "--quiet"]
    results = [
        measure("help", [args.multifit, "--help"], args.runs),
        measure("tiny_cpu_2_epochs", tiny, args.runs),
        measure("tiny_cpu_2_epochs_ulimit_1GB", tiny, 5, address_space=1_000_000 * 1024),
    ]
    print(f"{'run':32s}{'exit':>6s}{'median ms':>11s}{'max ms':>9s}{'peak RSS MiB':>14s}")
    for r in results:
        codes = ",".join(map(str, r["exit_codes"]))
        rss = f"{r['peak_rss_mib_max']:14.1f}" if r["peak_rss_mib_max"] is not None else f"{'-':>14s}"
        print(f"{r['name']:32s}{codes:>6s}{r['wall_ms_median']:11.1f}{r['wall_ms_max']:9.1f}{rss}")
    met = all(r["exit_codes"] == [0] and r["wall_ms_median"] < WALL_TARGET_MS and r["peak_rss_mib_max"] < RSS_TARGET_MIB
              for r in results[:2])
    limited = results[2]["exit_codes"] == [0] and results[2]["wall_ms_max"] < 1000
    print(f"targets (median under {WALL_TARGET_MS:.0f} ms, peak under {RSS_TARGET_MIB:.0f} MiB): {'met' if met else 'MISSED'}; "
          f"under ulimit -v 1000000 within 1 s: {'yes' if limited else 'NO'}")
    sweeps = [measure_sweep(args.multifit, mode, args.runs) for mode in ("serial", "streams", "packed", "processes")]
    print(f"\n{'sweep':24s}{'process ms':>11s}{'wall_s ms':>10s}{'outside ms':>11s}{'start-up ms/model':>19s}"
          f"{'not training ms/model':>23s}  probe")
    for r in sweeps:
        rest = r["not_training_ms_per_model_median"]
        print(f"{r['name']:24s}{r['process_ms_median']:11.1f}{r['wall_ms_median']:10.1f}{r['outside_wall_ms_median']:11.1f}"
              f"{r['startup_ms_per_model_median']:19.3f}{(f'{rest:.3f}' if rest is not None else '-'):>23s}  "
              f"{'yes' if r['probe'] else 'no'}")
    sweep_met = all(r["outside_wall_ms_median"] <= OUTSIDE_TARGET_MS and r["startup_ms_per_model_median"] <= MODEL_TARGET_MS
                    for r in sweeps if r["mode"] != "processes")
    print(f"sweep targets (in one process: start-up at most {MODEL_TARGET_MS} ms a model, at most "
          f"{OUTSIDE_TARGET_MS:.0f} ms outside wall_s): {'met' if sweep_met else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"targets": {"wall_ms": WALL_TARGET_MS, "peak_rss_mib": RSS_TARGET_MIB,
                                   "model_ms": MODEL_TARGET_MS, "outside_wall_ms": OUTSIDE_TARGET_MS},
                       "met": met, "ulimit_1GB_within_1s": limited, "sweep_met": sweep_met,
                       "results": results, "sweeps": sweeps}, f, indent=2)


if __name__ == "__main__":
    main()
