"""Keras 3 (TensorFlow backend), written as a Keras user writes it for speed: model.fit with verbose=0.

usage: keras_peer.py TASK [--threads 1|default] [--batch B] [--epochs E] [--model I] [--grid grid|seeds]
  w1-step     the tiny model (W1): seconds per training step, after a warm-up epoch
  w1-process  W1 as a user runs it: imports, data, 2 epochs; the harness times the whole process
  w2          the Fashion-MNIST MLP (W2): seconds per epoch and the test accuracy
  w4          Keras's MLP (W4): seconds per epoch (validation included) and the test accuracy
  w3-serial   the W3 models one after another in one process, clear_session() between them
  w3-one      one W3 model (--model I), for the one-process-per-model way
Prints one JSON line: the task's figures, and import_s (importing Keras and TensorFlow).
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

started = time.perf_counter()
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import workloads  # noqa: E402

import_s = time.perf_counter() - started


def model_for(w, seed):
    keras.utils.set_random_seed(seed)
    layers = [keras.Input((w["input"],))]
    for units in w["hidden"]:
        layers.append(keras.layers.Dense(units, activation=w["activation"]))
        if "dropout" in w:
            layers.append(keras.layers.Dropout(w["dropout"]))
    layers.append(keras.layers.Dense(w["outputs"], activation="sigmoid" if w["outputs"] == 1 else "softmax"))
    model = keras.Sequential(layers)
    loss = "binary_crossentropy" if w["outputs"] == 1 else "sparse_categorical_crossentropy"
    optimizer = (keras.optimizers.RMSprop(learning_rate=1e-3) if "dropout" in w else
                 keras.optimizers.Adam(learning_rate=1e-3, epsilon=1e-7))
    model.compile(optimizer=optimizer, loss=loss, metrics=["accuracy"])
    return model


class EpochTimes(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


def fit(model, x, y, batch, epochs, validation_split=0.0, callbacks=()):
    times = EpochTimes()
    model.fit(x, y, batch_size=batch, epochs=epochs, shuffle=True, verbose=0, validation_split=validation_split,
              callbacks=[times, *callbacks])
    return times.seconds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("task")
    p.add_argument("--threads", default="default")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--model", type=int, default=0)
    a = p.parse_args()
    if a.threads != "default":
        tf.config.threading.set_intra_op_parallelism_threads(int(a.threads))
        tf.config.threading.set_inter_op_parallelism_threads(int(a.threads))
    out = {"peer": "keras", "keras": keras.__version__, "tensorflow": tf.__version__, "threads": a.threads,
           "task": a.task, "import_s": import_s}
    if a.task in ("w1-step", "w1-process"):
        x, y = workloads.w1_data()
        model = model_for(workloads.W1, 1)
        if a.task == "w1-step":
            fit(model, x, y, workloads.W1["batch"], 1)  # warm-up: tracing and compilation
            start = time.perf_counter()
            fit(model, x, y, workloads.W1["batch"], a.epochs)
            steps = a.epochs * -(-len(x) // workloads.W1["batch"])
            out["step_s"] = (time.perf_counter() - start) / steps
        else:
            fit(model, x, y, workloads.W1["batch"], 2)
    elif a.task == "w2":
        x, y, xt, yt = workloads.fashion_mnist()
        model = model_for(workloads.W2, 42)
        out["epoch_s"] = fit(model, x, y, a.batch, a.epochs)
        out["test_accuracy"] = float(model.evaluate(xt, yt, batch_size=256, verbose=0)[1])
    elif a.task == "w4":
        x, y, xt, yt = workloads.fashion_mnist()
        w = workloads.W4
        model = model_for(w, 42)
        stopping = keras.callbacks.EarlyStopping(patience=3, restore_best_weights=True)
        out["epoch_s"] = fit(model, x, y, w["batch"], a.epochs, w["validation_split"], [stopping])
        out["test_accuracy"] = float(model.evaluate(xt, yt, batch_size=256, verbose=0)[1])
    elif a.task in ("w3-serial", "w3-one"):
        x, y, xt, yt = workloads.fashion_mnist()
        chosen = range(len(workloads.W3_GRID)) if a.task == "w3-serial" else [a.model]
        start = time.perf_counter()
        out["test_accuracy"] = []
        for i in chosen:
            model = model_for(workloads.W3_GRID[i], 42)
            fit(model, x, y, workloads.W3_GRID[i]["batch"], a.epochs)
            out["test_accuracy"].append(float(model.evaluate(xt, yt, batch_size=256, verbose=0)[1]))
            keras.backend.clear_session()
        out["train_s"] = time.perf_counter() - start
    else:
        sys.exit(f"keras_peer.py: unknown task {a.task}")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
