#!/usr/bin/env python3
"""Summarizes a gpu-check or benchmark output directory: every op's time per
call by backend, our GEMM as a fraction of cuBLAS, and the end-to-end runs.

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


def op_times(bench):
    """{op: {subject: time per call in us}} and the subjects in the order they ran."""
    times, subjects = {}, []
    for b in bench.get("benchmarks", []):
        name = b["name"].replace("/manual_time", "")
        subject, _, op = name.partition("/")
        if subject not in subjects:
            subjects.append(subject)
        times.setdefault(op, {})[subject] = b["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3}[b["time_unit"]]
    return times, subjects


def op_table(times, subjects):
    """Time per call (us) of every op, a column per subject (cpu, cuda_tiled, cuda_cublas, ...)."""
    lines = ["time per call, us:", "  " + f"{'op':52s}" + "".join(f"{s:>13s}" for s in subjects)]
    for op, t in sorted(times.items()):
        lines.append("  " + f"{op:52s}" + "".join(f"{t[s]:13.2f}" if s in t else f"{'-':>13s}" for s in subjects))
    return lines


def cublas_fractions(times):
    """Our GEMM as a fraction of cuBLAS (cuBLAS time / our time; 1.0 is parity) per shape, twice:
    the plain product (our tiled kernel alone against cublasSgemm alone) and the whole forward
    layer (ours fused with bias and activation against cublasSgemm plus our epilogue kernel)."""
    shapes = sorted({op.partition("/")[2] for op in times if op.startswith(("gemm/", "dense_forward/"))})
    lines = ["our GEMM as a fraction of cuBLAS (cuBLAS time / ours):",
             f"  {'shape':28s}{'plain product':>15s}{'fused layer':>13s}"]
    for shape in shapes:
        cells = []
        for op in ("gemm", "dense_forward"):
            t = times.get(f"{op}/{shape}", {})
            both = "cuda_tiled" in t and "cuda_cublas" in t
            cells.append(f"{t['cuda_cublas'] / t['cuda_tiled']:.2f}" if both else "-")
        lines.append(f"  {shape:28s}{cells[0]:>15s}{cells[1]:>13s}")
    return lines if any("cuda_cublas" in t for t in times.values()) else []


def run_line(name, doc):
    m = doc["models"][0]
    epochs = m["epochs"]
    per_epoch = [e["seconds"] for e in epochs]
    return (f"  {name:20s} {m['status']:8s} epochs {len(epochs):2d}  mean epoch {sum(per_epoch) / max(len(per_epoch), 1):.3f}s"
            f"  min epoch {min(per_epoch, default=0):.3f}s  test_accuracy {m['test_accuracy']}")


def study_lines(name, doc):
    """One line per mode of a `multifit run` document: its wall, speedup and overlap, with the
    overlap's kind (interleaved: GPU processes without MPS) and how its threads waited."""
    lines = [f"  {name}: mps {doc['runs'][0].get('mps')}, device_schedule {doc['runs'][0].get('device_schedule')}"]
    for run in doc["runs"]:
        overlap = run.get("overlap") or {}
        fraction = overlap.get("fraction")
        lines.append(f"    {run['mode']:10s} wall {run['wall_s']:.3f}s  start-up {run.get('startup_s') or 0:.3f}s"
                     f"  speedup {run.get('speedup_vs_serial') or 0:.2f}x"
                     f"  overlap {'-' if fraction is None else f'{fraction:.0%}'} {overlap.get('kind') or ''}")
    return lines


def main(out):
    lines = []
    for about in ("device.txt", "machine.txt"):
        if os.path.exists(os.path.join(out, about)):
            lines += open(os.path.join(out, about)).read().splitlines()
    bench = load(os.path.join(out, "kernel_bench.json"))
    if bench:
        times, subjects = op_times(bench)
        lines += op_table(times, subjects) + cublas_fractions(times)
    lines.append("End to end (multifit train):")
    for name in sorted(os.listdir(out)):
        doc = load(os.path.join(out, name)) if name.endswith(".json") else None
        if isinstance(doc, dict) and "models" in doc:
            lines.append(run_line(name[:-5], doc))
    lines.append("Studies (multifit run):")
    for name in sorted(os.listdir(out)):
        doc = load(os.path.join(out, name)) if name.endswith(".json") else None
        if isinstance(doc, dict) and doc.get("runs"):
            lines += study_lines(name[:-5], doc)
    tests = load(os.path.join(out, "gpu_tests.json"))
    if tests:
        skipped = sum(t.get("result") == "SKIPPED" for suite in tests["testsuites"] for t in suite["testsuite"])
        lines.append(f"GPU tests: {tests['tests']} run, {tests['failures']} failed, {skipped} skipped")
        for suite in tests["testsuites"]:
            for t in suite["testsuite"]:
                extra = {k: v for k, v in t.items() if k.endswith(("_accuracy", "_s"))}
                if extra or t.get("failures"):
                    lines.append(f"  {suite['name']}.{t['name']}: {'FAILED' if t.get('failures') else 'ok'} {extra}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
