#!/usr/bin/env python3
"""Lab 1: running small models at once finishes the sweep sooner, although each model trains slower.

Runs the 32 tiny models of tiny-sweep.json in every mode, 3 rounds (--quick: 1), and compares
streams (all in one process, at once) with serial (one after another)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
doc = lab.multifit(["run", lab.here("tiny-sweep.json"), "--mode", "all", "--repeat", "1" if args.quick else "3"],
                   args.out, "sweep", trace=True)
lab.report(args.out, "sweep", "Lab 1: small models at once")
lab.finish(args, "small models at once finish sooner, each slower", verdicts.small_models_at_once(doc))
