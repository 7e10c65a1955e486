#!/usr/bin/env python3
"""Lab 2: when one model already fills the machine, two at once take as long as two in a row.

On the CPU the machine is its cores: each model here has products large enough that the backend
splits them over every core it is given (--threads: all of them). Two such models run one after
another, then at once (streams, each on half the cores), 3 rounds (--quick: 1, smaller)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
rows = 2048 if args.quick else 8192
base = {"name": "wide", "data": f"synthetic:teacher:rows={rows},features=512", "input": 512,
        "layers": [{"units": 1024, "activation": "relu"}, {"units": 1, "activation": "sigmoid"}],
        "loss": "binary_crossentropy", "optimizer": {"name": "adam"},
        "fit": {"epochs": 1 if args.quick else 2, "batch_size": 256}, "memory": {"limit": "64MiB"}}
sweep = lab.write_spec(args.out, "wide-pair", {"name": "wide-pair", "base": base, "grid": {"seed": [1, 2]}})
doc = lab.multifit(["run", sweep, "--mode", "all", "--repeat", "1" if args.quick else "3"], args.out, "sweep",
                   trace=True)
lab.report(args.out, "sweep", "Lab 2: one model fills the machine")
lab.finish(args, "models that each fill the machine gain nothing at once", verdicts.saturating_model(doc))
