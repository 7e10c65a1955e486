#!/usr/bin/env python3
"""Lab 5: a memory cap solves memory contention, not compute contention.

Eight models, each with its own memory pool capped at 2 MiB (reserved up front), train one after
another and then all at once: the caps let all eight share the machine's memory, and say nothing
about its cores. 3 rounds (--quick: 1, fewer rows)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
rows = 2048 if args.quick else 8192
base = {"name": "capped", "data": f"synthetic:teacher:rows={rows},features=256,classes=10", "input": 256,
        "layers": [{"units": 256, "activation": "relu"}, {"units": 10, "activation": "softmax"}],
        "loss": "sparse_categorical_crossentropy", "optimizer": {"name": "adam"},
        "fit": {"epochs": 2, "batch_size": 128}, "memory": {"limit": "2MiB", "mode": "reserve"}}
sweep = lab.write_spec(args.out, "capped-eight", {"name": "capped-eight", "base": base,
                                                 "grid": {"seed": [1, 2, 3, 4, 5, 6, 7, 8]}})
doc = lab.multifit(["run", sweep, "--mode", "all", "--repeat", "1" if args.quick else "3"], args.out, "sweep",
                   trace=True)
lab.report(args.out, "sweep", "Lab 5: a memory cap")
lab.finish(args, "a memory cap solves memory contention, not compute contention", verdicts.memory_cap(doc))
