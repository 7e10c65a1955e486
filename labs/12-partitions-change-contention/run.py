#!/usr/bin/env python3
"""Lab 12: SM partitions change contention: beside a model that fills the GPU, a small model trains
much nearer its own speed on SMs of its own than sharing every SM.

The two models of wide-and-narrow.json train at once five ways, each run with --solo for each
model's slowdown: streams sharing every SM, streams on 2 SM partitions (green contexts), then
processes time-sliced (--mps off), under MPS (--mps on), and under MPS with a 50% SM share each.
Needs a GPU; skips (77) without one. 3 rounds (--quick: 1, one epoch)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

CLAIM = "SM partitions isolate models at once: a small model beside one that fills the GPU keeps nearer its own speed"
MODELS = 2  # wide-and-narrow.json's: one partition (or share) each
args = lab.arguments(__doc__)
devices, why = lab.gpus()
skip = verdicts.needs_gpus(devices, why)
if skip:
    lab.finish(args, CLAIM, skip)
common = ["run", lab.here("wide-and-narrow.json"), "--solo", "--concurrency", str(MODELS),
          "--repeat", "1" if args.quick else "3"] + (["--epochs", "1"] if args.quick else [])


def at_once(name, *flags, trace=False):
    """One way of training the two at once; its lab.Outcome however it ended (a daemon that cannot
    start is the verdict's to say, not a crash of the lab)."""
    return lab.run_multifit(common + list(flags), args.out, name, trace=trace, backend="cuda")


shared = at_once("streams", "--mode", "streams", trace=True)
partitioned = at_once("partitions", "--mode", "streams", "--sm-partitions", str(MODELS), trace=True)
time_sliced = at_once("time-sliced", "--mode", "processes", "--mps", "off")
mps = at_once("mps", "--mode", "processes", "--mps", "on")
mps_shared = at_once("mps-shares", "--mode", "processes", "--mps", "on", "--sm-share", str(100 // MODELS))
if partitioned.doc is not None:
    lab.report(args.out, "partitions", "Lab 12: partitions change contention")
lab.finish(args, CLAIM, verdicts.partitions_change_contention(shared, partitioned, time_sliced, mps, mps_shared))
