"""multifit.integration.optuna: an Optuna study's trials trained many at a time, reported to it
after each epoch, pruned inside the run, and told their ends."""
import pytest

import multifit
import multifit.keras

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs optuna")
from multifit.integration.optuna import optimize  # noqa: E402

TrialState = optuna.trial.TrialState
EPOCHS = 4


class OddTrialsAfterTwoEpochs(optuna.pruners.BasePruner):
    """Prunes the trials of odd number at their second epoch's report: a verdict known in advance."""

    def prune(self, study, trial):
        return trial.number % 2 == 1 and trial.last_step == 2


def model_of(trial):
    """Input(20), Dense(8 relu), Dense(1 sigmoid): one shape, so that a batch is one pack; the
    learning rate from the trial."""
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(8, activation="relu"),
                                 multifit.layers.Dense(1, activation="sigmoid")], seed=trial.number + 1)
    model.compile(optimizer=multifit.keras.optimizers.Adam(trial.suggest_float("learning_rate", 1e-3, 1e-1, log=True)),
                  loss="binary_crossentropy", backend="cpu", threads=1)
    return model


def study_of(pruner):
    return optuna.create_study(direction="minimize", sampler=optuna.samplers.RandomSampler(seed=5), pruner=pruner)


def run_study(binary_task, mode, pruner=None, **kwargs):
    x, y = binary_task
    study = study_of(pruner or OddTrialsAfterTwoEpochs())
    # one training thread: the cpu backend's packed mode makes a pack per thread
    results = optimize(study, model_of, 6, batch=4, data=(x, y), epochs=EPOCHS, mode=mode, backend="cpu",
                       threads=1, validation_split=0.25, **kwargs)
    return study, results


def test_trials_train_together_are_pruned_in_the_pack_and_told_their_ends(binary_task):
    study, results = run_study(binary_task, "packed")
    assert [len(r.models) for r in results] == [4, 2]  # two batches: 4 trials, then 2
    models = {m["name"]: m for r in results for m in r.models}
    assert all(m["pack"] is not None for m in models.values())
    assert [r.models[0]["pack_members"] for r in results] == [4, 2]  # one shape: one pack a batch
    for trial in study.trials:
        model = models[f"trial-{trial.number}"]
        losses = [e["val_loss"] for e in model["epochs"]]
        if trial.number % 2:  # stopped after its second epoch, inside its pack
            assert trial.state == TrialState.PRUNED
            assert len(losses) == 2 and model["status"] == "stopped"
            assert model["fit"]["stop_reason"].startswith("Optuna's pruner: val_loss ")
        else:
            assert trial.state == TrialState.COMPLETE
            assert len(losses) == EPOCHS and model["status"] == "ok"
            assert trial.value == losses[-1]
        # every epoch's metric reported, as the run measured it
        assert trial.intermediate_values == {epoch + 1: loss for epoch, loss in enumerate(losses)}
    assert study.best_value == min(t.value for t in study.trials if t.state == TrialState.COMPLETE)


def test_a_packed_study_gives_a_serial_ones_numbers(binary_task):
    packed, _ = run_study(binary_task, "packed")
    serial, _ = run_study(binary_task, "serial")
    assert [(t.state, t.params, t.intermediate_values) for t in packed.trials] == \
           [(t.state, t.params, t.intermediate_values) for t in serial.trials]


def test_any_sampler_and_pruner(binary_task):
    x, y = binary_task
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=3),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1))
    optimize(study, model_of, 8, batch=4, data=(x, y), epochs=EPOCHS, backend="cpu", validation_split=0.25)
    assert len(study.trials) == 8
    assert {t.state for t in study.trials} <= {TrialState.COMPLETE, TrialState.PRUNED}
    assert study.best_trial.state == TrialState.COMPLETE


def test_what_model_fn_raises(binary_task):
    x, y = binary_task

    def prunes_trial_1(trial):
        if trial.number == 1:
            raise optuna.TrialPruned()
        return model_of(trial)

    study = study_of(optuna.pruners.NopPruner())
    optimize(study, prunes_trial_1, 3, batch=3, data=(x, y), epochs=2, backend="cpu", validation_split=0.25)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE, TrialState.PRUNED, TrialState.COMPLETE]

    def breaks_on_trial_1(trial):
        if trial.number == 1:
            raise KeyError("no such setting")
        return model_of(trial)

    study = study_of(optuna.pruners.NopPruner())
    with pytest.raises(KeyError, match="no such setting"):
        optimize(study, breaks_on_trial_1, 3, batch=3, data=(x, y), epochs=2, backend="cpu")
    assert [t.state for t in study.trials] == [TrialState.FAIL] * 3  # none left running


