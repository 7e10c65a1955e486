#!/usr/bin/env python3
"""Lab 9: start-up overhead dominates short experiments: many separate processes cost more than
one process that trains them all.

The 32 tiny models of tiny-sweep.json train in milliseconds each: in processes mode every model
has a process of its own to start (and its data to read), in streams mode one process trains all.
3 rounds (--quick: 1)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
doc = lab.multifit(["run", lab.here("tiny-sweep.json"), "--mode", "all", "--repeat", "1" if args.quick else "3"],
                   args.out, "sweep", trace=True)
lab.report(args.out, "sweep", "Lab 9: start-up overhead")
lab.finish(args, "many short processes cost more than one process", verdicts.startup_overhead(doc))
