#!/usr/bin/env python3
"""Summarizes a gpu-check or benchmark output directory: the GEMM as a fraction
of cuBLAS per shape, the training-step times, and the end-to-end epochs.

usage: benchmarks/summarize.py OUTDIR
"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def gemm_table(bench):
    """Time per call of our tiled products and cuBLAS's, by op and shape."""
    times = {}
    for b in bench.get("benchmarks", []):
        name = b["name"].replace("/manual_time", "")
        subject, _, rest = name.partition("/")
        times.setdefault(rest, {})[subject] = b["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3}[b["time_unit"]]
    lines = ["GEMM (our tiled kernels vs cuBLAS, time per call in us, fraction = cublas/tiled):"]
    for op, t in sorted(times.items()):
        if op.startswith("dense_") and "cuda_tiled" in t and "cuda_cublas" in t:
            lines.append(f"  {op:48s} tiled {t['cuda_tiled']:9.2f}  cublas {t['cuda_cublas']:9.2f}  "
                         f"fraction {t['cuda_cublas'] / t['cuda_tiled']:.2f}")
    lines.append("Other ops and training steps (us per call):")
    for op, t in sorted(times.items()):
        if not op.startswith("dense_") and "cuda_tiled" in t:
            lines.append(f"  {op:48s} {t['cuda_tiled']:9.2f}")
    return lines


def run_line(name, doc):
    m = doc["models"][0]
    epochs = m["epochs"]
    per_epoch = [e["seconds"] for e in epochs]
    return (f"  {name:20s} {m['status']:8s} epochs {len(epochs):2d}  mean epoch {sum(per_epoch) / max(len(per_epoch), 1):.3f}s"
            f"  min epoch {min(per_epoch, default=0):.3f}s  test_accuracy {m['test_accuracy']}")


def main(out):
    lines = []
    device = os.path.join(out, "device.txt")
    if os.path.exists(device):
        lines += open(device).read().splitlines()
    bench = load(os.path.join(out, "kernel_bench.json"))
    if bench:
        lines += gemm_table(bench)
    lines.append("End to end (multifit train):")
    for name in sorted(os.listdir(out)):
        doc = load(os.path.join(out, name)) if name.endswith(".json") else None
        if isinstance(doc, dict) and "models" in doc:
            lines.append(run_line(name[:-5], doc))
    tests = load(os.path.join(out, "gpu_tests.json"))
    if tests:
        lines.append(f"GPU tests: {tests['tests']} run, {tests['failures']} failed")
        for suite in tests["testsuites"]:
            for t in suite["testsuite"]:
                extra = {k: v for k, v in t.items() if k.endswith(("_accuracy", "_s"))}
                if extra or t.get("failures"):
                    lines.append(f"  {suite['name']}.{t['name']}: {'FAILED' if t.get('failures') else 'ok'} {extra}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
