"""The labs' verdicts (labs/verdicts.py) on documents that should and should not hold: the shapes of
multifit's result documents, with the figures a verdict reads."""
import os
import sys
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


if __name__ == "__main__":
    unittest.main()
