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


def early_stopping_of_trials(full, scheduled):
    """Claim 11: stopping the losing trials early finds about the same best (within a point of
    val_accuracy) for at most a third of the compute (samples trained) and less wall."""
    def best(doc):
        values = [m["epochs"][-1]["val_accuracy"] for m in doc["models"] if m["status"] == "ok" and m["epochs"]]
        return max(values) if values else None
    samples = lambda doc: sum(m["samples"] for m in doc["models"])
    full_best, best_found = best(full), best(scheduled)
    if full_best is None or best_found is None or not samples(full):
        return Verdict(False, "did not hold: a run trained no model to its end")
    stopped = sum(m["status"] == "stopped" for m in scheduled["models"])
    compute, wall = samples(scheduled) / samples(full), scheduled["wall_s"] / full["wall_s"]
    figures = (f"ASHA stopped {stopped} of {len(scheduled['models'])} trials, trained {compute:.0%} of the full "
               f"sweep's samples in {wall:.2f}x its wall, and found val_accuracy {best_found:.4f} against "
               f"{full_best:.4f} ({100 * (best_found - full_best):+.2f} points)")
    held = best_found >= full_best - 0.01 and compute <= 1 / 3 and wall < 1
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


def needs_gpus(devices, why, count=1):
    """The skip of a lab that needs `count` GPUs where multifit sees fewer (devices and why: lab.gpus());
    None where there are enough."""
    if len(devices) >= count:
        return None
    need = "a GPU" if count == 1 else f"{count} GPUs"
    found = (f"none: multifit info found no CUDA device: {why or 'it listed none'}" if not devices else
             f"{len(devices)}: " + ", ".join(f"cuda:{d['index']} {d['name']}" for d in devices))
    return Verdict(None, f"skipped: needs {need} (this machine has {found})")


def _size(b):
    return (f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.2f} MiB" if b >= 2**20 else
            f"{b / 2**10:.2f} KiB" if b >= 2**10 else f"{b} B")


def _plan_bytes(model):
    return sum(part["bytes"] for part in model["memory"]["plan"])


def _out_before_training(model):
    """Out of memory before it trained, its plan within its cap: the device, not the cap, had no room."""
    return model["status"] == "oom" and model["fit"] is None and _plan_bytes(model) <= model["memory"]["cap_bytes"]


def _footprint(model):
    """NVML's device memory of the model's process, its CUDA context included; None where NVML did not see it."""
    value = model["memory"].get("process_device_bytes")
    return value if isinstance(value, int) else None


def reserve_blocks_the_next(reserve, grow):
    """Claim 4: a process that reserves nearly the whole device leaves the next one out of memory before it
    trains, where memory growth, with the same limit, lets both train."""
    reserving, growing = _runs(reserve)[0]["models"], _runs(grow)[0]["models"]
    held_by = [m for m in reserving if m["status"] == "ok"]
    blocked = [m for m in reserving if _out_before_training(m)]
    grew = [m for m in growing if m["status"] == "ok"]
    n = len(reserving)
    holding = f", the other holding {_size(held_by[0]['memory']['reserved_bytes'])}" if len(held_by) == 1 else ""
    figures = (f"reserving {_size(reserving[0]['memory']['cap_bytes'])} each, {len(blocked)} of {n} processes ran "
               f"out of memory before training{holding}; growing, with the same limit, {len(grew)} of {len(growing)} "
               f"trained, taking {' and '.join(_size(m['memory']['reserved_bytes']) for m in grew) or 'nothing'}")
    held = n >= 2 and len(held_by) == 1 and len(blocked) == n - 1 and len(grew) == len(growing)
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def process_overhead(doc):
    """What each process of a run held on its device beyond its pool (its CUDA context, its data, its
    kernels), the most of those that trained: from NVML's footprint of each process, or where NVML saw
    none (a container hides the processes' ids from it), from the device's peak use less their pools,
    over them; None when neither was seen."""
    run = _runs(doc)[0]
    trained = [m for m in run["models"] if m["status"] == "ok"]
    seen = [_footprint(m) - m["memory"]["reserved_bytes"] for m in trained if _footprint(m) is not None]
    if seen:
        return max(seen)
    gpu = run.get("gpu")
    if trained and isinstance(gpu, dict) and isinstance(gpu.get("peak_used_bytes"), int):
        return (gpu["peak_used_bytes"] - sum(m["memory"]["reserved_bytes"] for m in trained)) // len(trained)
    return None


