#!/usr/bin/env python3
"""Lab 8: separate processes are more predictable than threads in one process: a crash stays in its
process, where threads share one and a fault takes all of them down; processes pay start-up.

Four models train at once three times: on streams in one process without a fault (the baseline),
then with a real fault in one of them (multifit run --inject-fault) in processes mode, and on
streams. --quick: fewer epochs."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
base = {"name": "m", "data": "synthetic:teacher:rows=2048,features=64,classes=10", "input": 64,
        "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}],
        "loss": "sparse_categorical_crossentropy", "optimizer": "adam",
        "fit": {"epochs": 5 if args.quick else 20, "batch_size": 128}}
sweep = lab.write_spec(args.out, "four", {"name": "four", "base": base, "grid": {"seed": [1, 2, 3, 4]}})
fault = ["--inject-fault", "m-s2"]
baseline = lab.multifit(["run", sweep, "--mode", "streams"], args.out, "streams")
processes = lab.run_multifit(["run", sweep, "--mode", "processes"] + fault, args.out, "processes-fault", trace=True)
streams = lab.run_multifit(["run", sweep, "--mode", "streams"] + fault, args.out, "streams-fault")
lab.report(args.out, "processes-fault", "Lab 8: a crash in processes mode")
lab.finish(args, "a crash stays in its process; threads in one process share it",
           verdicts.crash_isolation(baseline, processes, streams))
