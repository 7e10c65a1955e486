#!/usr/bin/env python3
"""Every study a user runs, its documents and stderr with the times left out: run it with the build
before a change and the build after, then compare the two folders, so that a change meant to move
code says "same as before" with evidence (or lists what it changed).

  benchmarks/scenarios.py --multifit BIN --out DIR      writes DIR/NAME.{json,csv,err,code}
  benchmarks/scenarios.py --compare BEFORE AFTER        prints each scenario: same, or the diff

What is left out, since it moves from run to run: every figure of time, rate, memory, load and
overlap, the machine record, and in stderr every number (the answer's ratio, the status line's
times), and a sweep's fingerprint (it names the file's folder). Losses, accuracies, statuses,
exit codes and the messages' words stay. --mode auto's choice is the calibration's, which may
differ between two runs of one build.
"""
import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TINY = "examples/tiny-sweep.json"
SPEC = "examples/binary-classifier.json"
CPU = ["--backend", "cpu", "--threads", "2"]

# name: the command line after the program, relative to the repository; OUT is the scenario's folder.
SCENARIOS = {
    "train": ["train", SPEC, *CPU, "--json", "OUT/doc.json"],
    "train-bad-spec": ["train", "OUT/bad.json", *CPU, "--json", "OUT/doc.json"],
    "serial": ["run", TINY, "--mode", "serial", *CPU, "--json", "OUT/doc.json", "--csv", "OUT/rows.csv"],
    "streams": ["run", TINY, "--mode", "streams", *CPU, "--json", "OUT/doc.json"],
    "packed": ["run", TINY, "--mode", "packed", *CPU, "--json", "OUT/doc.json"],
    "processes": ["run", TINY, "--mode", "processes", *CPU, "--json", "OUT/doc.json"],
    "all": ["run", TINY, "--mode", "all", *CPU, "--json", "OUT/doc.json"],
    "auto": ["run", TINY, "--mode", "auto", *CPU, "--calibration-steps", "4", "--json", "OUT/doc.json"],
    "solo-packed": ["run", TINY, "--mode", "packed", "--solo", *CPU, "--json", "OUT/doc.json"],
    "repeat": ["run", TINY, "--mode", "all", "--repeat", "2", *CPU, "--json", "OUT/doc.json"],
    "shard": ["run", TINY, "--mode", "streams", "--shard", "1/3", *CPU, "--json", "OUT/doc.json"],
    "save-best": ["run", TINY, "--mode", "packed", "--save-best", "3", "OUT/best", *CPU, "--json", "OUT/doc.json"],
    "asha": ["run", "examples/tiny-search-asha.json", "--mode", "packed", *CPU, "--json", "OUT/doc.json"],
    "resume": ["run", TINY, "--mode", "serial", "--resume", *CPU, "--json", "OUT/doc.json"],
    "bad-entry": ["run", "OUT/sweep.json", "--mode", "streams", *CPU, "--json", "OUT/doc.json"],
}

# Keys whose values are times, rates, memory or the machine's: left out.
MOVING = re.compile(r"(_s|_per_s|_bytes|_percent|_ms)$|^(seconds|threads|fingerprint|machine|overlap|gpu|host|pid|date|"
                    r"started|load|speedup_vs_serial|slowdown|timeline|steps|epoch_s|samples|"
                    r"training_threads|arrangement|ranks|calibration|predicted_wall_s|unjudged|"
                    r"concurrency|concurrency_reason|commit|version|peak_resident|ranking|rank_by|"
                    r"busy_cost|repeats|median|min|max|spread|answer)$")


def stable(value):
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if not MOVING.search(k)}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def prepare(out):
    (out / "bad.json").write_text('{"input": 4, "layers": [{"units": 0}], "loss": "mse"}\n')
    base = json.loads((ROOT / TINY).read_text())["base"]
    sweep = {"name": "one-broken", "models": [base, dict(base, name="broken", layers="none")]}
    (out / "sweep.json").write_text(json.dumps(sweep))


def run(binary, out):
    out.mkdir(parents=True, exist_ok=True)
    for name, line in SCENARIOS.items():
        folder = out / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        prepare(folder)
        if name == "resume":  # a journal of a run that ended, read back: nothing trains again
            first = [a.replace("OUT", str(folder)) for a in line if a != "--resume"]
            subprocess.run([binary, *first], cwd=ROOT, capture_output=True)
        args = [a.replace("OUT", str(folder)) for a in line]
        done = subprocess.run([binary, *args], cwd=ROOT, capture_output=True, text=True)
        (out / f"{name}.code").write_text(f"{done.returncode}\n")
        (out / f"{name}.err").write_text(re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#",
                                                done.stderr.replace(str(folder), "OUT")))
        doc = folder / "doc.json"
        if doc.exists():
            text = doc.read_text().replace(str(folder), "OUT")
            (out / f"{name}.json").write_text(json.dumps(stable(json.loads(text)), indent=1,
                                                         sort_keys=True) + "\n")
        print(f"{name}: exit {done.returncode}", file=sys.stderr)


def compare(before, after):
    same = True
    for name in SCENARIOS:
        lines = []
        for ext in ("code", "err", "json"):
            a, b = before / f"{name}.{ext}", after / f"{name}.{ext}"
            ta = a.read_text().splitlines() if a.exists() else []
            tb = b.read_text().splitlines() if b.exists() else []
            lines += difflib.unified_diff(ta, tb, str(a), str(b), lineterm="", n=1)
        print(f"{name}: " + ("same as before" if not lines else "changed"))
        for line in lines:
            print("  " + line)
        same = same and not lines
    return 0 if same else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--multifit", help="the program to run")
    parser.add_argument("--out", type=Path, help="the folder for the scenarios' outputs")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.multifit or not args.out:
        parser.error("give --multifit and --out, or --compare BEFORE AFTER")
    run(str(Path(args.multifit).resolve()), args.out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
