"""What every lab shares: its command line (--quick, --out), running multifit and reading its
document, the GPUs multifit sees (for the labs that need one), the report page (scripts/report.py)
and the verdict: one line printed last, and verdict.json beside the report for labs/run-all.

Exit codes: 0 the lab ran (its claim held or did not hold: both are results); 77 skipped (this
machine cannot test the claim); 2 multifit or the report failed (the message says which)."""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def arguments(doc):
    name = os.path.basename(os.path.dirname(os.path.abspath(sys.argv[0])))
    parser = argparse.ArgumentParser(description=" ".join(doc.strip().split("\n\n")[0].split()))
    parser.add_argument("--quick", action="store_true",
                        help="a small size, for CI and a first look (MULTIFIT_LAB_QUICK=1 does the same)")
    parser.add_argument("--out", default=os.path.join(ROOT, "labs", "out", name),
                        help="where the documents, the report and verdict.json go (default: labs/out/LAB)")
    args = parser.parse_args()
    args.quick = args.quick or os.environ.get("MULTIFIT_LAB_QUICK") == "1"
    args.name = name
    os.makedirs(args.out, exist_ok=True)
    return args


def here(name):
    """A file of the running lab's folder."""
    return os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), name)


def _binary():
    return os.environ.get("MULTIFIT", os.path.join(ROOT, "build", "bin", "multifit"))


def _run(command):
    try:
        return subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        print(f"lab: error: cannot run {command[0]}: {e.strerror} (build it first: scripts/build.sh)", file=sys.stderr)
        sys.exit(2)


@dataclass
class Outcome:
    """A multifit run that may end any way (lab 8 crashes one on purpose): its exit code (negative:
    -N, killed by signal N), its document (None when the process died before writing it), how many
    models its journal recorded as ended, and its stderr."""
    returncode: int
    doc: Optional[dict]
    journaled: int
    stderr: str

    @property
    def ended(self):
        """How the process ended, in words: "killed by SIGSEGV", "ended with exit code 1"."""
        if self.returncode < 0:
            return f"killed by {signal.Signals(-self.returncode).name}"
        return f"ended with exit code {self.returncode}"


UNJUDGED = []  # why a run of this lab cannot be judged (its document's unjudged: too short, a busy machine), each once


def run_multifit(args, out, name, trace=False, backend=None):
    """Runs `multifit ARGS --backend BACKEND --json OUT/NAME.json` (BACKEND: `backend`, else
    MULTIFIT_LAB_BACKEND, else cpu) and returns its Outcome, however it ended."""
    doc = os.path.join(out, name + ".json")
    for stale in (doc, doc + ".journal"):
        if os.path.exists(stale):
            os.remove(stale)  # never the last run's document read as this one's
    backend = backend or os.environ.get("MULTIFIT_LAB_BACKEND", "cpu")
    command = [_binary()] + args + ["--backend", backend, "--quiet", "--json", doc]
    if trace:
        command += ["--trace", os.path.join(out, name + ".trace.json")]
    done = _run(command)
    document = None
    if os.path.exists(doc):
        with open(doc) as f:
            document = json.load(f)
    for run in (document or {}).get("runs", [document] if document else []):
        why = run.get("unjudged") and f"{run['mode']}: {run['unjudged']}"
        if why and why not in UNJUDGED:
            UNJUDGED.append(why)
    journaled = 0
    if os.path.exists(doc + ".journal"):
        with open(doc + ".journal") as f:
            journaled = max(0, sum(1 for line in f if line.strip()) - 1)  # less its header
    return Outcome(done.returncode, document, journaled, done.stderr)


def multifit(args, out, name, trace=False, backend=None, codes=(0,)):
    """run_multifit's document. An exit code in `codes` is a run whose document to read (add 2 where a
    model is meant to run out of memory); any other, or no document, stops the lab."""
    outcome = run_multifit(args, out, name, trace, backend)
    if outcome.returncode not in codes or outcome.doc is None:
        print(f"lab: error: multifit {' '.join(args)} failed ({outcome.ended}): {outcome.stderr.strip()}",
              file=sys.stderr)
        sys.exit(2)
    return outcome.doc


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def gpus():
    """The CUDA devices multifit sees (`multifit info`): a list of {"index", "name", "memory_bytes"}
    (the memory to the two decimals info prints), and why there are none ("" when there are some)."""
    done = _run([_binary(), "info"])
    if done.returncode != 0:
        print(f"lab: error: multifit info failed ({done.returncode}): {done.stderr.strip()}", file=sys.stderr)
        sys.exit(2)
    devices, why = [], ""
    for line in done.stdout.splitlines():
        device = re.match(r"cuda:(\d+)\s+(.*), \d+ SMs, ([\d.]+) (B|KiB|MiB|GiB), sm_\d+$", line)
        none = re.match(r"CUDA devices: none \((.*)\)$", line)
        if device:
            devices.append({"index": int(device[1]), "name": device[2],
                            "memory_bytes": int(float(device[3]) * _UNITS[device[4]])})
        elif none:
            why = none[1]
    return devices, why


def write_spec(out, name, spec):
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)
    return path


def report(out, name, title):
    """OUT/report.html from OUT/NAME.json (and its trace, where one was written). Where matplotlib is
    missing (a GPU machine without our packages) the lab goes on to its verdict, saying so."""
    command = [sys.executable, os.path.join(ROOT, "scripts", "report.py"), os.path.join(out, name + ".json"),
               "-o", os.path.join(out, "report.html"), "--title", title]
    trace = os.path.join(out, name + ".trace.json")
    if os.path.exists(trace):
        command += ["--trace", trace]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 and "matplotlib is not installed" in done.stderr:
        print(f"lab: note: no report page: {done.stderr.strip().removeprefix('report: error: ')}", file=sys.stderr)
    elif done.returncode != 0:
        print(f"lab: error: the report failed: {done.stderr.strip()}", file=sys.stderr)
        sys.exit(2)


def finish(args, claim, verdict, timed=True):
    """Prints the verdict line and writes verdict.json for labs/run-all; exits 0, or 77 when skipped.
    A lab whose verdict reads timings (`timed`) says at the end of the line which runs cannot be judged
    (too short, or on a busy machine: their timings are not a quiet machine's longer run's), and
    verdict.json lists them."""
    unjudged = UNJUDGED if timed and verdict.held is not None else []
    if unjudged:
        verdict.line += f" (not to be judged: {'; '.join(unjudged)})"
    with open(os.path.join(args.out, "verdict.json"), "w") as f:
        json.dump({"lab": args.name, "claim": claim, "held": verdict.held, "line": verdict.line,
                   "quick": args.quick, "unjudged": unjudged}, f, indent=2)
    print(verdict.line)
    sys.exit(77 if verdict.held is None else 0)
