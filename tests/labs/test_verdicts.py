"""The labs' verdicts (labs/verdicts.py) on documents that should and should not hold: the shapes of
multifit's result documents, with the figures a verdict reads."""
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "labs"))
import verdicts  # noqa: E402


def run(mode, wall, startup=0.0, slowdowns=(), repeat=1):
    return {"mode": mode, "repeat": repeat, "wall_s": wall, "startup_s": startup,
            "models": [{"name": f"m{i}", "slowdown": s} for i, s in enumerate(slowdowns)]}


def all_modes(*runs):
    return {"mode": "all", "runs": list(runs)}


def trained(epoch_s, wait_s):
    epochs = [{"seconds": epoch_s, "input_wait_s": wait_s}] * 3
    return {"mode": "serial", "models": [{"name": "m", "epochs": epochs}]}


class SmallModelsAtOnce(unittest.TestCase):
    def test_held_when_the_wall_falls_and_each_model_slows(self):
        v = verdicts.small_models_at_once(all_modes(run("serial", 1.0, slowdowns=[1, 1]),
                                                    run("streams", 0.55, slowdowns=[3.0, 3.2])))
        self.assertTrue(v.held)
        self.assertEqual(v.line, "held: streams finished the 2 tiny models in 0.55x serial's wall; "
                                 "each model trained 3.1x slower")

    def test_not_held_when_streams_is_slower(self):
        v = verdicts.small_models_at_once(all_modes(run("serial", 1.0, slowdowns=[1]), run("streams", 1.2, slowdowns=[2])))
        self.assertFalse(v.held)
        self.assertTrue(v.line.startswith("did not hold on this machine: streams finished the 1 tiny models in 1.20x"))

    def test_the_median_of_the_rounds_decides(self):
        doc = all_modes(run("serial", 1.0, slowdowns=[1]), run("streams", 0.1, slowdowns=[2]),
                        run("serial", 1.0, slowdowns=[1], repeat=2), run("streams", 1.5, slowdowns=[2], repeat=2),
                        run("serial", 1.0, slowdowns=[1], repeat=3), run("streams", 1.1, slowdowns=[2], repeat=3))
        self.assertFalse(verdicts.small_models_at_once(doc).held, "one lucky round of three is not the median")

    def test_a_missing_mode_does_not_hold(self):
        self.assertFalse(verdicts.small_models_at_once(run("serial", 1.0, slowdowns=[1])).held)


class SaturatingModel(unittest.TestCase):
    def test_held_when_at_once_gains_nothing_and_each_is_twice_as_slow(self):
        v = verdicts.saturating_model(all_modes(run("serial", 2.0, slowdowns=[1, 1]), run("streams", 1.95, slowdowns=[1.9, 2.0])))
        self.assertTrue(v.held, v.line)

    def test_not_held_when_two_at_once_finish_in_half_the_wall(self):
        v = verdicts.saturating_model(all_modes(run("serial", 2.0, slowdowns=[1, 1]), run("streams", 1.06, slowdowns=[1.2, 1.2])))
        self.assertFalse(v.held)
        self.assertIn("took 0.53x serial's wall at once; each trained 1.2x slower", v.line)


class InputBound(unittest.TestCase):
    def test_held_when_both_remedies_help(self):
        sweep = all_modes(run("serial", 0.8), run("streams", 0.4))
        v = verdicts.input_bound(trained(0.090, 0.088), trained(0.045, 0.044), sweep)
        self.assertTrue(v.held, v.line)
        self.assertIn("waited 98% of its epoch", v.line)
        self.assertIn("from 90.0 ms to 45.0 ms (0.50x)", v.line)

    def test_not_held_when_the_model_was_not_waiting(self):
        sweep = all_modes(run("serial", 0.8), run("streams", 0.4))
        self.assertFalse(verdicts.input_bound(trained(0.090, 0.001), trained(0.045, 0.0), sweep).held)

    def test_not_held_when_the_pipeline_does_not_help(self):
        sweep = all_modes(run("serial", 0.8), run("streams", 0.4))
        self.assertFalse(verdicts.input_bound(trained(0.090, 0.088), trained(0.088, 0.086), sweep).held)


