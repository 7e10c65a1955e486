"""A hyperparameter search with early stopping of trials, multifit against the tools its users know:
Keras Tuner's Hyperband (Keras 3) and Optuna's SuccessiveHalvingPruner (PyTorch, written for speed as
torch_peer.py writes it), on one space, one data set and one epoch budget.

--data teacher (the default): a teacher task as multifit's synthetic:teacher makes it (x uniform in
[-1, 1), 20 features; the label whether a fixed random Dense(32, tanh) -> Dense(1) network scores
above 0), 4096 rows, the last 25% for validation, written once to a CSV file that every tool reads.
The space (examples/tiny-search-asha.json's): learning_rate log-uniform [1e-4, 0.1], units of the one
hidden Dense in {16, 32, 64, 128}, dropout uniform [0, 0.5], batch size log-uniform integers [16, 256];
Dense(units, relu) -> Dropout -> Dense(1, sigmoid), Adam, binary cross-entropy.

--data fashion-mnist: the first --fraction (0.2) of Fashion-MNIST's train rows (and of its test rows,
which multifit evaluates and the peers do not), written once as IDX files that every tool reads
(pixels / 255), the last 20% for validation. The space and model are examples/fashion-search-asha.json's
(multifit trains that file, its data replaced): learning_rate log-uniform [1e-4, 0.01], units in
{32, 64, 128, 256}, dropout uniform [0, 0.5], batch size log-uniform integers [32, 256];
Dense(units, relu) -> Dropout -> Dense(10, softmax), Adam, sparse categorical cross-entropy.
Goal (issue 32): multifit's wall to reach the best at least 10x shorter than the faster peer's.

The budget: at most --epochs epochs a trial, reduction factor 3, grace 1 epoch.
  multifit         --trials trials (Sobol, seed 7), trained in full and under asha, --mode packed, cpu
                   backend
  keras            keras_tuner.Hyperband(max_epochs, factor 3): its own trial count for that budget
  optuna-pytorch   --trials trials (--sampler: RandomSampler or TPESampler, seed 7),
                   SuccessiveHalvingPruner(min_resource 1, factor 3), one trial after another
  optuna-multifit  the same study, its trials trained --batch at a time by multifit.integration.optuna
                   (packed mode, cpu backend), pruned inside the run

Each line: the tool, the trials it trained, the epochs it trained in all, its wall (the whole search,
in this process or multifit's), and the best val_accuracy a trial reached at its last epoch.

usage: .venv-peers/bin/python benchmarks/peers/search.py [--multifit BIN] [--data teacher|fashion-mnist]
           [--fraction F] [--trials N] [--epochs E] [--sampler random|tpe] [--batch K] [--threads N]
           [--only ROW...] [--out DIR]
  --only  the rows to run (multifit, optuna-pytorch, optuna-multifit, keras); all by default
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from scheduler import IDX, idx_subset, sweep as base_sweep  # noqa: E402

ROWS, FEATURES, HIDDEN = 4096, 20, 32
FASHION = os.path.join(ROOT, "examples", "fashion-search-asha.json")


class Task:
    """What every tool trains on: x (float32), y (a float32 0/1 column when outputs is 1, class indices
    otherwise), the last `validation` of the rows for validation, the outputs of the last Dense, the
    space (ranges as pairs, units as a list) and a line that says what it is."""

    def __init__(self, x, y, validation, outputs, space, title):
        self.x, self.y, self.validation, self.outputs, self.space, self.title = x, y, validation, outputs, space, title
        self.features = x.shape[1]


def teacher(seed=7):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(ROWS, FEATURES)).astype(np.float32)
    w1 = rng.normal(0, 1 / math.sqrt(FEATURES), size=(FEATURES, HIDDEN))
    w2 = rng.normal(0, 1 / math.sqrt(HIDDEN), size=(HIDDEN, 1))
    y = (np.tanh(x @ w1) @ w2 > 0).astype(np.float32)
    return x, y


def write_csv(x, y, path):
    np.savetxt(path, np.hstack([x, y]), delimiter=",", fmt="%.7g")


def teacher_task(trials, epochs, folder):
    """The teacher task, and multifit's sweep of it (a CSV file in folder)."""
    x, y = teacher()
    csv = os.path.join(folder, "teacher.csv")
    write_csv(x, y, csv)
    validation = 0.25
    space = {"learning_rate": (1e-4, 0.1), "units": [16, 32, 64, 128], "dropout": (0.0, 0.5), "batch_size": (16, 256)}
    sweep = {
        "name": "peers-search",
        "base": {"name": "t", "data": "csv:" + csv, "input": FEATURES,
                 "layers": [{"units": 64, "activation": "relu"}, {"type": "Dropout", "rate": 0.1},
                            {"units": 1, "activation": "sigmoid"}],
                 "loss": "binary_crossentropy", "metrics": ["accuracy"], "optimizer": "adam",
                 "fit": {"epochs": epochs, "batch_size": 64, "validation_split": validation}},
        "search": {"trials": trials, "sampler": "sobol", "seed": 7,
                   "space": {"learning_rate": {"log_uniform": list(space["learning_rate"])},
                             "units": {"choice": space["units"]}, "dropout": {"uniform": list(space["dropout"])},
                             "batch_size": {"int_log_uniform": list(space["batch_size"])}}}}
    title = f"teacher task, {ROWS} rows x {FEATURES} features, {validation:.0%} validation"
    return Task(x, y, validation, 1, space, title), sweep


