#!/usr/bin/env python3
"""Lab 4: a process that reserves the whole device blocks the next one, while memory growth lets both
coexist.

Two tiny models, each in a process of its own and both at once, with a memory limit of 90% of the
GPU's memory: first reserved up front (memory mode reserve, as TensorFlow takes the device by
default), then grown as needed (mode grow, set_memory_growth(True)). Needs a GPU; skips (77) without
one. --quick: fewer rows."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

CLAIM = "a process that reserves the whole device blocks the next; memory growth lets both coexist"
args = lab.arguments(__doc__)
devices, why = lab.gpus()
skip = verdicts.needs_gpus(devices, why)
if skip:
    lab.finish(args, CLAIM, skip)
limit = f"{int(0.9 * devices[0]['memory_bytes']) >> 20}MiB"
rows = 2048 if args.quick else 8192
base = {"name": "job", "data": f"synthetic:teacher:rows={rows},features=32", "input": 32,
        "layers": [{"units": 64, "activation": "relu"}, {"units": 2, "activation": "softmax"}],
        "loss": "sparse_categorical_crossentropy", "optimizer": "adam", "fit": {"epochs": 2, "batch_size": 64}}
sweep = lab.write_spec(args.out, "two-jobs", {"name": "two-jobs", "base": base, "grid": {"seed": [1, 2]}})
runs = {}
for mode in ("reserve", "grow"):  # both processes at once (--concurrency 2), whatever room the run expects
    runs[mode] = lab.multifit(["run", sweep, "--mode", "processes", "--concurrency", "2", "--memory", mode,
                               "--memory-limit", limit], args.out, mode, backend="cuda", codes=(0, 2))
lab.report(args.out, "reserve", "Lab 4: reserving the device blocks the next process")
lab.finish(args, CLAIM, verdicts.reserve_blocks_the_next(runs["reserve"], runs["grow"]), timed=False)
