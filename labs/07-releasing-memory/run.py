#!/usr/bin/env python3
"""Lab 7: training models one after another, releasing each one's memory, keeps the footprint of one
model; without releasing, memory grows with every model.

Eight models (--quick: four), each with a pool that reserves 32 MiB (--quick: 8 MiB) up front,
train one after another twice: released after each (serial mode, as a Keras loop with
clear_session()) and with every pool kept to the end (--keep-pools)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
models, pool = (4, "8MiB") if args.quick else (8, "32MiB")
base = {"name": "m", "data": "synthetic:teacher:rows=2048,features=64,classes=10", "input": 64,
        "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}],
        "loss": "sparse_categorical_crossentropy", "optimizer": "adam", "fit": {"epochs": 2, "batch_size": 128},
        "memory": {"limit": pool, "mode": "reserve"}}
sweep = lab.write_spec(args.out, "one-after-another", {"name": "one-after-another", "base": base,
                                                       "grid": {"seed": list(range(1, models + 1))}})
released = lab.multifit(["run", sweep, "--mode", "serial"], args.out, "released")
kept = lab.multifit(["run", sweep, "--mode", "serial", "--keep-pools"], args.out, "kept", trace=True)
lab.report(args.out, "kept", "Lab 7: every pool kept to the end (--keep-pools)")
lab.finish(args, "releasing each model keeps the footprint of one; without, memory grows",
           verdicts.releasing_memory(released, kept), timed=False)
