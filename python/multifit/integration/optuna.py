"""An Optuna study drives multifit's trials, many at a time.

optimize() asks the study for `batch` trials at once (Optuna's ask-and-tell interface), builds each
trial's model with model_fn(trial), and trains them together in one multifit.run: in packed mode by
default, where the models that share a shape share each launch (nn/pack_key.h). After every epoch
but a trial's last, the run hands each trial's metric to Optuna (trial.report) and stops the trial
where trial.should_prune() says so: its training ends there, inside the pack, while the others go
on. Then it tells the study each trial's end: its last epoch's metric, PRUNED, or FAIL. Any sampler
and pruner work (TPE, CMA-ES, random; median, successive halving, Hyperband, ...).

Optuna is not a dependency of multifit: this module imports it (pip install optuna).
"""
import math

import optuna

from .._arrays import features_and_targets
from ..study import _run, _spec_of


_MODES = ("packed", "streams", "serial")


class _Pruner:
    """The run's judge of its trials (the binding's judge.h): the `metric` after each epoch,
    reported to the trial of that place in the batch, and its pruner's verdict."""

    name = "Optuna's pruner"

    def __init__(self, trials, metric):
        self.trials = trials
        self.metric = metric

    def judge(self, index, epochs, value):
        trial = self.trials[index]
        if value is None:  # stops the run, and is raised from optimize once every trial is told
            raise ValueError(_no_such_metric(self.metric, trial))
        if not math.isfinite(value):
            return False  # nothing to report: the run's divergence check ends such a trial
        trial.report(value, epochs)
        return trial.should_prune()


def _no_such_metric(metric, trial):
    return (f"optimize: trial {trial.number}'s model reports no {metric} after an epoch: a model reports loss, "
            f"its compiled metrics (accuracy, mae, auc...), and val_ of each where it has validation rows")


def _spec(model, trial, x, y, metric, validation_split):
    """The trial's model as the run's sweep takes it, named after the trial, with `validation_split`
    where given; a ValueError where `metric` is a validation metric and it has no validation rows."""
    spec = _spec_of(model, x, y, f"optimize: model_fn's model for trial {trial.number}")
    spec["name"] = f"trial-{trial.number}"
    if validation_split is not None:
        spec["fit"] = dict(spec.get("fit") or {}, validation_split=validation_split)
    if metric.startswith("val_") and not (spec.get("fit") or {}).get("validation_split"):
        given = "" if validation_split is None else f" (validation_split={validation_split!r} was given)"
        raise ValueError(f"optimize: metric {metric} needs validation rows, and trial {trial.number}'s model has "
                         f"none{given}: give validation_split=F (0 < F < 1), or metric='loss'")
    return spec


def _tell(study, trial, model, metric):
    """Tells the study how the trial's model ended: its metric after its last epoch; PRUNED where
    the pruner stopped it; FAIL where it failed, diverged or has no such metric. Returns what
    optimize must raise once the batch is told, or None: a model the run refused (its error), a
    metric it does not report."""
    rungs = (model.get("fit") or {}).get("rungs") or []
    if rungs and not rungs[-1]["kept"]:
        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        return None
    epochs = model.get("epochs") or []
    value = epochs[-1].get(metric) if epochs else None
    if model.get("status") == "ok" and value is not None and math.isfinite(value):
        trial.report(value, len(epochs))  # the last epoch, which the run does not judge
        study.tell(trial, value)
        return None
    study.tell(trial, state=optuna.trial.TrialState.FAIL)  # failed, diverged, or no such metric
    if model.get("status") == "failed":
        return ValueError(f"optimize: trial {trial.number}: {model.get('error')}")
    if model.get("status") == "ok" and value is None:
        return ValueError(_no_such_metric(metric, trial))
    return None