def capped_partitions(device_bytes, naive, fitted, over):
    """Claim 6: N partitions of the device / N leave a process out of memory, as each process's runtime
    (its CUDA context) takes room too; N that leave room for it all train; and a model planned over its
    partition is refused before it trains."""
    first, second, big = (_runs(d)[0]["models"] for d in (naive, fitted, over))
    n, device = len(first), _size(device_bytes)
    out = [m for m in first if _out_before_training(m)]
    trained = [m for m in second if m["status"] == "ok"]
    refused = [m for m in big
               if m["status"] == "oom" and m["fit"] is None and _plan_bytes(m) > m["memory"]["cap_bytes"]]
    seen = [(_footprint(m), m["memory"]["cap_bytes"]) for m in trained if _footprint(m) is not None]
    footprints = (f", each process holding at most {_size(max(f - c for f, c in seen))} beyond its cap "
                  f"({_size(sum(f for f, _ in seen))} of {device} in all)" if seen else
                  " (NVML saw no process's footprint)")
    figures = (f"{n} partitions of {_size(first[0]['memory']['cap_bytes'])} (the device's {device} / {n}) left "
               f"{len(out)} of {n} processes out of memory before training; {len(second)} of "
               f"{_size(second[0]['memory']['cap_bytes'])}, leaving room for each process's context, "
               f"{'all trained' if len(trained) == len(second) else f'only {len(trained)} trained'}{footprints}; "
               f"a model planned at {_size(_plan_bytes(big[0]))} {'was' if refused else 'was not'} refused in its "
               f"{_size(big[0]['memory']['cap_bytes'])} partition before it trained")
    held = len(out) >= 1 and len(trained) == len(second) and len(refused) == len(big) >= 1
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def one_model_per_device(spread, together):
    """Claim 10: two models that each fill a GPU finish sooner one per GPU than both on one."""
    two, one = median_of(spread, "processes", "wall_s"), median_of(together, "processes", "wall_s")
    models = [m for d in (spread, together) for r in _runs(d) for m in r["models"]]
    if two is None or one is None or not models:
        return Verdict(False, "did not hold: a run's wall is missing from the documents")
    if any(m["status"] != "ok" for m in models):
        bad = sorted({f"{m['name']} {m['status']}" for m in models if m["status"] != "ok"})
        return Verdict(False, f"did not hold: not every model trained ({', '.join(bad)})")
    n = len(_runs(spread)[0]["models"])
    devices = sorted({m["device"] for m in _runs(spread)[0]["models"]})
    figures = (f"{n} models that each fill a GPU, on GPUs {', '.join(map(str, devices))}, took {two / one:.2f}x "
               f"the wall of both on GPU 0 ({two:.1f} s against {one:.1f} s)")
    held = len(devices) >= 2 and two < 0.75 * one
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)


def releasing_memory(released, kept):
    """Claim 7: released after each model, the run holds one model's memory at every model's end; with
    every pool kept, what it holds grows by about a pool with each model."""
    def held(doc):
        return [m.get("memory", {}).get("in_use_before_release_bytes") for m in doc.get("models", [])]
    r, k = held(released), held(kept)
    if len(r) < 2 or len(k) < 2 or None in r or None in k or not kept.get("pools_kept"):
        return Verdict(False, "did not hold: a run's memory figures (in_use_before_release_bytes, pools_kept) are "
                              "missing from its document")
    pool = statistics.median(m["memory"]["reserved_bytes"] for m in kept["models"])
    growth = (k[-1] - k[0]) / (len(k) - 1)
    mib = 2**20
    figures = (f"released after each, the run held at most {max(r) / mib:.1f} MiB (one pool and the data); kept, it "
               f"held {k[-1] / mib:.1f} MiB when the last of its {len(k)} models ended, {growth / mib:.1f} MiB more "
               f"with each; the process peaked at {released['host_peak_rss_bytes'] / mib:.0f} MiB against "
               f"{kept['host_peak_rss_bytes'] / mib:.0f} MiB")
    held_ = (max(r) <= 1.05 * min(r) and growth >= 0.9 * pool and pool > 0
             and all(later > earlier for earlier, later in zip(k, k[1:])))
    return Verdict(held_, ("held: " if held_ else "did not hold on this machine: ") + figures)


def crash_isolation(baseline, processes, streams):
    """Claim 8: a crash in one model costs processes mode that model alone, and streams (threads in
    one process) every model still training. `processes` and `streams` are lab.Outcome's of the
    runs with the fault: the exit code, the document (None when the process died first) and how
    many models the journal holds; `baseline` is streams' document without a fault."""
    if processes.doc is None:
        return Verdict(False, "did not hold: the processes run wrote no document")
    models = processes.doc["models"]
    n = len(models)
    ok = sum(m.get("status") == "ok" for m in models)
    if streams.doc is None:  # the process died: the journal holds what ended before
        lost, how = n - streams.journaled, f"the process was {streams.ended}"
    else:
        lost = sum(m.get("status") != "ok" for m in streams.doc["models"])
        how = "every model of the process failed with it" if lost == n else f"{lost} failed"
    startup, baseline_startup = processes.doc.get("startup_s"), baseline.get("startup_s")
    cost = (f"; the processes' start-up took {startup:.2f} s against {baseline_startup:.2f} s on streams"
            if isinstance(startup, (int, float)) and isinstance(baseline_startup, (int, float)) else "")
    figures = (f"one of {n} models crashed: processes mode lost {n - ok} of {n} ({ok} ended ok), streams lost {lost} of {n} "
               f"({how}){cost}")
    held = n > 1 and ok == n - 1 and lost > 1 and lost >= n - streams.journaled  # all still training were lost
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)



