#!/usr/bin/env python3
"""Lab 3: when preparing the input is the bottleneck, a better input pipeline helps, and so do
models at once.

A tiny model whose every sample costs 20 µs of CPU work to prepare (HostWork) trains on a batch in
microseconds: it waits for its input. It trains with one worker and one slot, then two workers and
four slots (tf.data's num_parallel_calls and prefetch); then four such models one after another
and at once."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
rows = 2048 if args.quick else 4096


def model(seed, workers, prefetch):
    return {"name": f"input-bound-{seed}", "data": f"synthetic:teacher:rows={rows}", "input": 20,
            "layers": [{"units": 64, "activation": "relu"}, {"units": 1, "activation": "sigmoid"}],
            "loss": "binary_crossentropy", "optimizer": {"name": "adam"}, "fit": {"epochs": 3, "batch_size": 64},
            "seed": seed, "memory": {"limit": "4MiB"},
            "preprocessing": [{"type": "HostWork", "microseconds_per_sample": 20}],
            "pipeline": {"workers": workers, "prefetch": prefetch}}


plain = lab.multifit(["train", lab.write_spec(args.out, "plain-spec", model(1, 1, 1))], args.out, "plain")
better = lab.multifit(["train", lab.write_spec(args.out, "better-spec", model(1, 2, 4))], args.out, "better")
sweep = lab.write_spec(args.out, "four", {"name": "four", "models": [model(s, 1, 2) for s in (1, 2, 3, 4)]})
doc = lab.multifit(["run", sweep, "--mode", "all", "--repeat", "1" if args.quick else "3"], args.out, "sweep",
                   trace=True)
lab.report(args.out, "sweep", "Lab 3: an input-bound model")
lab.finish(args, "an input-bound model: a better pipeline helps, and so do models at once",
           verdicts.input_bound(plain, better, doc))