class StartupOverhead(unittest.TestCase):
    def test_held_when_processes_take_longer_mostly_starting(self):
        v = verdicts.startup_overhead(all_modes(run("streams", 0.01, 0.004), run("processes", 0.15, 0.13)))
        self.assertTrue(v.held)
        self.assertEqual(v.line, "held: 0 short trainings took 15.0x as long in separate processes as in one, 87% of "
                                 "it their start-up")

    def test_not_held_for_long_trainings(self):
        self.assertFalse(verdicts.startup_overhead(all_modes(run("streams", 10.0, 0.01), run("processes", 10.3, 0.2))).held)


def capped(mode, slowdown, peak, cap=2 << 20, status="ok"):
    return {"mode": mode, "repeat": 1, "wall_s": 1.0,
            "models": [{"name": f"m{i}", "status": status, "slowdown": slowdown,
                        "memory": {"cap_bytes": cap, "peak_bytes": peak}} for i in range(8)]}


class MemoryCap(unittest.TestCase):
    def test_held_when_all_fit_and_each_still_slows(self):
        v = verdicts.memory_cap(all_modes(capped("serial", 1.0, 1 << 20), capped("streams", 3.9, 1 << 20)))
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: 8 models capped at 2 MiB each all fit at once (the largest pool peak 1.00 MiB); "
                                 "each still trained 3.9x slower than alone")

    def test_not_held_when_a_model_did_not_fit(self):
        v = verdicts.memory_cap(all_modes(capped("serial", 1.0, 1 << 20), capped("streams", 3.9, 1 << 20, status="oom")))
        self.assertFalse(v.held)
        self.assertIn("did not all fit", v.line)

    def test_not_held_when_no_model_slowed(self):
        self.assertFalse(verdicts.memory_cap(all_modes(capped("serial", 1.0, 1 << 20), capped("streams", 1.1, 1 << 20))).held)


GiB = 1 << 30