def optimize(study, model_fn, n_trials, *, data, batch=8, metric="val_loss", validation_split=None, mode="packed",
             epochs=None, backend="auto", quiet=True, **options):
    """Runs `n_trials` trials of the Optuna `study`, `batch` at a time, and returns each batch's
    multifit Result (its document: every trial's epochs, times and memory).

    model_fn(trial) returns the trial's model: a compiled multifit.Sequential (its hyperparameters
    from trial.suggest_*) or a spec dict. `data` is every trial's data, as multifit.run takes it (a
    source's name, or numpy arrays (x, y) or (x, y, x_test, y_test)); `metric` what the study
    optimizes and the pruner watches, as a Keras monitor ("val_loss", "val_accuracy", "loss"), in
    the study's direction; `validation_split`, where given, every trial's (Keras's fit argument: the
    last F of the rows are its validation rows); `mode` serial, streams or packed (the modes that
    train in this process); `epochs` every trial's (None: each model's own, which for a Sequential
    is Keras's fit default, 1, too few to prune); `backend`, `quiet` and the other keywords are
    multifit.run's.

    Raises ValueError for a mistake in the options, for a model the run refuses (its message) and
    for a metric a model does not report, once the batch's trials are told (FAIL where they did not
    end otherwise); what model_fn raises, after the same (optuna.TrialPruned there prunes that trial
    alone). A trial that diverges is told FAIL, and the study goes on.
    """
    if not isinstance(study, optuna.Study):
        raise TypeError(f"optimize: study is {type(study).__name__}; expected an optuna.Study")
    if len(study.directions) != 1:
        raise ValueError(f"optimize: the study has {len(study.directions)} objectives; a pruner judges one "
                         f"(trial.report), so optimize takes a study of one direction")
    if not isinstance(n_trials, int) or n_trials < 1 or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"optimize: n_trials {n_trials!r} and batch {batch!r} must be whole numbers, 1 or more")
    if mode not in _MODES:
        raise ValueError(f"optimize: mode {mode!r}; expected one of {', '.join(_MODES)}, the modes that train in "
                         f"this process")
    if epochs is not None and (not isinstance(epochs, int) or epochs < 1):
        raise ValueError(f"optimize: epochs {epochs!r}; expected a whole number, 1 or more (None: each model's own)")
    results = []
    for first in range(0, n_trials, batch):
        trials = [study.ask() for _ in range(min(batch, n_trials - first))]
        results.append(_train_batch(study, trials, model_fn, data, metric, validation_split,
                                    (mode, backend, quiet, dict(options, epochs=epochs))))
    return results


def _train_batch(study, trials, model_fn, data, metric, validation_split, run):
    """One batch of trials built, trained in one run (`run`: its mode, backend, quiet and other
    options, as multifit.run takes them) and told; the Result (None where model_fn pruned every
    trial)."""
    told = set()
    try:
        kept, models = [], []
        for trial in trials:
            try:
                model = model_fn(trial)
            except optuna.TrialPruned:
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                told.add(trial.number)
                continue
            kept.append(trial)
            models.append(model)
        if not kept:
            return None
        # a Sequential takes its input's and targets' widths from arrays, once per batch
        x, y = features_and_targets(data[0], data[1]) if _holds_arrays(data) else (None, None)
        sweep = {"name": "optuna", "models": [_spec(m, t, x, y, metric, validation_split) for m, t in zip(models, kept)]}
        mode, backend, quiet, options = run
        result = _run(sweep, mode, 1, data, backend, quiet, None, options, _Pruner(kept, metric))
        problems = []
        for trial, model in zip(kept, result.models):
            problems.append(_tell(study, trial, model, metric))
            told.add(trial.number)
        raised = next((problem for problem in problems if problem), None)
        if raised:
            raise raised
        return result
    finally:  # a mistake or an exception: the batch's trials end as failed, not left running
        for trial in trials:
            if trial.number not in told:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)


def _holds_arrays(data):
    """Whether `data` is numpy arrays (x, y[, x_test, y_test]) rather than a source's name."""
    return isinstance(data, (tuple, list)) and len(data) in (2, 4)
