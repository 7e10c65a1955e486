#!/usr/bin/env python3
"""Lab 10: one model per device, when there are several devices.

Two models that each fill a GPU (two hidden layers of 8192 units, batches of 4096), each in a process
of its own and both at once: one per GPU (--devices 0,1), then both on GPU 0 (--devices 0). Needs two
GPUs; skips (77) with fewer. 3 rounds (--quick: 1, fewer rows)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

CLAIM = "one model per device, when there are several devices"
args = lab.arguments(__doc__)
devices, why = lab.gpus()
skip = verdicts.needs_gpus(devices, why, count=2)
if skip:
    lab.finish(args, CLAIM, skip)
rows = 65536 if args.quick else 131072
base = {"name": "wide", "data": f"synthetic:teacher:rows={rows},features=256,classes=10", "input": 256,
        "layers": [{"units": 8192, "activation": "relu"}, {"units": 8192, "activation": "relu"},
                   {"units": 10, "activation": "softmax"}],
        "loss": "sparse_categorical_crossentropy", "optimizer": "adam", "fit": {"epochs": 2, "batch_size": 4096},
        "memory": {"limit": "8GiB", "mode": "grow"}}
sweep = lab.write_spec(args.out, "two-wide", {"name": "two-wide", "base": base, "grid": {"seed": [1, 2]}})
repeat = ["--repeat", "1" if args.quick else "3"]
spread = lab.multifit(["run", sweep, "--mode", "processes", "--concurrency", "2", "--devices", "0,1"] + repeat,
                      args.out, "spread", backend="cuda")
together = lab.multifit(["run", sweep, "--mode", "processes", "--concurrency", "2", "--devices", "0"] + repeat,
                        args.out, "together", backend="cuda")
lab.report(args.out, "spread", "Lab 10: one model per device")
lab.finish(args, CLAIM, verdicts.one_model_per_device(spread, together))
