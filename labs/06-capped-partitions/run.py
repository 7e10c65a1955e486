#!/usr/bin/env python3
"""Lab 6: a device split into capped partitions ("virtual devices") fits a model only if its need is
under its partition; the partitions plus each process's runtime overhead (its CUDA context) must fit
on the device.

Four tiny models, each in a process of its own and all at once, each reserving a partition of the
GPU: first the device / 4, then (98% of the device, less what each process held beyond its pool in
the first run) / 4; last, a model planned at twice its partition. Needs a GPU; skips
(77) without one. --quick: fewer rows."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

CLAIM = "capped partitions fit a model only under its partition, and partitions plus contexts must fit the device"
N = 4
args = lab.arguments(__doc__)
devices, why = lab.gpus()
skip = verdicts.needs_gpus(devices, why)
if skip:
    lab.finish(args, CLAIM, skip)
device = devices[0]["memory_bytes"]
rows = 2048 if args.quick else 8192
base = {"name": "part", "data": f"synthetic:teacher:rows={rows},features=32", "input": 32,
        "layers": [{"units": 64, "activation": "relu"}, {"units": 2, "activation": "softmax"}],
        "loss": "sparse_categorical_crossentropy", "optimizer": "adam", "fit": {"epochs": 2, "batch_size": 64}}
sweep = lab.write_spec(args.out, "partitions",
                       {"name": "partitions", "base": base, "grid": {"seed": list(range(1, N + 1))}})


def partitions(name, cap, spec=sweep, models=N):
    return lab.multifit(["run", spec, "--mode", "processes", "--concurrency", str(models), "--memory", "reserve",
                         "--memory-limit", f"{cap >> 20}MiB"], args.out, name, backend="cuda", codes=(0, 2))


naive = partitions("naive", device // N)
overhead = verdicts.process_overhead(naive) or 1 << 30  # 1 GiB where neither NVML figure was seen
cap = int((0.98 * device - N * overhead) / N)
fitted = partitions("fitted", cap)
width = int(math.sqrt(cap / 8))  # two hidden layers this wide: about 16 bytes a parameter, twice the cap
wide = [{"units": width, "activation": "relu"}] * 2 + [{"units": 2, "activation": "softmax"}]
big = lab.write_spec(args.out, "too-big", dict(base, name="too-big", layers=wide))
over = partitions("over", cap, big, 1)
lab.report(args.out, "naive", "Lab 6: capped partitions of a device")
lab.finish(args, CLAIM, verdicts.capped_partitions(device, naive, fitted, over), timed=False)
