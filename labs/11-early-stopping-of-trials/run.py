#!/usr/bin/env python3
"""Lab 11: stopping the losing trials of a search early (successive halving, as Keras Tuner's
Hyperband and Optuna's pruners do) finds about the same best model for a fraction of the compute.

The same trials of search.json (a Sobol search over learning rate, width, dropout and batch size of
the tiny model) trained in full, then under ASHA, in packed mode. 243 trials of 27 epochs (--quick:
243 of 9)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lab  # noqa: E402
import verdicts  # noqa: E402

args = lab.arguments(__doc__)
with open(lab.here("search.json")) as f:
    search = json.load(f)
search["search"]["trials"], search["base"]["fit"]["epochs"] = (243, 9) if args.quick else (243, 27)
scheduled = lab.write_spec(args.out, "search-asha", search)
full = lab.write_spec(args.out, "search-full", {k: v for k, v in search.items() if k != "scheduler"})
full_doc = lab.multifit(["run", full, "--mode", "packed"], args.out, "full")
asha_doc = lab.multifit(["run", scheduled, "--mode", "packed"], args.out, "asha")
lab.report(args.out, "asha", "Lab 11: early stopping of trials")
lab.finish(args, "stopping losing trials early finds about the same best for a fraction of the compute",
           verdicts.early_stopping_of_trials(full_doc, asha_doc))
