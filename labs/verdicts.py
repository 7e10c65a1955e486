"""Each lab's verdict from the documents multifit wrote: whether the claim held on this machine, and
the figures behind it, in one line. Pure functions of the documents, so that tests/labs checks them
on recorded documents that should and should not hold."""
import statistics
from dataclasses import dataclass
from typing import Optional


@dataclass
class Verdict:
    held: Optional[bool]  # None: skipped (the machine cannot test it)
    line: str


def _runs(doc):
    return doc["runs"] if isinstance(doc.get("runs"), list) else [doc]


def median_of(doc, mode, figure):
    """A mode's figure over its runs (--repeat): the median, or None where no run has it."""
    values = []
    for run in _runs(doc):
        if run["mode"] != mode:
            continue
        if figure == "mean_slowdown":
            slowdowns = [m["slowdown"] for m in run["models"] if isinstance(m.get("slowdown"), (int, float))]
            value = statistics.mean(slowdowns) if slowdowns else None
        else:
            value = run.get(figure)
        if isinstance(value, (int, float)):
            values.append(value)
    return statistics.median(values) if values else None


def _models(doc, mode):
    return next(len(r["models"]) for r in _runs(doc) if r["mode"] == mode)


def small_models_at_once(doc):
    """Claim 1: tiny models at once finish sooner although each trains slower."""
    serial, streams = median_of(doc, "serial", "wall_s"), median_of(doc, "streams", "wall_s")
    slowdown = median_of(doc, "streams", "mean_slowdown")
    if serial is None or streams is None or slowdown is None:
        return Verdict(False, "did not hold: a mode's run is missing from the document")
    figures = (f"streams finished the {_models(doc, 'streams')} tiny models in {streams / serial:.2f}x serial's wall; "
               f"each model trained {slowdown:.1f}x slower")
    held = streams < serial and slowdown > 1
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def saturating_model(doc):
    """Claim 2: models that each fill the machine gain nothing at once; each trains about twice as slow."""
    serial, streams = median_of(doc, "serial", "wall_s"), median_of(doc, "streams", "wall_s")
    slowdown = median_of(doc, "streams", "mean_slowdown")
    if serial is None or streams is None or slowdown is None:
        return Verdict(False, "did not hold: a mode's run is missing from the document")
    n = _models(doc, "streams")
    figures = (f"{n} models that each use every core took {streams / serial:.2f}x serial's wall at once; "
               f"each trained {slowdown:.1f}x slower")
    held = streams >= 0.85 * serial and slowdown >= 0.6 * n  # no real gain; each about n times as slow
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def _epoch_s(doc):
    epochs = doc["models"][0]["epochs"]
    later = epochs[1:] or epochs
    return statistics.median(e["seconds"] for e in later), statistics.median(e["input_wait_s"] / e["seconds"]
                                                                            for e in later if e["seconds"] > 0)


def input_bound(plain, better, sweep):
    """Claim 3: for an input-bound model a better pipeline helps, and so do models at once."""
    (slow, wait), (fast, _) = _epoch_s(plain), _epoch_s(better)
    serial, streams = median_of(sweep, "serial", "wall_s"), median_of(sweep, "streams", "wall_s")
    if serial is None or streams is None:
        return Verdict(False, "did not hold: a mode's run is missing from the sweep's document")
    figures = (f"the model waited {wait:.0%} of its epoch for input; 2 workers with 4 slots took the epoch from "
               f"{slow * 1000:.1f} ms to {fast * 1000:.1f} ms ({fast / slow:.2f}x); {_models(sweep, 'streams')} such "
               f"models at once took {streams / serial:.2f}x serial's wall")
    held = wait > 0.5 and fast < 0.8 * slow and streams < 0.8 * serial
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def startup_overhead(doc):
    """Claim 9: in short experiments, many processes cost more than one process that trains them all."""
    streams, processes = median_of(doc, "streams", "wall_s"), median_of(doc, "processes", "wall_s")
    startup = median_of(doc, "processes", "startup_s")
    if streams is None or processes is None or startup is None:
        return Verdict(False, "did not hold: a mode's run is missing from the document")
    figures = (f"{_models(doc, 'processes')} short trainings took {processes / streams:.1f}x as long in separate "
               f"processes as in one, {startup / processes:.0%} of it their start-up")
    held = processes > streams and startup > 0.5 * processes
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def memory_cap(doc):
    """Claim 5: a memory cap solves memory contention, not compute contention: every capped model fits
    at once within its cap, yet each trains slower."""
    runs = [r for r in _runs(doc) if r["mode"] == "streams"]
    if not runs or median_of(doc, "streams", "mean_slowdown") is None:
        return Verdict(False, "did not hold: the streams run or its slowdowns are missing from the document")
    models = runs[0]["models"]
    fits = all(m.get("status") == "ok" and m["memory"]["peak_bytes"] <= m["memory"]["cap_bytes"]
               for r in runs for m in r["models"])
    cap = max(m["memory"]["cap_bytes"] for m in models) / 2**20
    peak = max(m["memory"]["peak_bytes"] for r in runs for m in r["models"]) / 2**20
    slowdown = median_of(doc, "streams", "mean_slowdown")
    figures = (f"{len(models)} models capped at {cap:.0f} MiB each {'all fit' if fits else 'did not all fit'} at once "
               f"(the largest pool peak {peak:.2f} MiB); each still trained {slowdown:.1f}x slower than alone")
    held = fits and slowdown >= 1.5
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)
