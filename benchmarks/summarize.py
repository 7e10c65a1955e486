#!/usr/bin/env python3
"""Summarizes a gpu-check or benchmark output directory: every op's time per
call by backend, our GEMM as a fraction of cuBLAS, the end-to-end runs, the
studies' runs (each model's slowdown and device memory, and how the GPU was
shared: MPS, SM partitions, SM shares) and the labs' verdicts.

usage: benchmarks/summarize.py OUTDIR
"""
import glob
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


def is_study(doc):
    """A `multifit run` document: several runs, or one run of a sweep (train's has no sweep)."""
    return isinstance(doc, dict) and bool(doc.get("runs") or ("models" in doc and doc.get("sweep")))


def mib(size):
    return "-" if size is None else f"{size / 1048576:.0f}MiB"


def model_line(m):
    """A model of a run: its slowdown against its solo run, the SMs of its green context (sms), its
    MPS share in percent (sm_share) and its process's peak device memory, CUDA context included
    (process_device_bytes)."""
    slowdown = "-" if m.get("slowdown") is None else f"{m['slowdown']:.2f}x"
    return (f"      {m['name']:24s} {m.get('status', '-'):8s} slowdown {slowdown:>6s}"
            f"  sms {m.get('sms') if m.get('sms') is not None else '-'}"
            f"  sm_share {m.get('sm_share') if m.get('sm_share') is not None else '-'}"
            f"  process_device {mib(m.get('process_device_bytes'))}")


def models_range(models):
    """Many models in one line: their slowdowns' range and mean, their processes' device memory's."""
    slowdowns = [m["slowdown"] for m in models if m.get("slowdown") is not None]
    device = [m["process_device_bytes"] for m in models if m.get("process_device_bytes") is not None]
    line = f"      {len(models)} models:"
    if slowdowns:
        line += f" slowdown {min(slowdowns):.2f}x to {max(slowdowns):.2f}x, mean {sum(slowdowns) / len(slowdowns):.2f}x"
    if device:
        line += f"; process_device {mib(min(device))} to {mib(max(device))}"
    return line


def study_lines(name, doc, each_up_to=8):
    """Each run (mode, or variant) of a `multifit run` document: its wall, speedup and overlap, with the
    overlap's kind (interleaved: GPU processes without MPS), and how the GPU was shared: mps (whether
    the models ran under MPS), mps_daemon (found, started, kept_out) and sm_partitions; then each
    model (model_line), or for more than `each_up_to` models their range. A processes run also says
    how many workers ran at once and why (its concurrency_reason, the context's measured size in it)."""
    runs = doc.get("runs") or [doc]
    lines = [f"  {name}: device_schedule {runs[0].get('device_schedule')}"]
    for run in runs:
        overlap = run.get("overlap") or {}
        fraction = overlap.get("fraction")
        lines.append(f"    {run['mode']:10s} wall {run['wall_s']:.3f}s  start-up {run.get('startup_s') or 0:.3f}s"
                     f"  speedup {run.get('speedup_vs_serial') or 0:.2f}x"
                     f"  overlap {'-' if fraction is None else f'{fraction:.0%}'} {overlap.get('kind') or ''}"
                     f"  mps {run.get('mps')}  mps_daemon {run.get('mps_daemon')}"
                     f"  sm_partitions {run.get('sm_partitions')}")
        if run["mode"] == "processes" and run.get("concurrency_reason"):
            # how many workers at once, and why: the probe worker's measured device footprint among it
            lines.append(f"      concurrency {run.get('concurrency')}: {run['concurrency_reason']}")
        models = run.get("models", [])
        lines += [model_line(m) for m in models] if len(models) <= each_up_to else [models_range(models)]
    return lines


def documents(out):
    """(name, document) of every JSON document in `out` and in its labs' folders (a folder holding a
    verdict.json: its documents are the lab's variants, named LAB/NAME), traces left out."""
    folders = [""] + sorted(d for d in os.listdir(out) if os.path.exists(os.path.join(out, d, "verdict.json")))
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(out, folder))):
            if name.endswith(".json") and not name.endswith(".trace.json") and name != "verdict.json":
                doc = load(os.path.join(out, folder, name))
                if isinstance(doc, dict):
                    yield os.path.join(folder, name[:-5]), doc


def lab_lines(out):
    """The verdict of every lab run in `out` (out/LAB/verdict.json, and labs/run-all's out/labs/LAB/)."""
    lines = []
    for verdict_file in sorted(glob.glob(os.path.join(out, "*", "verdict.json")) +
                               glob.glob(os.path.join(out, "*", "*", "verdict.json"))):
        verdict = load(verdict_file) or {}
        held = verdict.get("held")
        status = "skipped" if held is None else "held" if held else "did not hold"
        lines.append(f"  {os.path.relpath(os.path.dirname(verdict_file), out)}: {status}: {verdict.get('line')}")
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
    docs = list(documents(out))
    lines.append("End to end (multifit train):")
    lines += [run_line(name, doc) for name, doc in docs if "models" in doc and not is_study(doc)]
    lines.append("Studies (multifit run):")
    for name, doc in docs:
        if is_study(doc):
            lines += study_lines(name, doc)
    labs = lab_lines(out)
    if labs:
        lines += ["Labs:"] + labs
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