def on_gpu(status="ok", cap=GiB, reserved=None, plan=1 << 20, footprint=None, device=0, name="m"):
    """A model of a run on the cuda backend: oom before training has no fit, and reserved nothing."""
    trained = status != "oom"
    return {"name": name, "status": status, "device": device, "fit": {"status": "ok", "why": None} if trained else None,
            "memory": {"cap_bytes": cap, "reserved_bytes": (cap if reserved is None else reserved) if trained else 0,
                       "peak_bytes": plan if trained else 0, "process_device_bytes": footprint,
                       "plan": [{"name": "parameters", "bytes": plan // 2}, {"name": "batch x", "bytes": plan - plan // 2}]}}


def processes(*models, wall=1.0, gpu=None, repeat=1):
    return {"mode": "processes", "repeat": repeat, "wall_s": wall, "gpu": gpu, "models": list(models)}


H200 = [{"index": 0, "name": "NVIDIA H200", "memory_bytes": 150_110_000_000}]


class NeedsGpus(unittest.TestCase):
    def test_skipped_without_a_gpu_saying_why(self):
        v = verdicts.needs_gpus([], "this multifit is built without CUDA (MULTIFIT_CUDA=OFF)")
        self.assertIsNone(v.held)
        self.assertEqual(v.line, "skipped: needs a GPU (this machine has none: multifit info found no CUDA device: "
                                 "this multifit is built without CUDA (MULTIFIT_CUDA=OFF))")

    def test_skipped_with_one_gpu_of_two_naming_it(self):
        v = verdicts.needs_gpus(H200, "", count=2)
        self.assertIsNone(v.held)
        self.assertEqual(v.line, "skipped: needs 2 GPUs (this machine has 1: cuda:0 NVIDIA H200)")

    def test_no_skip_with_enough(self):
        self.assertIsNone(verdicts.needs_gpus(H200, ""))
        self.assertIsNone(verdicts.needs_gpus(H200 * 2, "", count=2))


class ReserveBlocksTheNext(unittest.TestCase):
    cap = 125 * GiB

    def test_held_when_the_second_reserver_is_out_and_both_grow(self):
        reserve = processes(on_gpu(cap=self.cap), on_gpu("oom", cap=self.cap))
        grow = processes(on_gpu(cap=self.cap, reserved=1 << 20), on_gpu(cap=self.cap, reserved=1 << 20))
        v = verdicts.reserve_blocks_the_next(reserve, grow)
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: reserving 125.00 GiB each, 1 of 2 processes ran out of memory before training, "
                                 "the other holding 125.00 GiB; growing, with the same limit, 2 of 2 trained, taking "
                                 "1.00 MiB and 1.00 MiB")

    def test_not_held_when_both_reservations_fit(self):
        v = verdicts.reserve_blocks_the_next(processes(on_gpu(cap=GiB), on_gpu(cap=GiB)),
                                             processes(on_gpu(cap=GiB), on_gpu(cap=GiB)))
        self.assertFalse(v.held)
        self.assertIn("0 of 2 processes ran out of memory", v.line)

    def test_not_held_when_growth_is_out_too(self):
        reserve = processes(on_gpu(cap=self.cap), on_gpu("oom", cap=self.cap))
        v = verdicts.reserve_blocks_the_next(reserve, processes(on_gpu(cap=self.cap, reserved=1 << 20),
                                                                 on_gpu("oom", cap=self.cap)))
        self.assertFalse(v.held)
        self.assertIn("1 of 2 trained", v.line)

    def test_a_plan_over_the_cap_is_not_the_device_blocking(self):
        reserve = processes(on_gpu(cap=GiB), on_gpu("oom", cap=GiB, plan=2 * GiB))
        self.assertFalse(verdicts.reserve_blocks_the_next(reserve, processes(on_gpu(), on_gpu())).held)


class CappedPartitions(unittest.TestCase):
    device = 140 * GiB

    def naive(self):
        cap = self.device // 4
        return processes(*[on_gpu(cap=cap, footprint=cap + GiB // 2) for _ in range(3)], on_gpu("oom", cap=cap))

    def fitted(self, status="ok", footprint=True):
        cap = 34 * GiB
        return processes(*[on_gpu(status if i == 3 else "ok", cap=cap, footprint=cap + GiB // 2 if footprint else None)
                           for i in range(4)], gpu={"peak_used_bytes": 138 * GiB, "total_bytes": self.device})

    def over(self, plan=68 * GiB):
        return processes(on_gpu("oom", cap=34 * GiB, plan=plan))

    def test_held_when_the_naive_split_leaves_one_out_and_the_fitted_one_trains_all(self):
        v = verdicts.capped_partitions(self.device, self.naive(), self.fitted(), self.over())
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: 4 partitions of 35.00 GiB (the device's 140.00 GiB / 4) left 1 of 4 processes "
                                 "out of memory before training; 4 of 34.00 GiB, leaving room for each process's "
                                 "context, all trained, each process holding at most 512.00 MiB beyond its cap "
                                 "(138.00 GiB of 140.00 GiB in all); a model planned at 68.00 GiB was refused in its "
                                 "34.00 GiB partition before it trained")

    def test_not_held_when_the_naive_split_fits(self):
        cap = self.device // 4
        naive = processes(*[on_gpu(cap=cap) for _ in range(4)])
        v = verdicts.capped_partitions(self.device, naive, self.fitted(), self.over())
        self.assertFalse(v.held)
        self.assertIn("left 0 of 4 processes out of memory", v.line)

    def test_not_held_when_a_fitted_partition_is_out(self):
        v = verdicts.capped_partitions(self.device, self.naive(), self.fitted("oom"), self.over())
        self.assertFalse(v.held)
        self.assertIn("context, only 3 trained, each", v.line)

    def test_not_held_when_the_big_model_fits_its_partition(self):
        over = processes(on_gpu(cap=34 * GiB, plan=20 * GiB))
        v = verdicts.capped_partitions(self.device, self.naive(), self.fitted(), over)
        self.assertFalse(v.held)
        self.assertIn("was not refused", v.line)

    def test_footprints_unseen_are_said_and_do_not_decide(self):
        v = verdicts.capped_partitions(self.device, self.naive(), self.fitted(footprint=False), self.over())
        self.assertTrue(v.held, v.line)
        self.assertIn("(NVML saw no process's footprint)", v.line)

    def test_the_overhead_from_each_process_or_else_from_the_device(self):
        self.assertEqual(verdicts.process_overhead(self.naive()), GiB // 2)
        unseen = processes(on_gpu(cap=30 * GiB), on_gpu(cap=30 * GiB), on_gpu("oom"),
                           gpu={"peak_used_bytes": 62 * GiB, "total_bytes": self.device})
        self.assertEqual(verdicts.process_overhead(unseen), GiB)  # over the two that held their pools
        self.assertIsNone(verdicts.process_overhead(processes(on_gpu(cap=GiB), gpu=None)))


class OneModelPerDevice(unittest.TestCase):
    def test_held_when_two_gpus_take_about_half_the_wall(self):
        spread = processes(on_gpu(device=0), on_gpu(device=1), wall=5.2)
        together = processes(on_gpu(device=0), on_gpu(device=0), wall=9.8)
        v = verdicts.one_model_per_device(spread, together)
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: 2 models that each fill a GPU, on GPUs 0, 1, took 0.53x the wall of both on "
                                 "GPU 0 (5.2 s against 9.8 s)")

    def test_not_held_when_the_second_gpu_gains_little(self):
        v = verdicts.one_model_per_device(processes(on_gpu(device=0), on_gpu(device=1), wall=9.0),
                                          processes(on_gpu(), on_gpu(), wall=10.0))
        self.assertFalse(v.held)
        self.assertIn("took 0.90x", v.line)

    def test_not_held_when_both_models_were_on_one_gpu(self):
        self.assertFalse(verdicts.one_model_per_device(processes(on_gpu(), on_gpu(), wall=5.0),
                                                       processes(on_gpu(), on_gpu(), wall=10.0)).held)

    def test_not_held_when_a_model_failed(self):
        v = verdicts.one_model_per_device(processes(on_gpu(device=0), on_gpu("failed", name="b", device=1), wall=1.0),
                                          processes(on_gpu(), on_gpu(), wall=10.0))
        self.assertFalse(v.held)
        self.assertEqual(v.line, "did not hold: not every model trained (b failed)")

    def test_the_median_of_the_rounds_decides(self):
        spread = all_modes(*[processes(on_gpu(device=0), on_gpu(device=1), wall=w, repeat=i + 1)
                             for i, w in enumerate([1.0, 9.5, 9.6])])
        together = all_modes(*[processes(on_gpu(), on_gpu(), wall=10.0, repeat=i + 1) for i in range(3)])
        self.assertFalse(verdicts.one_model_per_device(spread, together).held)


def serial_memory(held, kept, pool=32 << 20, peak=100 << 20):
    return {"mode": "serial", "pools_kept": kept, "host_peak_rss_bytes": peak,
            "models": [{"name": f"m{i}", "memory": {"reserved_bytes": pool, "in_use_before_release_bytes": h}}
                       for i, h in enumerate(held)]}


class ReleasingMemory(unittest.TestCase):
    MiB = 1 << 20

    def test_held_when_released_stays_flat_and_kept_grows_a_pool_a_model(self):
        released = serial_memory([33 * self.MiB] * 4, False, peak=60 * self.MiB)
        kept = serial_memory([33 * self.MiB, 65 * self.MiB, 97 * self.MiB, 129 * self.MiB], True, peak=160 * self.MiB)
        v = verdicts.releasing_memory(released, kept)
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: released after each, the run held at most 33.0 MiB (one pool and the data); "
                                 "kept, it held 129.0 MiB when the last of its 4 models ended, 32.0 MiB more with "
                                 "each; the process peaked at 60 MiB against 160 MiB")

    def test_not_held_when_the_released_run_grows_too(self):
        grows = [33 * self.MiB, 65 * self.MiB, 97 * self.MiB]
        self.assertFalse(verdicts.releasing_memory(serial_memory(grows, False), serial_memory(grows, True)).held)

    def test_not_held_when_the_kept_run_did_not_keep(self):
        flat = [33 * self.MiB] * 3
        v = verdicts.releasing_memory(serial_memory(flat, False), serial_memory(flat, True))
        self.assertFalse(v.held)
        self.assertIn("0.0 MiB more with each", v.line)

    def test_a_document_without_the_figures_does_not_hold(self):
        flat = [33 * self.MiB] * 3
        self.assertFalse(verdicts.releasing_memory(serial_memory(flat, False), serial_memory(flat, False)).held)
        self.assertFalse(verdicts.releasing_memory(serial_memory([None] * 3, False), serial_memory(flat, True)).held)


def outcome(returncode, statuses=None, journaled=0, startup=None):
    doc = None if statuses is None else {"startup_s": startup,
                                         "models": [{"name": f"m{i}", "status": s} for i, s in enumerate(statuses)]}
    return types.SimpleNamespace(returncode=returncode, doc=doc, journaled=journaled,
                                 ended="killed by SIGSEGV" if returncode < 0 else f"ended with exit code {returncode}")


class CrashIsolation(unittest.TestCase):
    baseline = {"startup_s": 0.02}

    def test_held_when_processes_lose_one_and_the_shared_process_dies(self):
        v = verdicts.crash_isolation(self.baseline, outcome(1, ["ok", "failed", "ok", "ok"], startup=0.2), outcome(-11))
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: one of 4 models crashed: processes mode lost 1 of 4 (3 ended ok), streams "
                                 "lost 4 of 4 (the process was killed by SIGSEGV); the processes' start-up took "
                                 "0.20 s against 0.02 s on streams")

    def test_held_on_a_gpu_where_a_poisoned_context_fails_every_model(self):
        v = verdicts.crash_isolation(self.baseline, outcome(1, ["ok", "failed", "ok"], startup=0.9),
                                     outcome(1, ["failed", "failed", "failed"]))
        self.assertTrue(v.held, v.line)
        self.assertIn("streams lost 3 of 3 (every model of the process failed with it)", v.line)

    def test_models_that_ended_before_the_crash_are_not_lost(self):
        v = verdicts.crash_isolation(self.baseline, outcome(1, ["ok", "failed", "ok", "ok"]), outcome(-11, journaled=1))
        self.assertTrue(v.held, v.line)
        self.assertIn("streams lost 3 of 4", v.line)

    def test_not_held_when_the_crash_took_other_processes_with_it(self):
        v = verdicts.crash_isolation(self.baseline, outcome(1, ["failed", "failed", "ok", "ok"]), outcome(-11))
        self.assertFalse(v.held)
        self.assertIn("(2 ended ok)", v.line)

    def test_not_held_when_the_shared_process_survived_with_its_models(self):
        self.assertFalse(verdicts.crash_isolation(self.baseline, outcome(1, ["ok", "failed", "ok"]),
                                                  outcome(1, ["ok", "failed", "ok"])).held)

    def test_no_processes_document_does_not_hold(self):
        self.assertFalse(verdicts.crash_isolation(self.baseline, outcome(-9), outcome(-11)).held)


def searched(wall, finals, samples):
    """A search's document: each model's status and last val_accuracy (None: stopped at a rung)."""
    models = [{"status": "ok" if v is not None else "stopped", "epochs": [{"val_accuracy": v if v is not None else 0.5}],
               "samples": s} for v, s in zip(finals, samples)]
    return {"mode": "packed", "wall_s": wall, "models": models}


class EarlyStoppingOfTrials(unittest.TestCase):
    full = searched(2.0, [0.90, 0.93, 0.80], [900, 900, 900])

    def test_held_for_the_same_best_at_a_fifth_of_the_compute(self):
        v = verdicts.early_stopping_of_trials(self.full, searched(0.5, [0.90, 0.93, None], [300, 200, 40]))
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: ASHA stopped 1 of 3 trials, trained 20% of the full sweep's samples in 0.25x "
                                 "its wall, and found val_accuracy 0.9300 against 0.9300 (+0.00 points)")

    def test_not_held_when_the_best_was_stopped(self):
        v = verdicts.early_stopping_of_trials(self.full, searched(0.5, [0.90, None, None], [300, 40, 40]))
        self.assertFalse(v.held)
        self.assertIn("(-3.00 points)", v.line)

    def test_not_held_when_it_saves_too_little(self):
        self.assertFalse(verdicts.early_stopping_of_trials(self.full, searched(1.5, [0.90, 0.93, 0.8], [900, 900, 900])).held)

    def test_no_finished_trial_does_not_hold(self):
        self.assertFalse(verdicts.early_stopping_of_trials(self.full, searched(0.1, [None, None, None], [1, 1, 1])).held)


def contended(mode, narrow, wide, wall=2.0, repeat=1, mps=None, sm_partitions=None, sms=None, sm_share=None):
    """One run of lab 12's two models: each one's slowdown, and the mechanisms the run records."""
    return {"mode": mode, "repeat": repeat, "wall_s": wall, "mps": mps, "sm_partitions": sm_partitions,
            "models": [{"name": "wide", "status": "ok", "error": None, "slowdown": wide, "sms": sms,
                        "sm_share": sm_share},
                       {"name": "narrow", "status": "ok", "error": None, "slowdown": narrow, "sms": sms,
                        "sm_share": sm_share}]}


def ran(doc, returncode=0, stderr=""):
    return types.SimpleNamespace(returncode=returncode, doc=doc, stderr=stderr, ended=f"ended with exit code {returncode}")


class PartitionsChangeContention(unittest.TestCase):
    def runs(self, partitioned_narrow=1.2, shared_narrow=1.3, mps_narrow=7.0):
        """Streams sharing, on partitions, processes time-sliced, under MPS, under MPS with shares."""
        return [ran(contended("streams", 8.0, 1.1, wall=2.0)),
                ran(contended("streams", partitioned_narrow, 1.9, wall=2.6, sm_partitions=2, sms=64)),
                ran(contended("processes", 2.5, 1.5, wall=3.5, mps=False)),
                ran(contended("processes", mps_narrow, 1.0, wall=2.2, mps=True)),
                ran(contended("processes", shared_narrow, 1.8, wall=2.8, mps=True, sm_share=50))]

    def test_held_when_the_small_model_keeps_its_speed_on_its_own_sms(self):
        v = verdicts.partitions_change_contention(*self.runs())
        self.assertTrue(v.held, v.line)
        self.assertEqual(v.line, "held: beside the wide model, the narrow one trained 8.0x slower than alone sharing "
                                 "every SM and 1.2x on 64 SMs of its own (2 partitions; the wide one 1.1x, then 1.9x); "
                                 "between processes 7.0x under MPS and 1.3x with a 50% SM share each (the wide one "
                                 "1.0x, then 1.8x), 2.5x time-sliced; the runs' walls: streams 2.00 s, on partitions "
                                 "2.60 s, time-sliced 3.50 s, MPS 2.20 s, MPS with shares 2.80 s")

    def test_not_held_when_the_partitions_leave_it_as_slow(self):
        v = verdicts.partitions_change_contention(*self.runs(partitioned_narrow=6.0))
        self.assertFalse(v.held)
        self.assertIn("did not hold on this machine: beside the wide model, the narrow one trained 8.0x slower than "
                      "alone sharing every SM and 6.0x on 64 SMs", v.line)

    def test_not_held_when_the_shares_leave_it_as_slow_between_processes(self):
        self.assertFalse(verdicts.partitions_change_contention(*self.runs(shared_narrow=5.0)).held)
        self.assertTrue(verdicts.partitions_change_contention(*self.runs(shared_narrow=4.6)).held, "2/3 of 7.0 is 4.67")

    def test_a_run_that_failed_is_said_not_judged(self):
        runs = self.runs()
        runs[3] = ran(None, 2, "multifit: error: --mps on: the MPS control daemon did not start: no control program")
        runs[4] = ran(dict(runs[4].doc, models=[dict(runs[4].doc["models"][0], status="failed",
                                                     error="CUDA error: MPS client failed to connect")]), 1)
        v = verdicts.partitions_change_contention(*runs)
        self.assertFalse(v.held)
        self.assertEqual(v.line, "did not hold: could not measure it here: processes --mps on ended with exit code 2 "
                                 "without a document (multifit: error: --mps on: the MPS control daemon did not start: "
                                 "no control program); processes --mps on --sm-share: wide failed (CUDA error: MPS "
                                 "client failed to connect)")

    def test_a_mechanism_that_did_not_take_is_said(self):
        runs = self.runs()
        runs[1] = ran(contended("streams", 1.2, 1.9))  # no partitions recorded
        self.assertEqual(verdicts.partitions_change_contention(*runs).line,
                         "did not hold: --sm-partitions did not take (the run's sm_partitions or the small model's "
                         "sms is null)")
        runs = self.runs()
        runs[2] = ran(contended("processes", 2.5, 1.5, mps=True))
        self.assertIn("time-sliced (--mps off) ran under MPS", verdicts.partitions_change_contention(*runs).line)
        runs = self.runs()
        runs[4] = ran(contended("processes", 1.3, 1.8, mps=True))
        self.assertIn("--sm-share did not take", verdicts.partitions_change_contention(*runs).line)

    def test_a_run_without_solo_has_no_slowdown_to_judge(self):
        runs = self.runs()
        runs[0] = ran(contended("streams", None, None))
        self.assertIn("slowdown is missing", verdicts.partitions_change_contention(*runs).line)

    def test_the_median_of_the_rounds_decides(self):
        runs = self.runs()
        runs[1] = ran(all_modes(*[contended("streams", s, 1.9, repeat=i + 1, sm_partitions=2, sms=64)
                                  for i, s in enumerate([1.2, 7.5, 7.9])]))
        v = verdicts.partitions_change_contention(*runs)
        self.assertFalse(v.held, "one lucky round of three is not the median")
        self.assertIn("7.5x on 64 SMs", v.line)


if __name__ == "__main__":
    unittest.main()
