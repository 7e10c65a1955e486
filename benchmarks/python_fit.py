#!/usr/bin/env python3
"""multifit from Python against the command line, Keras and PyTorch, from the same interpreter.

The seeds' tiny model (W1 of benchmarks/peers/workloads.py: Dense(64, relu) -> Dense(1, sigmoid),
1024x20 rows, Adam, batch 64), 2 epochs, on the CPU with one thread each, each figure the median of
--runs fresh models:
  python fit    multifit.Sequential.fit(x, y) on numpy arrays: the call's wall, and the fit's own
                train_s (the C++ fit's clock, as the command line reports it); and a second fit of
                the same model with the same arguments (a notebook's cell run again)
  cli train_s   `multifit train` on the same spec and rows (.npy files): its document's train_s
  keras fit     keras.Model.fit's wall (a fresh model: tracing included, as a user's first fit)
  torch loop    the peers' PyTorch loop (benchmarks/peers/torch_peer.py), 2 epochs
and `import multifit`'s time in a new interpreter (the median of --runs). Keras and PyTorch run in
child processes of the same interpreter, one each: TensorFlow's and PyTorch's LLVMs cannot be
loaded into one process (LLVM ERROR: inconsistency in registered CommandLine options).
Goals (issue "multifit from Python"): python fit within 10% of the command line's training time,
at least 50x faster than Keras's whole fit; import under 100 ms.

Run it where multifit, Keras and PyTorch are all installed (the peers' environment with the
package's wheel: benchmarks/results/README.md says how).
usage: benchmarks/python_fit.py [--runs N] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import multifit  # noqa: E402
import workloads  # noqa: E402

W1 = workloads.W1
EPOCHS = 2


def import_seconds(runs):
    code = "import time; t = time.perf_counter(); import multifit; print(time.perf_counter() - t)"
    return [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(runs)]


def multifit_model(seed):
    model = multifit.Sequential([multifit.layers.Input(shape=(W1["input"],)),
                                 multifit.layers.Dense(W1["hidden"][0], activation=W1["activation"]),
                                 multifit.layers.Dense(1, activation="sigmoid")], name="w1", seed=seed)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu", threads=1)
    return model


def python_fits(x, y, runs):
    walls, trains, again = [], [], []
    for seed in range(runs):
        model = multifit_model(seed)  # compile() builds it, as Keras builds a model with an Input
        start = time.perf_counter()
        history = model.fit(x, y, epochs=EPOCHS, batch_size=W1["batch"], verbose=0)
        walls.append(time.perf_counter() - start)
        trains.append(history.train_s)
        start = time.perf_counter()
        model.fit(x, y, epochs=EPOCHS, batch_size=W1["batch"], verbose=0)
        again.append(time.perf_counter() - start)
    return walls, trains, again


def cli_trains(x, y, runs):
    program = os.path.join(os.path.dirname(multifit.__file__), "bin", "multifit")
    trains = []
    with tempfile.TemporaryDirectory() as folder:
        np.save(os.path.join(folder, "x.npy"), x)
        np.save(os.path.join(folder, "y.npy"), y)
        for seed in range(runs):
            spec = multifit_model(seed).spec()
            spec["fit"].update(epochs=EPOCHS, batch_size=W1["batch"])
            path = os.path.join(folder, "w1.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            out = os.path.join(folder, "r.json")
            subprocess.run([program, "train", path, "--data", f"npy:{folder}/x.npy,{folder}/y.npy", "--backend",
                            "cpu", "--threads", "1", "--quiet", "--json", out], check=True, capture_output=True)
            with open(out) as f:
                trains.append(json.load(f)["models"][0]["train_s"])
    return trains


def keras_fits(x, y, runs):
    import keras_peer  # Keras and TensorFlow, one thread as the others
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    walls = []
    for seed in range(runs):
        model = keras_peer.model_for(W1, seed)
        start = time.perf_counter()
        model.fit(x, y, batch_size=W1["batch"], epochs=EPOCHS, shuffle=True, verbose=0)
        walls.append(time.perf_counter() - start)
    return walls


def torch_fits(x, y, runs):
    import torch
    import torch_peer
    torch.set_num_threads(1)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    walls = []
    for seed in range(runs):
        model = torch_peer.model_for(W1, seed, "cpu")
        start = time.perf_counter()
        torch_peer.train(model, W1, tx, ty, W1["batch"], EPOCHS, "cpu")
        walls.append(time.perf_counter() - start)
    return walls


def peer_fits(peer, runs):
    """The walls of `peer`'s fits (keras or torch), measured in a child process of this interpreter."""
    done = subprocess.run([sys.executable, __file__, "--peer", peer, "--runs", str(runs)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json")
    parser.add_argument("--peer", choices=["keras", "torch"], help=argparse.SUPPRESS)  # a child's one peer
    args = parser.parse_args()
    x, y = workloads.w1_data()
    if args.peer:
        print(json.dumps((keras_fits if args.peer == "keras" else torch_fits)(x, y, args.runs)))
        return
    python_wall, python_train, python_again = python_fits(x, y, args.runs)
    figures = {
        "import_s": statistics.median(import_seconds(args.runs)),
        "python_fit_wall_s": statistics.median(python_wall),
        "python_fit_train_s": statistics.median(python_train),
        "python_fit_again_wall_s": statistics.median(python_again),
        "cli_train_s": statistics.median(cli_trains(x, y, args.runs)),
        "keras_fit_wall_s": statistics.median(peer_fits("keras", args.runs)),
        "torch_loop_wall_s": statistics.median(peer_fits("torch", args.runs)),
    }
    figures["python_over_cli"] = figures["python_fit_wall_s"] / figures["cli_train_s"]
    figures["keras_over_python"] = figures["keras_fit_wall_s"] / figures["python_fit_wall_s"]
    figures["torch_over_python"] = figures["torch_loop_wall_s"] / figures["python_fit_wall_s"]
    record = {"benchmark": "python_fit", "workload": "W1, 2 epochs, 1 thread", "runs": args.runs,
              "multifit": multifit.build_info()["description"], "python": sys.version.split()[0],
              "figures": figures}
    rows = [("import multifit", figures["import_s"], "goal < 100 ms"),
            ("python fit (wall of the call)", figures["python_fit_wall_s"], ""),
            ("python fit (its train_s)", figures["python_fit_train_s"], ""),
            ("python fit again (wall)", figures["python_fit_again_wall_s"],
             f"{figures['python_fit_again_wall_s'] / figures['cli_train_s']:.2f}x the command line's train_s"),
            ("multifit train (train_s)", figures["cli_train_s"],
             f"python fit is {figures['python_over_cli']:.2f}x it (goal <= 1.10)"),
            ("keras fit (wall)", figures["keras_fit_wall_s"],
             f"{figures['keras_over_python']:.0f}x python fit's (goal >= 50x)"),
            ("torch loop (wall)", figures["torch_loop_wall_s"], f"{figures['torch_over_python']:.0f}x python fit's")]
    for name, seconds, note in rows:
        print(f"{name:32s} {seconds * 1e3:10.3f} ms  {note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=2)


if __name__ == "__main__":
    main()
