#!/usr/bin/env python3
"""multifit against Keras, step for step.

For each case below, Keras 3 (TensorFlow backend, CPU, one thread) and
`multifit train --backend cpu` start from the same weights (seeded numpy
Glorot-uniform kernels and small nonzero biases, written to a multifit
weights file and given to Keras with `set_weights`) on the same fixed data
(seeded numpy, every value a multiple of 1/256 so that the CSV text is exact
in both), with shuffling off, and train 3 epochs. Compared: the per-epoch
`loss` and `accuracy`, `val_loss` and `val_accuracy` where the case has a
`validation_split` (Keras and multifit both take the last rows), and every
final weight.

Cases: mse (one and two outputs), binary_crossentropy and
sparse_categorical_crossentropy, each with adam (Keras defaults) and sgd (with
and without momentum); 200 rows in batches that do not divide them, so the
last partial batch is a step of its own; three cases with validation_split.

Tolerances. Both sides compute in float32 but in another order (OpenBLAS and
Eigen sum products differently; Keras applies sigmoid/softmax and then
cross-entropy, multifit works from logits), so each step differs at rounding
level, ~1e-7 relative, carried through 15 to 21 updates. Measured: every
case agrees to ~1e-7 (weights, absolute; losses, relative); Adam's constants
are rounded as Keras rounds them (beta^t and alpha in float32, 1 - beta in
double then float32: kernels/element_math.h), without which the adam cases
differed ten times more. The bounds leave ~10x margin over that, and a real difference
fails: a learning rate 0.1% off fails every case, a dropped partial batch
misses by 1e-2.
  weights  |k - m| <= 1e-5 + 1e-4 |k|     (numpy.isclose, every element)
  losses   |k - m| <= 1e-5 |k|            (loss and val_loss, every epoch)
  metrics  |k - m| <= 1e-6                (accuracies are counts / rows: exact
                                           unless a probability rounds across 0.5)

Run (exit 0 when every case passes, 1 otherwise):
  .venv-peers/bin/python benchmarks/peers/exactness.py --multifit build/bin/multifit [--out DIR]
"""
import argparse, json, os, struct, subprocess, sys, tempfile, time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # plain Eigen kernels: no oneDNN reorderings, no notice
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["TF_DETERMINISTIC_OPS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()

ROWS, FEATURES, EPOCHS = 200, 8, 3
ACTIVATION_CODES = {"linear": 0, "relu": 1, "sigmoid": 2, "tanh": 3, "softmax": 4}
W_RTOL, W_ATOL, LOSS_RTOL, METRIC_ATOL = 1e-4, 1e-5, 1e-5, 1e-6

ADAM = {"name": "adam", "learning_rate": 1e-3, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
CASES = [  # name, loss, layers [(units, activation)], outputs for targets, optimizer, batch, split
    ("mse-adam", "mse", [(16, "relu"), (1, "linear")], ADAM, 32, 0.0),
    ("mse2-sgd-momentum-val", "mse", [(16, "relu"), (2, "linear")],
     {"name": "sgd", "learning_rate": 0.01, "momentum": 0.9}, 24, 0.25),
    ("mse-sgd", "mse", [(16, "relu"), (1, "linear")], {"name": "sgd", "learning_rate": 0.01, "momentum": 0.0}, 32, 0.0),
    ("bce-adam-val", "binary_crossentropy", [(16, "tanh"), (1, "sigmoid")], ADAM, 32, 0.25),
    ("bce-sgd", "binary_crossentropy", [(16, "tanh"), (1, "sigmoid")],
     {"name": "sgd", "learning_rate": 0.1, "momentum": 0.0}, 48, 0.0),
    ("scce-adam", "sparse_categorical_crossentropy", [(16, "relu"), (3, "softmax")], ADAM, 32, 0.0),
    ("scce-sgd-momentum-val", "sparse_categorical_crossentropy", [(16, "relu"), (3, "softmax")],
     {"name": "sgd", "learning_rate": 0.05, "momentum": 0.9}, 28, 0.25),
]


def make_data(loss, outputs, seed):
    """Features and targets, every value a multiple of 1/256 (exact as text and as float32)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(ROWS, FEATURES)) * 256) / 256
    if loss == "mse":
        w = rng.normal(size=(FEATURES, outputs))
        y = np.round((np.tanh(x @ w) + 0.1 * rng.normal(size=(ROWS, outputs))) * 256) / 256
    elif loss == "binary_crossentropy":
        y = ((x @ rng.normal(size=(FEATURES, 1)) + rng.normal(size=(ROWS, 1))) > 0).astype(np.float64)
    else:
        y = np.argmax(x @ rng.normal(size=(FEATURES, 3)) + rng.normal(size=(ROWS, 3)), axis=1)[:, None].astype(np.float64)
    return x.astype(np.float32), y.astype(np.float32)


def initial_weights(layers, seed):
    rng, arrays, fan_in = np.random.default_rng(seed), [], FEATURES
    for units, _ in layers:
        limit = np.sqrt(6.0 / (fan_in + units))  # Glorot uniform, as Keras's Dense
        arrays.append(rng.uniform(-limit, limit, size=(fan_in, units)).astype(np.float32))
        arrays.append(rng.uniform(-0.1, 0.1, size=(units,)).astype(np.float32))  # nonzero: the bias path counts
        fan_in = units
    return arrays


def write_mfw(path, layers, arrays):
    """nn/weights.h: "MFW1", u32 layers, per layer {u32 in, u32 out, u32 activation}, u64 count, f32s."""
    head, fan_in = [b"MFW1", struct.pack("<I", len(layers))], FEATURES
    for units, act in layers:
        head.append(struct.pack("<III", fan_in, units, ACTIVATION_CODES[act]))
        fan_in = units
    flat = np.concatenate([a.ravel() for a in arrays]).astype("<f4")
    with open(path, "wb") as f:
        f.write(b"".join(head) + struct.pack("<Q", flat.size) + flat.tobytes())


def read_mfw(path, layers):
    data = open(path, "rb").read()
    assert data[:4] == b"MFW1", path
    n = struct.unpack_from("<I", data, 4)[0]
    offset = 8 + 12 * n
    count = struct.unpack_from("<Q", data, offset)[0]
    flat = np.frombuffer(data, "<f4", count, offset + 8)
    arrays, at, fan_in = [], 0, FEATURES
    for units, _ in layers:
        for shape in ((fan_in, units), (units,)):
            size = int(np.prod(shape))
            arrays.append(flat[at:at + size].reshape(shape))
            at += size
        fan_in = units
    assert at == count, path
    return arrays


def run_multifit(binary, work, name, loss, layers, opt, batch, split, x, y, w0):
    csv, spec_path = os.path.join(work, name + ".csv"), os.path.join(work, name + ".json")
    w0_path, w3_path, result = (os.path.join(work, name + s) for s in (".w0", ".w3", ".result.json"))
    np.savetxt(csv, np.hstack([x, y]), delimiter=",", fmt="%.9g")
    write_mfw(w0_path, layers, w0)
    spec = {"name": name, "input": FEATURES, "loss": loss, "optimizer": opt,
            "layers": [{"units": u, "activation": a} for u, a in layers],
            "fit": {"epochs": EPOCHS, "batch_size": batch, "shuffle": False, "validation_split": split},
            "seed": 0, "memory": {"limit": "16MiB", "mode": "grow"}}
    if loss != "sparse_categorical_crossentropy":
        spec["targets"] = layers[-1][0]
    json.dump(spec, open(spec_path, "w"), indent=1)
    cmd = [binary, "train", spec_path, "--backend", "cpu", "--data", "csv:" + csv, "--load", w0_path,
           "--save", w3_path, "--json", result, "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    model = json.load(open(result))["models"][0]
    hist = {k: [e[k] for e in model["epochs"]] for k in ("loss", "accuracy", "val_loss", "val_accuracy")}
    return hist, read_mfw(w3_path, layers)


def run_keras(loss, layers, opt, batch, split, x, y, w0):
    keras.utils.set_random_seed(0)
    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((FEATURES,))] + [keras.layers.Dense(u, activation=a) for u, a in layers])
    model.set_weights(w0)
    if opt["name"] == "adam":
        optimizer = keras.optimizers.Adam(opt["learning_rate"], beta_1=opt["beta_1"], beta_2=opt["beta_2"],
                                          epsilon=opt["epsilon"])
    else:
        optimizer = keras.optimizers.SGD(opt["learning_rate"], momentum=opt["momentum"])
    metrics = {"mse": [], "binary_crossentropy": [keras.metrics.BinaryAccuracy(name="accuracy")],
               "sparse_categorical_crossentropy": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]}[loss]
    model.compile(optimizer=optimizer, loss=loss, metrics=metrics)
    h = model.fit(x, y, epochs=EPOCHS, batch_size=batch, shuffle=False, validation_split=split, verbose=0).history
    hist = {k: h.get(k, [None] * EPOCHS) for k in ("loss", "accuracy", "val_loss", "val_accuracy")}
    return hist, model.get_weights()


def max_diff(a, b):
    """Max abs and max relative difference over paired values; None where the metric does not exist."""
    pairs = [(float(p), float(q)) for p, q in zip(a, b) if p is not None or q is not None]
    if not pairs:
        return None
    if any(p is None or q is None for p, q in pairs):
        return {"abs": float("inf"), "rel": float("inf")}
    absd = [abs(p - q) for p, q in pairs]
    return {"abs": max(absd), "rel": max(d / max(abs(p), 1e-30) for d, (p, _) in zip(absd, pairs))}


def compare(name, keras_run, mf_run, w0):
    (kh, kw), (mh, mw) = keras_run, mf_run
    row = {"case": name, "keras": kh, "multifit": mh}
    for key in ("loss", "val_loss", "accuracy", "val_accuracy"):
        row[key] = max_diff(kh[key], mh[key])
    kflat, mflat = np.concatenate([a.ravel() for a in kw]), np.concatenate([a.ravel() for a in mw])
    wabs = np.abs(kflat.astype(np.float64) - mflat)
    row["weights"] = {"abs": float(wabs.max()), "rel": float((wabs / np.maximum(np.abs(kflat), 1e-30)).max())}
    row["moved"] = float(np.abs(kflat - np.concatenate([a.ravel() for a in w0])).max())  # training did happen
    fails = []
    if not np.allclose(mflat, kflat, rtol=W_RTOL, atol=W_ATOL):
        fails.append("weights")
    fails += [k for k in ("loss", "val_loss") if row[k] and row[k]["rel"] > LOSS_RTOL]
    fails += [k for k in ("accuracy", "val_accuracy") if row[k] and row[k]["abs"] > METRIC_ATOL]
    row["pass"], row["failed"] = not fails, fails
    return row


def fmt(d, key):
    return "-" if d is None else f"{d[key]:.1e}"


def table(rows):
    cols = ["case", "result", "loss abs", "loss rel", "val_loss rel", "acc abs", "val_acc abs", "weights abs",
            "weights rel", "weights moved", "seconds"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        result = "PASS" if r["pass"] else "FAIL (" + ", ".join(r["failed"]) + ")"
        cells = [r["case"], result, fmt(r["loss"], "abs"), fmt(r["loss"], "rel"), fmt(r["val_loss"], "rel"),
                 fmt(r["accuracy"], "abs"), fmt(r["val_accuracy"], "abs"), fmt(r["weights"], "abs"),
                 fmt(r["weights"], "rel"), f"{r['moved']:.1e}", f"{r['seconds']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--multifit", default="build/bin/multifit", help="the multifit binary")
    ap.add_argument("--out", help="write exactness.md and exactness.json to this folder")
    args = ap.parse_args()
    if not os.access(args.multifit, os.X_OK):
        sys.exit(f"{args.multifit}: not an executable (build it: cmake --build build -j2 --target multifit)")
    start, rows = time.perf_counter(), []
    with tempfile.TemporaryDirectory(prefix="exactness-") as work:
        for seed, (name, loss, layers, opt, batch, split) in enumerate(CASES):
            t0 = time.perf_counter()
            x, y = make_data(loss, layers[-1][0], seed)
            w0 = initial_weights(layers, 1000 + seed)
            mf = run_multifit(args.multifit, work, name, loss, layers, opt, batch, split, x, y, w0)
            kr = run_keras(loss, layers, opt, batch, split, x, y, w0)
            row = compare(name, kr, mf, w0)
            row.update(loss_fn=loss, optimizer=opt, batch_size=batch, validation_split=split,
                       seconds=time.perf_counter() - t0)
            rows.append(row)
    ok = all(r["pass"] for r in rows)
    text = table(rows)
    summary = (f"{sum(r['pass'] for r in rows)}/{len(rows)} cases pass; tolerances: weights rtol {W_RTOL:g} "
               f"atol {W_ATOL:g}, losses rtol {LOSS_RTOL:g}, accuracies atol {METRIC_ATOL:g}; "
               f"{ROWS} rows x {FEATURES} features, {EPOCHS} epochs, shuffle off; keras {keras.__version__}, "
               f"tensorflow {tf.__version__}; {time.perf_counter() - start:.1f} s")
    print(text + "\n\n" + summary)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "exactness.md"), "w") as f:
            f.write("# multifit against Keras, step for step\n\n" + text + "\n\n" + summary + "\n")
        with open(os.path.join(args.out, "exactness.json"), "w") as f:
            json.dump({"pass": ok, "summary": summary, "cases": rows}, f, indent=1, default=float)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