def test_a_pruner_that_raises_stops_the_run_and_is_raised(binary_task):
    class Broken(optuna.pruners.BasePruner):
        def prune(self, study, trial):
            raise RuntimeError("the pruner broke")

    study = study_of(Broken())
    with pytest.raises(RuntimeError, match="the pruner broke"):
        run_study_with(study, binary_task)
    assert [t.state for t in study.trials] == [TrialState.FAIL] * 2


def run_study_with(study, binary_task):
    x, y = binary_task
    return optimize(study, model_of, 2, batch=2, data=(x, y), epochs=EPOCHS, backend="cpu", validation_split=0.25)


def test_what_would_train_a_trial_elsewhere_or_twice_is_refused(binary_task):
    study = study_of(optuna.pruners.NopPruner())
    x, y = binary_task
    for mode in ("processes", "auto"):  # before any trial is asked
        with pytest.raises(ValueError, match=f"mode '{mode}'; expected one of packed, streams, serial"):
            optimize(study, model_of, 2, data=(x, y), epochs=2, mode=mode)
    assert study.trials == []
    # the run's own refusal: one line, and the batch's trials told
    with pytest.raises(ValueError, match="rules on each trial as it trains here, once, so it takes no --solo"):
        optimize(study, model_of, 2, batch=2, data=(x, y), epochs=2, backend="cpu", validation_split=0.25, solo=True)
    assert [t.state for t in study.trials] == [TrialState.FAIL] * 2


def test_a_model_the_run_refuses_or_a_metric_it_lacks_is_raised_once_the_batch_is_told(binary_task):
    x, y = binary_task

    def too_wide_for_trial_1(trial):
        if trial.number != 1:
            return model_of(trial)
        model = multifit.Sequential([multifit.layers.Input(shape=(50,)), multifit.layers.Dense(1, activation="sigmoid")])
        model.compile(optimizer="adam", loss="binary_crossentropy", backend="cpu")
        return model

    study = study_of(optuna.pruners.NopPruner())
    with pytest.raises(ValueError, match="optimize: trial 1: .*50"):
        optimize(study, too_wide_for_trial_1, 6, batch=3, data=(x, y), epochs=2, backend="cpu",
                 validation_split=0.25)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE, TrialState.FAIL, TrialState.COMPLETE]
    for metric, epochs in (("val_auc", 3), ("val_auc", 1), ("foo", 3)):  # judged after an epoch, or at the end
        study = study_of(optuna.pruners.NopPruner())
        with pytest.raises(ValueError, match=f"trial [01]'s model reports no {metric} after an epoch"):
            optimize(study, model_of, 2, batch=2, data=(x, y), epochs=epochs, backend="cpu", metric=metric,
                     validation_split=0.25)
        assert [t.state for t in study.trials] == [TrialState.FAIL] * 2, (metric, epochs)


def test_wrong_arguments():
    with pytest.raises(TypeError, match="expected an optuna.Study"):
        optimize("study", model_of, 2, data="synthetic:binary")
    with pytest.raises(ValueError, match="the study has 2 objectives"):
        optimize(optuna.create_study(directions=["minimize", "maximize"]), model_of, 2, data="synthetic:binary")
    study = study_of(optuna.pruners.NopPruner())
    with pytest.raises(ValueError, match="n_trials 0 and batch 4 must be whole numbers, 1 or more"):
        optimize(study, model_of, 0, batch=4, data="synthetic:binary")
    with pytest.raises(ValueError, match="epochs 0; expected a whole number, 1 or more"):
        optimize(study, model_of, 1, data="synthetic:binary", epochs=0)
    assert study.trials == []
    with pytest.raises(TypeError, match="model_fn's model for trial 0 is str; expected a multifit.Sequential"):
        optimize(study, lambda trial: "a model", 1, data="synthetic:binary")
    with pytest.raises(ValueError, match=r"metric val_loss needs validation rows, and trial 1's model has none \(val"):
        optimize(study, model_of, 1, data="synthetic:binary", validation_split=0.0)