def _model_median(doc, name, figure):
    """The model `name`'s figure over the document's runs (--repeat): the median, or None where no run has it."""
    values = [m.get(figure) for r in _runs(doc) for m in r["models"] if m["name"] == name]
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def _first(doc, name, figure):
    """The model `name`'s figure in the document's first run."""
    return next((m.get(figure) for m in _runs(doc)[0]["models"] if m["name"] == name), None)


def _not_measured(label, outcome):
    """Why a run (a lab.Outcome) gave no figures to judge: it wrote no document, a model of it did not end
    ok, or it failed; None when it ran."""
    last = (outcome.stderr.strip().splitlines() or ["no message"])[-1]
    if outcome.doc is None:
        return f"{label} {outcome.ended} without a document ({last})"
    bad = [m for r in _runs(outcome.doc) for m in r["models"] if m.get("status") != "ok"]
    if bad:
        return f"{label}: {bad[0]['name']} {bad[0].get('status')} ({bad[0].get('error') or last})"
    return None if outcome.returncode == 0 else f"{label} {outcome.ended} ({last})"


def _not_taken(shared, partitioned, time_sliced, mps, mps_shared, small):
    """Where a run's document says its mechanism was not in force (the partitions not made, MPS not run,
    the shares not set, or the time-sliced processes under MPS); None where each was."""
    if not all(isinstance(r.get("sm_partitions"), int) for r in _runs(partitioned)) or \
            not isinstance(_first(partitioned, small, "sms"), int):
        return "--sm-partitions did not take (the run's sm_partitions or the small model's sms is null)"
    if any(r.get("sm_partitions") for r in _runs(shared)):
        return "the streams run meant to share every SM was split into partitions"
    if any(r.get("mps") is not False for r in _runs(time_sliced)):
        return "the processes meant to be time-sliced (--mps off) ran under MPS, or did not say"
    if not all(r.get("mps") is True for r in _runs(mps) + _runs(mps_shared)):
        return "the processes of --mps on did not run under MPS"
    if not isinstance(_first(mps_shared, small, "sm_share"), int):
        return "--sm-share did not take (the small model's sm_share is null)"
    return None


def partitions_change_contention(shared, partitioned, time_sliced, mps, mps_shared, small="narrow", big="wide"):
    """Claim 12: SM partitions isolate models at once: beside a model that fills the GPU, a small one
    trains much nearer its own speed on SMs of its own than sharing every SM, in one process (green
    contexts, --sm-partitions) and between processes (MPS with --sm-share). Each argument is a
    lab.Outcome of a --solo run of the same two models: streams sharing every SM, streams on
    partitions, processes time-sliced (--mps off), under MPS, and under MPS with a share each. Held
    when the small model's median slowdown on its own SMs is at most 2/3 of its slowdown sharing
    every SM, in streams mode and under MPS both. A run that failed, or whose mechanism did not take,
    is said instead, and the claim is then not held: it was not measured."""
    outcomes = [shared, partitioned, time_sliced, mps, mps_shared]
    flags = ["streams", "streams --sm-partitions", "processes --mps off", "processes --mps on",
             "processes --mps on --sm-share"]
    failed = [why for why in map(_not_measured, flags, outcomes) if why]
    if failed:
        return Verdict(False, "did not hold: could not measure it here: " + "; ".join(failed))
    docs = [o.doc for o in outcomes]
    not_taken = _not_taken(*docs, small)
    if not_taken:
        return Verdict(False, f"did not hold: {not_taken}")
    slowdowns = {name: [_model_median(doc, name, "slowdown") for doc in docs] for name in (small, big)}
    if None in slowdowns[small] + slowdowns[big]:
        return Verdict(False, "did not hold: a model's slowdown is missing (a run made without --solo?)")
    (a, b, c, d, e), (wa, wb, _, wd, we) = slowdowns[small], slowdowns[big]  # in the order of `outcomes`
    walls = ", ".join(f"{label} {statistics.median(r['wall_s'] for r in _runs(doc)):.2f} s" for label, doc in
                      zip(["streams", "on partitions", "time-sliced", "MPS", "MPS with shares"], docs))
    figures = (f"beside the {big} model, the {small} one trained {a:.1f}x slower than alone sharing every SM and "
               f"{b:.1f}x on {_first(docs[1], small, 'sms')} SMs of its own ({_runs(docs[1])[0]['sm_partitions']} "
               f"partitions; the {big} one {wa:.1f}x, then {wb:.1f}x); between processes {d:.1f}x under MPS and "
               f"{e:.1f}x with a {_first(docs[4], small, 'sm_share')}% SM share each (the {big} one {wd:.1f}x, then "
               f"{we:.1f}x), {c:.1f}x time-sliced; the runs' walls: {walls}")
    held = b <= 2 / 3 * a and e <= 2 / 3 * d
    return Verdict(held, ("held: " if held else "did not hold on this machine: ") + figures)
