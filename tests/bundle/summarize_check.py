#!/usr/bin/env python3
"""benchmarks/summarize.py on documents made here as the GPU check's steps leave them: a processes
run under an MPS daemon it started, with 50% SM shares and each worker's device memory; a streams run
on 4 SM partitions; a lab's folder (its verdict and a variant's document); a study of 10 models (their
range); a train document; and a trace that must not be read. Each line asserted is written out by
hand from the documents' numbers.

usage: tests/bundle/summarize_check.py"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 1048576


def model(name, slowdown, sms=None, sm_share=None, device=None):
    return {"name": name, "status": "ok", "slowdown": slowdown, "sms": sms, "sm_share": sm_share,
            "process_device_bytes": device, "epochs": [{"seconds": 0.5}], "test_accuracy": 0.9}


def run(mode, wall, models, mps=None, daemon=None, partitions=None, kind="concurrent", reason=None):
    return {"mode": mode, "wall_s": wall, "concurrency": len(models), "concurrency_reason": reason,
            "startup_s": 0.25, "speedup_vs_serial": 1.5, "overlap": {"fraction": 0.5, "kind": kind}, "mps": mps, "mps_daemon": daemon,
            "sm_partitions": partitions, "device_schedule": "blocking_sync", "models": models,
            "sweep": {"name": "tiny-sweep", "models": len(models)}}


def write(folder, name, doc):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        json.dump(doc, f)


def main():
    with tempfile.TemporaryDirectory() as out:
        write(out, "mps_on.json", run("processes", 1.5, [model("tiny-s1", 1.25, sm_share=50, device=512 * MIB),
                                                         model("tiny-s2", 2.0, sm_share=50, device=520 * MIB)],
                                      mps=True, daemon="started", reason="all 2 models fit: GPU memory 270"))
        write(out, "streams_partitions.json", run("streams", 0.75, [model("tiny-s1", 1.1, sms=32)], partitions=4))
        write(out, "study_tiny.json", {"mode": "all", "runs": [
            run("processes", 3.0, [model(f"m{i}", 1.0 + i / 10, device=(500 + i) * MIB) for i in range(10)],
                mps=False, kind="interleaved")]})
        write(out, "seed_model_cpu.json", {"models": [model("binary-classifier", None)], "sweep": None})
        with open(os.path.join(out, "study_tiny.trace.json"), "w") as f:
            f.write("{not JSON: a trace is not read")
        lab = os.path.join(out, "lab12")
        write(lab, "verdict.json", {"held": True, "line": "12: narrow 1.2x on its own SMs, 3.0x sharing them"})
        write(lab, "partitions.json", run("streams", 2.0, [model("wide", 1.0, sms=64), model("narrow", 1.2, sms=64)],
                                          partitions=2))
        write(os.path.join(out, "labs"), "index.html", {})
        write(os.path.join(out, "labs", "05-memory-cap"), "verdict.json", {"held": None, "line": "05: needs a GPU"})
        done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "summarize.py"), out],
                              capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"summarize check: summarize.py exited {done.returncode}: {done.stderr}")
    expected = [
        "  seed_model_cpu       ok       epochs  1  mean epoch 0.500s  min epoch 0.500s  test_accuracy 0.9",
        "  lab12/partitions: device_schedule blocking_sync",
        "    streams    wall 2.000s  start-up 0.250s  speedup 1.50x  overlap 50% concurrent  mps None  mps_daemon None"
        "  sm_partitions 2",
        "      narrow                   ok       slowdown  1.20x  sms 64  sm_share -  process_device -",
        "  mps_on: device_schedule blocking_sync",
        "    processes  wall 1.500s  start-up 0.250s  speedup 1.50x  overlap 50% concurrent  mps True"
        "  mps_daemon started  sm_partitions None",
        "      concurrency 2: all 2 models fit: GPU memory 270",
        "      tiny-s1                  ok       slowdown  1.25x  sms -  sm_share 50  process_device 512MiB",
        "      tiny-s2                  ok       slowdown  2.00x  sms -  sm_share 50  process_device 520MiB",
        "      tiny-s1                  ok       slowdown  1.10x  sms 32  sm_share -  process_device -",
        "    processes  wall 3.000s  start-up 0.250s  speedup 1.50x  overlap 50% interleaved  mps False"
        "  mps_daemon None  sm_partitions None",
        "      10 models: slowdown 1.00x to 1.90x, mean 1.45x; process_device 500MiB to 509MiB",
        "Labs:",
        "  lab12: held: 12: narrow 1.2x on its own SMs, 3.0x sharing them",
        "  labs/05-memory-cap: skipped: 05: needs a GPU",
    ]
    lines = done.stdout.splitlines()
    missing = [line for line in expected if line not in lines]
    if missing:
        sys.exit("summarize check: lines missing:\n" + "\n".join(missing) + "\nin:\n" + done.stdout)
    # The train document is no study, and a study no train run.
    if any(line.startswith("  mps_on ") or line.startswith("  seed_model_cpu:") for line in lines):
        sys.exit("summarize check: a train document read as a study or the reverse:\n" + done.stdout)
    print("summarize check: passed")


main()
