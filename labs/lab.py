"""What every lab shares: its command line (--quick, --out), running multifit and reading its
document, the report page (scripts/report.py) and the verdict: one line printed last, and
verdict.json beside the report for labs/run-all.

Exit codes: 0 the lab ran (its claim held or did not hold: both are results); 77 skipped (this
machine cannot test the claim); 2 multifit or the report failed (the message says which)."""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def arguments(doc):
    name = os.path.basename(os.path.dirname(os.path.abspath(sys.argv[0])))
    parser = argparse.ArgumentParser(description=doc.strip().split("\n")[0])
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


def multifit(args, out, name, trace=False):
    """Runs `multifit ARGS --json OUT/NAME.json` on the CPU and returns its document."""
    binary = os.environ.get("MULTIFIT", os.path.join(ROOT, "build", "bin", "multifit"))
    doc = os.path.join(out, name + ".json")
    command = [binary] + args + ["--backend", os.environ.get("MULTIFIT_LAB_BACKEND", "cpu"), "--quiet", "--json", doc]
    if trace:
        command += ["--trace", os.path.join(out, name + ".trace.json")]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        print(f"lab: error: cannot run {binary}: {e.strerror} (build it first: scripts/build.sh)", file=sys.stderr)
        sys.exit(2)
    if done.returncode != 0:
        print(f"lab: error: {' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}", file=sys.stderr)
        sys.exit(2)
    with open(doc) as f:
        return json.load(f)


def write_spec(out, name, spec):
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)
    return path


def report(out, name, title):
    """OUT/report.html from OUT/NAME.json (and its trace, where one was written)."""
    command = [sys.executable, os.path.join(ROOT, "scripts", "report.py"), os.path.join(out, name + ".json"),
               "-o", os.path.join(out, "report.html"), "--title", title]
    trace = os.path.join(out, name + ".trace.json")
    if os.path.exists(trace):
        command += ["--trace", trace]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"lab: error: the report failed: {done.stderr.strip()}", file=sys.stderr)
        sys.exit(2)


def finish(args, claim, verdict):
    """Prints the verdict line and writes verdict.json for labs/run-all; exits 0, or 77 when skipped."""
    with open(os.path.join(args.out, "verdict.json"), "w") as f:
        json.dump({"lab": args.name, "claim": claim, "held": verdict.held, "line": verdict.line,
                   "quick": args.quick}, f, indent=2)
    print(verdict.line)
    sys.exit(77 if verdict.held is None else 0)
