"""A hyperparameter search with early stopping of trials, multifit against the tools its users know:
Keras Tuner's Hyperband (Keras 3) and Optuna's SuccessiveHalvingPruner (PyTorch, written for speed as
torch_peer.py writes it), on one space, one data set and one epoch budget.

The data: a teacher task as multifit's synthetic:teacher makes it (x uniform in [-1, 1), 20 features;
the label whether a fixed random Dense(32, tanh) -> Dense(1) network scores above 0), 4096 rows, the
last 25% for validation, written once to a CSV file that every tool reads.
The space (examples/tiny-search-asha.json's): learning_rate log-uniform [1e-4, 0.1], units of the one
hidden Dense in {16, 32, 64, 128}, dropout uniform [0, 0.5], batch size log-uniform integers [16, 256];
Dense(units, relu) -> Dropout -> Dense(1, sigmoid), Adam, binary cross-entropy.
The budget: at most --epochs epochs a trial, reduction factor 3, grace 1 epoch.
  multifit   --trials trials (Sobol, seed 7), trained in full and under asha, --mode packed, cpu backend
  keras      keras_tuner.Hyperband(max_epochs, factor 3): its own trial count for that budget
  optuna     --trials trials (RandomSampler, seed 7), SuccessiveHalvingPruner(min_resource 1, factor 3)

Each line: the tool, the trials it trained, the epochs it trained in all, its wall (the whole search,
in this process or multifit's), and the best val_accuracy a trial reached at its last epoch.

usage: .venv-peers/bin/python benchmarks/peers/search.py [--multifit BIN] [--trials N] [--epochs E] [--out DIR]
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
ROWS, FEATURES, HIDDEN, VALIDATION = 4096, 20, 32, 0.25
SPACE = {"learning_rate": (1e-4, 0.1), "units": [16, 32, 64, 128], "dropout": (0.0, 0.5), "batch_size": (16, 256)}


def teacher(seed=7):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(ROWS, FEATURES)).astype(np.float32)
    w1 = rng.normal(0, 1 / math.sqrt(FEATURES), size=(FEATURES, HIDDEN))
    w2 = rng.normal(0, 1 / math.sqrt(HIDDEN), size=(HIDDEN, 1))
    y = (np.tanh(x @ w1) @ w2 > 0).astype(np.float32)
    return x, y


def write_csv(x, y, path):
    np.savetxt(path, np.hstack([x, y]), delimiter=",", fmt="%.7g")


# ---- multifit -------------------------------------------------------------------------------------

def multifit_search(binary, csv, trials, epochs, scheduler, folder):
    sweep = {
        "name": "peers-search",
        "base": {"name": "t", "data": "csv:" + csv, "input": FEATURES,
                 "layers": [{"units": 64, "activation": "relu"}, {"type": "Dropout", "rate": 0.1},
                            {"units": 1, "activation": "sigmoid"}],
                 "loss": "binary_crossentropy", "metrics": ["accuracy"], "optimizer": "adam",
                 "fit": {"epochs": epochs, "batch_size": 64, "validation_split": VALIDATION}},
        "search": {"trials": trials, "sampler": "sobol", "seed": 7,
                   "space": {"learning_rate": {"log_uniform": list(SPACE["learning_rate"])},
                             "units": {"choice": SPACE["units"]}, "dropout": {"uniform": list(SPACE["dropout"])},
                             "batch_size": {"int_log_uniform": list(SPACE["batch_size"])}}}}
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

def keras_hyperband(x, y, epochs, folder):
    import keras
    import keras_tuner

    class Tiny(keras_tuner.HyperModel):
        def build(self, hp):
            model = keras.Sequential([
                keras.Input((FEATURES,)),
                keras.layers.Dense(hp.Choice("units", SPACE["units"]), activation="relu"),
                keras.layers.Dropout(hp.Float("dropout", *SPACE["dropout"])),
                keras.layers.Dense(1, activation="sigmoid")])
            rate = hp.Float("learning_rate", *SPACE["learning_rate"], sampling="log")
            model.compile(optimizer=keras.optimizers.Adam(learning_rate=rate, epsilon=1e-7),
                          loss="binary_crossentropy", metrics=["accuracy"])
            return model

        def fit(self, hp, model, *args, **kwargs):
            batch = hp.Int("batch_size", *SPACE["batch_size"], sampling="log")
            return model.fit(*args, batch_size=batch, **kwargs)

    counted = {"epochs": 0}

    class Count(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            counted["epochs"] += 1

    start = time.perf_counter()
    tuner = keras_tuner.Hyperband(Tiny(), objective="val_accuracy", max_epochs=epochs, factor=3, seed=7,
                                  directory=folder, project_name="hyperband", overwrite=True)
    tuner.search(x, y, validation_split=VALIDATION, shuffle=True, verbose=0, callbacks=[Count()])
    wall = time.perf_counter() - start
    trials = tuner.oracle.trials.values()
    best = max(t.metrics.get_last_value("val_accuracy") for t in trials if t.metrics.exists("val_accuracy"))
    return {"trials": len(trials), "epochs": counted["epochs"], "wall_s": wall, "best": best}


# ---- Optuna, with PyTorch --------------------------------------------------------------------------

def optuna_sha(x, y, trials, epochs):
    import optuna
    import torch
    from torch import nn

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    split = int(ROWS * (1 - VALIDATION))
    xt, yt = torch.from_numpy(x[:split]), torch.from_numpy(y[:split])
    xv, yv = torch.from_numpy(x[split:]), torch.from_numpy(y[split:])
    counted = {"epochs": 0}

    def objective(trial):
        rate = trial.suggest_float("learning_rate", *SPACE["learning_rate"], log=True)
        units = trial.suggest_categorical("units", SPACE["units"])
        dropout = trial.suggest_float("dropout", *SPACE["dropout"])
        batch = trial.suggest_int("batch_size", *SPACE["batch_size"], log=True)
        model = nn.Sequential(nn.Linear(FEATURES, units), nn.ReLU(), nn.Dropout(dropout), nn.Linear(units, 1))
        for layer in model:
            if isinstance(layer, nn.Linear):
                nn.init.xavier_uniform_(layer.weight)
                nn.init.zeros_(layer.bias)
        optimizer = torch.optim.Adam(model.parameters(), lr=rate, eps=1e-7, foreach=True)
        loss_fn = nn.BCEWithLogitsLoss()
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
                accuracy = float(((model(xv) > 0).float() == yv).float().mean())
            counted["epochs"] += 1
            trial.report(accuracy, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return accuracy

    start = time.perf_counter()
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=7),
                                pruner=optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3))
    study.optimize(objective, n_trials=trials)
    wall = time.perf_counter() - start
    return {"trials": len(study.trials), "epochs": counted["epochs"], "wall_s": wall, "best": study.best_value}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--multifit", default=os.path.join(ROOT, "build", "bin", "multifit"))
    p.add_argument("--trials", type=int, default=81)
    p.add_argument("--epochs", type=int, default=9)
    p.add_argument("--out", help="folder for results.json and table.md")
    a = p.parse_args()
    x, y = teacher()
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        csv = os.path.join(folder, "teacher.csv")
        write_csv(x, y, csv)
        rows["multifit, full sweep"] = multifit_search(a.multifit, csv, a.trials, a.epochs, None, folder)
        rows["multifit, asha"] = multifit_search(a.multifit, csv, a.trials, a.epochs, "asha", folder)
        rows["multifit, hyperband"] = multifit_search(a.multifit, csv, a.trials, a.epochs, "hyperband", folder)
        rows["optuna + pytorch, successive halving"] = optuna_sha(x, y, a.trials, a.epochs)
        rows["keras tuner, hyperband"] = keras_hyperband(x, y, a.epochs, folder)
    lines = [f"teacher task, {ROWS} rows x {FEATURES} features, {VALIDATION:.0%} validation; at most {a.epochs} epochs "
             f"a trial; CPU", "",
             "| search | trials | epochs trained | wall s | best val_accuracy |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['trials']} | {r['epochs']} | {r['wall_s']:.2f} | {r['best']:.4f} |")
    print("\n".join(lines))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        json.dump(rows, open(os.path.join(a.out, "results.json"), "w"), indent=2)
        open(os.path.join(a.out, "table.md"), "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