def fashion_task(fraction, trials, epochs, folder):
    """The first `fraction` of Fashion-MNIST (IDX files in folder), and multifit's sweep of it:
    examples/fashion-search-asha.json's, its data replaced."""
    data = idx_subset("fashion-mnist", fraction, folder)
    images = np.fromfile(os.path.join(folder, IDX[0]), np.uint8, offset=16)
    y = np.fromfile(os.path.join(folder, IDX[1]), np.uint8, offset=8).astype(np.int64)
    x = images.reshape(len(y), -1) / np.float32(255)
    sweep = base_sweep(FASHION, trials, epochs, None, data)
    given = sweep["search"]["space"]
    space = {"learning_rate": tuple(given["learning_rate"]["log_uniform"]), "units": given["units"]["choice"],
             "dropout": tuple(given["dropout"]["uniform"]), "batch_size": tuple(given["batch_size"]["int_log_uniform"])}
    validation = sweep["base"]["fit"]["validation_split"]
    title = (f"fashion-mnist, its first {fraction:.0%}: {len(y)} rows x {x.shape[1]} features, "
             f"{validation:.0%} validation")
    return Task(x, y, validation, 10, space, title), sweep


# ---- multifit -------------------------------------------------------------------------------------

def multifit_search(binary, sweep, scheduler, folder):
    sweep = dict(sweep)
    if scheduler:
        sweep["scheduler"] = {"type": scheduler, "metric": "val_accuracy", "grace_epochs": 1, "reduction_factor": 3}
    path = os.path.join(folder, f"multifit-{scheduler or 'full'}.json")
    json.dump(sweep, open(path, "w"))
    out = path + ".result.json"
    start = time.perf_counter()
    subprocess.run([binary, "run", path, "--backend", "cpu", "--mode", "packed", "--quiet", "--json", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    models = json.load(open(out))["models"]
    best = max(m["epochs"][-1]["val_accuracy"] for m in models if m["status"] == "ok")
    return {"trials": len(models), "epochs": sum(len(m["epochs"]) for m in models), "wall_s": wall, "best": best}


# ---- Keras Tuner ----------------------------------------------------------------------------------

def keras_hyperband(task, epochs, folder):
    import keras
    import keras_tuner

    space, binary = task.space, task.outputs == 1

    class Tiny(keras_tuner.HyperModel):
        def build(self, hp):
            model = keras.Sequential([
                keras.Input((task.features,)),
                keras.layers.Dense(hp.Choice("units", space["units"]), activation="relu"),
                keras.layers.Dropout(hp.Float("dropout", *space["dropout"])),
                keras.layers.Dense(task.outputs, activation="sigmoid" if binary else "softmax")])
            rate = hp.Float("learning_rate", *space["learning_rate"], sampling="log")
            model.compile(optimizer=keras.optimizers.Adam(learning_rate=rate, epsilon=1e-7),
                          loss="binary_crossentropy" if binary else "sparse_categorical_crossentropy",
                          metrics=["accuracy"])
            return model

        def fit(self, hp, model, *args, **kwargs):
            batch = hp.Int("batch_size", *space["batch_size"], sampling="log")
            return model.fit(*args, batch_size=batch, **kwargs)

    counted = {"epochs": 0}

    class Count(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            counted["epochs"] += 1

    start = time.perf_counter()
    tuner = keras_tuner.Hyperband(Tiny(), objective="val_accuracy", max_epochs=epochs, factor=3, seed=7,
                                  directory=folder, project_name="hyperband", overwrite=True)
    tuner.search(task.x, task.y, validation_split=task.validation, shuffle=True, verbose=0, callbacks=[Count()])
    wall = time.perf_counter() - start
    trials = tuner.oracle.trials.values()
    best = max(t.metrics.get_last_value("val_accuracy") for t in trials if t.metrics.exists("val_accuracy"))
    return {"trials": len(trials), "epochs": counted["epochs"], "wall_s": wall, "best": best}


# ---- Optuna, with PyTorch --------------------------------------------------------------------------

def reached(study, start):
    """When each completed trial of `study` ended, in seconds from `start` (time.time()), with the
    study's best value up to then: what "wall to the same best" is read from."""
    ends = sorted((t.datetime_complete.timestamp() - start, t.value) for t in study.trials
                  if t.state.name == "COMPLETE")
    best, out = -math.inf, []
    for at, value in ends:
        best = max(best, value)
        out.append((round(at, 3), best))
    return out


def sha_study(sampler):
    """The Optuna study both Optuna rows run: maximizing val_accuracy, `sampler` seeded 7, successive
    halving from 1 epoch by a factor of 3."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {"random": optuna.samplers.RandomSampler, "tpe": optuna.samplers.TPESampler}
    return optuna.create_study(direction="maximize", sampler=samplers[sampler](seed=7),
                               pruner=optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3))


def optuna_sha(task, trials, epochs, sampler):
    import optuna
    import torch
    from torch import nn

    space, binary = task.space, task.outputs == 1
    split = int(len(task.x) * (1 - task.validation))
    xt, yt = torch.from_numpy(task.x[:split]), torch.from_numpy(task.y[:split])
    xv, yv = torch.from_numpy(task.x[split:]), torch.from_numpy(task.y[split:])
    counted = {"epochs": 0}

    def objective(trial):
        rate = trial.suggest_float("learning_rate", *space["learning_rate"], log=True)
        units = trial.suggest_categorical("units", space["units"])
        dropout = trial.suggest_float("dropout", *space["dropout"])
        batch = trial.suggest_int("batch_size", *space["batch_size"], log=True)
        model = nn.Sequential(nn.Linear(task.features, units), nn.ReLU(), nn.Dropout(dropout),
                              nn.Linear(units, task.outputs))
        for layer in model:
            if isinstance(layer, nn.Linear):
                nn.init.xavier_uniform_(layer.weight)
                nn.init.zeros_(layer.bias)
        optimizer = torch.optim.Adam(model.parameters(), lr=rate, eps=1e-7, foreach=True)
        loss_fn = nn.BCEWithLogitsLoss() if binary else nn.CrossEntropyLoss()
        accuracy = 0.0
        for epoch in range(epochs):
            model.train()
            order = torch.randperm(split)
            for i in range(0, split, batch):
                index = order[i:i + batch]
                optimizer.zero_grad(set_to_none=True)
                loss_fn(model(xt[index]), yt[index]).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                predicted = (model(xv) > 0).float() if binary else model(xv).argmax(1)
                accuracy = float((predicted == yv).float().mean())
            counted["epochs"] += 1
            trial.report(accuracy, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return accuracy

    start, clock = time.perf_counter(), time.time()
    study = sha_study(sampler)
    study.optimize(objective, n_trials=trials)
    wall = time.perf_counter() - start
    return {"trials": len(study.trials), "epochs": counted["epochs"], "wall_s": wall, "best": study.best_value,
            "reached": reached(study, clock)}


# ---- Optuna, with multifit ------------------------------------------------------------------------

def optuna_multifit(task, trials, epochs, sampler, batch, threads=None):
    """optuna_sha's study and model, each batch of `batch` trials trained together by multifit (one
    packed run, cpu backend), each trial reported after every epoch and pruned inside the run."""
    import multifit
    import multifit.keras
    from multifit.integration.optuna import optimize

    space, binary = task.space, task.outputs == 1

    def model_fn(trial):
        rate = trial.suggest_float("learning_rate", *space["learning_rate"], log=True)
        units = trial.suggest_categorical("units", space["units"])
        dropout = trial.suggest_float("dropout", *space["dropout"])
        batch_size = trial.suggest_int("batch_size", *space["batch_size"], log=True)
        layers = multifit.layers
        model = multifit.Sequential([layers.Input(shape=(task.features,)), layers.Dense(units, activation="relu"),
                                     layers.Dropout(dropout),
                                     layers.Dense(task.outputs, activation="sigmoid" if binary else "softmax")],
                                    seed=trial.number)
        model.compile(optimizer=multifit.keras.optimizers.Adam(learning_rate=rate, epsilon=1e-7),
                      loss="binary_crossentropy" if binary else "sparse_categorical_crossentropy",
                      metrics=["accuracy"], backend="cpu")
        spec = model.spec()  # the trial's batch size is its fit's, which a spec holds
        spec["fit"]["batch_size"] = batch_size
        return spec

    start, clock = time.perf_counter(), time.time()
    study = sha_study(sampler)
    results = optimize(study, model_fn, trials, batch=batch, data=(task.x, task.y), metric="val_accuracy",
                       validation_split=task.validation, epochs=epochs, backend="cpu", threads=threads)
    wall = time.perf_counter() - start
    trained = sum(len(m["epochs"]) for r in results if r for m in r.models)
    return {"trials": len(study.trials), "epochs": trained, "wall_s": wall, "best": study.best_value,
            "reached": reached(study, clock)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--multifit", default=os.path.join(ROOT, "build", "bin", "multifit"))
    p.add_argument("--data", choices=["teacher", "fashion-mnist"], default="teacher")
    p.add_argument("--fraction", type=float, default=0.2, help="of fashion-mnist's rows")
    p.add_argument("--trials", type=int, default=81)
    p.add_argument("--epochs", type=int, default=9)
    p.add_argument("--sampler", choices=["random", "tpe"], default="random", help="the Optuna rows' sampler")
    p.add_argument("--batch", type=int, default=27, help="optuna-multifit's trials trained at a time")
    p.add_argument("--threads", type=int, help="the Optuna rows' CPU threads (torch.set_num_threads, multifit's "
                                               "--threads); default: each tool's own")
    p.add_argument("--only", nargs="+", choices=["multifit", "optuna-pytorch", "optuna-multifit", "keras"],
                   default=["multifit", "optuna-pytorch", "optuna-multifit", "keras"])
    p.add_argument("--out", help="folder for results.json and table.md")
    a = p.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        if a.data == "teacher":
            task, sweep = teacher_task(a.trials, a.epochs, folder)
        else:
            task, sweep = fashion_task(a.fraction, a.trials, a.epochs, folder)
        if "multifit" in a.only:
            rows["multifit, full sweep"] = multifit_search(a.multifit, sweep, None, folder)
            rows["multifit, asha"] = multifit_search(a.multifit, sweep, "asha", folder)
            rows["multifit, hyperband"] = multifit_search(a.multifit, sweep, "hyperband", folder)
        if "optuna-pytorch" in a.only:
            if a.threads:
                import torch
                torch.set_num_threads(a.threads)
            rows["optuna + pytorch, successive halving"] = optuna_sha(task, a.trials, a.epochs, a.sampler)
        if "optuna-multifit" in a.only:
            rows[f"optuna + multifit, successive halving, {a.batch} at a time"] = optuna_multifit(
                task, a.trials, a.epochs, a.sampler, a.batch, a.threads)
        if "keras" in a.only:
            rows["keras tuner, hyperband"] = keras_hyperband(task, a.epochs, folder)
    lines = [f"{task.title}; at most {a.epochs} epochs a trial; Optuna's sampler {a.sampler}; CPU", "",
             "| search | trials | epochs trained | wall s | best val_accuracy |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['trials']} | {r['epochs']} | {r['wall_s']:.2f} | {r['best']:.4f} |")
    timed = {name: r["reached"] for name, r in rows.items() if "reached" in r}
    if len(timed) > 1:  # the Optuna rows: when each first reached the lower of their bests
        target = min(rows[name]["best"] for name in timed)
        lines += ["", f"Wall to a best val_accuracy of {target:.4f} (the lower of the Optuna rows' bests):"]
        for name, ends in timed.items():
            lines.append(f"- {name}: {next(at for at, best in ends if best >= target):.2f} s")
    print("\n".join(lines))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        json.dump(rows, open(os.path.join(a.out, "results.json"), "w"), indent=2)
        open(os.path.join(a.out, "table.md"), "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
