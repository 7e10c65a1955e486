#!/usr/bin/env python3
"""multifit against Keras, step for step.

Each case is a multifit spec, written with Keras's names; the same spec builds the Keras model
(its layers, optimizer, learning-rate schedule, loss, metrics and callbacks by their Keras class
names and arguments). Keras 3 (TensorFlow backend, CPU, one thread) and `multifit train --backend
cpu` start from the same weights (seeded numpy, written to a multifit weights file and given to
Keras with set_weights) on the same fixed data (seeded numpy, every value a multiple of 1/256 so
that the CSV text is exact in both), with shuffling off, and train. Compared: every epoch's loss,
metrics and their val_ values where the case has a validation_split (both take the last rows),
the learning rate of each epoch where ReduceLROnPlateau sets it, the number of epochs run (an
EarlyStopping ends both at the same one), and every final weight (a BatchNormalization's moving
statistics too). Each case is trained a third time, as a Keras user's script would be with
multifit's Python package: multifit.from_keras of the compiled Keras model, then its fit with the
same arguments (validation_data where the case gives it) and multifit.callbacks of the same names;
that run is compared with Keras's by the same bounds (the "from_keras" column).

Dropout: Keras draws its masks from its own generator, so the Keras model's Dropout is a layer of
this script's (HashDropout) that draws multifit's mask (kernels/layer_math.h: dropout_key and dropout_uniform, a
hash of the model's seed, the layer's index, the step and the element), recomputed here in numpy,
and scales as tf.nn.dropout does: what is compared is everything but the draw.

Initializers draw from other generators too: each is compared by its statistics over 131072
draws of a 256 x 512 kernel (mean, standard deviation, and the bound of a uniform or truncated
normal), against Keras's own draw of the same shape.

Tolerances. Both sides compute in float32 but in another order (OpenBLAS and Eigen sum products
differently; Keras applies sigmoid/softmax and then cross-entropy, multifit works from logits), so
each step differs at rounding level, ~1e-7 relative, carried through the updates. The bounds leave
~10x margin over what the cases measure, and a real difference fails (a learning rate 0.1% off
fails every case, a dropped partial batch misses by 1e-2):
  weights  |k - m| <= 1e-5 + 1e-4 |k|     (numpy.isclose, every element)
  losses   |k - m| <= 1e-5 |k| + 1e-7     (loss, val_loss and every regression metric, every epoch)
  accuracy |k - m| <= 1e-6                (counts / rows: exact unless a probability rounds across 0.5)
  rates    |k - m| <= 1e-6 |k|            (learning_rate, every epoch)
  initializers: |mean| <= 5 sd / sqrt(n); sd within 1% of Keras's draw and of the formula's; every
                draw inside the bound, the largest within 1% of it

Run (exit 0 when every case passes, 1 otherwise; --only NAME... runs those cases):
  .venv-peers/bin/python benchmarks/peers/exactness.py --multifit build/bin/multifit [--out DIR]
"""
import argparse, copy, json, os, struct, subprocess, sys, tempfile, time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # plain Eigen kernels: no oneDNN reorderings, no notice
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["TF_DETERMINISTIC_OPS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

try:
    import multifit  # noqa: E402  (the package of this tree: MULTIFIT_VENV=.venv-peers scripts/python.sh)
except ImportError as e:
    sys.exit(f"exactness: the multifit package is not installed in this Python ({e}); install it with "
             f"MULTIFIT_VENV=.venv-peers scripts/python.sh")

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()

ROWS, FEATURES, EPOCHS, SEED = 200, 8, 3, 7
W_RTOL, W_ATOL, LOSS_RTOL, LOSS_ATOL, METRIC_ATOL, RATE_RTOL = 1e-4, 1e-5, 1e-5, 1e-7, 1e-6, 1e-6
ACCURACIES = ("accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy")

# nn/weights.h's codes: LayerKind's and Activation's order.
KINDS = {"Dense": 0, "Dropout": 1, "BatchNormalization": 2, "Activation": 3, "Flatten": 4}
ACTIVATIONS = {"linear": 0, "relu": 1, "sigmoid": 2, "tanh": 3, "softmax": 4, "gelu": 5, "swish": 6, "elu": 7,
               "selu": 8, "softplus": 9, "leaky_relu": 10, "mish": 11,
               "softsign": 12}


def dense(units, activation="linear", **settings):
    return {"type": "Dense", "units": units, "activation": activation, **settings}


def dropout(rate):
    return {"type": "Dropout", "rate": rate}


def norm(**settings):
    return {"type": "BatchNormalization", **settings}


def act(activation):
    return {"type": "Activation", "activation": activation}


ADAM = {"name": "adam", "learning_rate": 1e-3}
HIDDEN = [dense(16, "relu")]


def case(name, loss, layers, optimizer=ADAM, batch=32, split=0.0, epochs=EPOCHS, **extra):
    return {"name": name, "loss": loss, "layers": layers, "optimizer": optimizer,
            "fit": {"epochs": epochs, "batch_size": batch, "validation_split": split, "shuffle": False}, **extra}


def schedule(class_name, **config):
    return {"name": "sgd", "learning_rate": {"class_name": class_name, "config": config}}


CASES = [
    # The first cases: the losses, Adam and SGD, partial batches, validation rows.
    case("mse-adam", "mse", HIDDEN + [dense(1)]),
    case("mse2-sgd-momentum-val", "mse", HIDDEN + [dense(2)], {"name": "sgd", "learning_rate": 0.01, "momentum": 0.9},
         24, 0.25),
    case("mse-sgd", "mse", HIDDEN + [dense(1)], {"name": "sgd", "learning_rate": 0.01}),
    case("bce-adam-val", "binary_crossentropy", [dense(16, "tanh"), dense(1, "sigmoid")], split=0.25),
    case("bce-sgd", "binary_crossentropy", [dense(16, "tanh"), dense(1, "sigmoid")],
         {"name": "sgd", "learning_rate": 0.1}, 48),
    case("scce-adam", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")]),
    case("scce-sgd-momentum-val", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")],
         {"name": "sgd", "learning_rate": 0.05, "momentum": 0.9}, 28, 0.25),
    # Activations, as Dense activations and as Activation layers (Keras's ReLU and ELU classes too).
    case("activations", "mse", [dense(12, "gelu"), dense(12, "swish"), dense(12, "elu"), dense(12, "selu"),
                                dense(12, "softplus"), dense(12, "leaky_relu"), dense(2)], split=0.25),
    case("mish-val", "mse", [dense(12, "mish"), dense(12, "mish"), act("mish"), dense(2)], split=0.25),
    case("softsign-val", "mse", [dense(12, "softsign"), dense(12, "softsign"), act("softsign"), dense(2)],
         split=0.25),
    case("activation-layers", "mse", [dense(12), act("tanh"), dense(12), {"type": "ReLU"}, dense(12),
                                      {"type": "ELU"}, dense(12), act("gelu"), dense(1)]),
    # Dropout (multifit's masks in both), BatchNormalization (training, moving statistics, inference).
    case("dropout-rmsprop-val", "sparse_categorical_crossentropy",
         [dense(32, "relu"), dropout(0.3), dense(16, "tanh"), dropout(0.1), dense(3, "softmax")],
         {"name": "rmsprop", "learning_rate": 1e-3}, 32, 0.25),
    # A Dense's bias right before a BatchNormalization has a gradient of rounding noise alone (the
    # normalization takes out its mean), which Adam scales up to the learning rate: no bias there.
    case("batchnorm-val", "mse", [dense(16, use_bias=False), norm(), act("relu"), dense(8, "tanh"),
                                  norm(momentum=0.9, epsilon=0.01, center=False), dense(1)], split=0.25),
    case("batchnorm-dropout-keras-mlp", "sparse_categorical_crossentropy",
         [dense(24, "relu"), norm(scale=False), dropout(0.2), dense(24, "relu"), dropout(0.2), dense(3, "softmax")],
         {"name": "rmsprop"}, 16, 0.2, epochs=4),
    # Regularizers: on kernels, biases and outputs, in the loss and its gradient.
    case("regularizers-val", "mse",
         [dense(16, "tanh", kernel_regularizer="l2", bias_regularizer={"name": "l1", "l1": 0.02},
                activity_regularizer={"name": "l1_l2", "l1": 1e-3, "l2": 1e-2}),
          dense(1, kernel_regularizer={"class_name": "L1L2", "config": {"l1": 1e-3}})],  # Keras 3's l2 default
         {"name": "sgd", "learning_rate": 0.05}, 32, 0.25),
    # Optimizers, with their settings, clipping and weight decay.
    case("sgd-nesterov-clipnorm", "mse", HIDDEN + [dense(1)],
         {"name": "sgd", "learning_rate": 0.02, "momentum": 0.9, "nesterov": True, "clipnorm": 0.5}),
    case("rmsprop-centered-momentum", "binary_crossentropy", [dense(16, "tanh"), dense(1, "sigmoid")],
         {"name": "rmsprop", "learning_rate": 3e-3, "rho": 0.8, "momentum": 0.5, "centered": True}),
    case("adamw", "mse", HIDDEN + [dense(2)], {"name": "adamw", "learning_rate": 3e-3, "weight_decay": 0.05}),
    case("adam-amsgrad-clipvalue", "mse", HIDDEN + [dense(1)],
         {"name": "adam", "learning_rate": 1e-2, "amsgrad": True, "clipvalue": 0.05}),
    case("adagrad", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")],
         {"name": "adagrad", "learning_rate": 0.05}),
    case("adamax-global-clipnorm", "mse", HIDDEN + [dense(2)],
         {"name": "adamax", "learning_rate": 5e-3, "global_clipnorm": 0.3}),
    case("nadam", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")],
         {"name": "nadam", "learning_rate": 3e-3}),
    case("lion", "mse", HIDDEN + [dense(2)], {"name": "lion", "learning_rate": 3e-4}),
    case("lion-betas-weight-decay-val", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")],
         {"name": "lion", "learning_rate": 1e-4, "beta_1": 0.95, "beta_2": 0.98, "weight_decay": 0.01}, split=0.25),
    case("sgd-weight-decay", "mse", HIDDEN + [dense(1)], {"name": "sgd", "learning_rate": 0.02, "weight_decay": 0.01}),
    # Learning-rate schedules.
    case("exponential-decay", "mse", HIDDEN + [dense(1)],
         schedule("ExponentialDecay", initial_learning_rate=0.05, decay_steps=4, decay_rate=0.7)),
    case("exponential-decay-staircase", "mse", HIDDEN + [dense(1)],
         schedule("ExponentialDecay", initial_learning_rate=0.05, decay_steps=4, decay_rate=0.7, staircase=True)),
    case("cosine-decay-warmup", "mse", HIDDEN + [dense(1)],
         schedule("CosineDecay", initial_learning_rate=0.01, decay_steps=12, alpha=0.1, warmup_target=0.05,
                  warmup_steps=5)),
    # Keras's warm-up from nothing: initial_learning_rate 0
    case("cosine-decay-warmup-from-zero", "mse", HIDDEN + [dense(1)],
         schedule("CosineDecay", initial_learning_rate=0.0, decay_steps=12, warmup_target=0.05, warmup_steps=5)),
    case("inverse-time-decay", "mse", HIDDEN + [dense(1)],
         schedule("InverseTimeDecay", initial_learning_rate=0.05, decay_steps=3, decay_rate=0.5)),
    case("polynomial-decay-cycle", "mse", HIDDEN + [dense(1)],
         schedule("PolynomialDecay", initial_learning_rate=0.05, decay_steps=6, end_learning_rate=0.005, power=2.0,
                  cycle=True)),
    case("piecewise-constant", "mse", HIDDEN + [dense(1)],
         schedule("PiecewiseConstantDecay", boundaries=[5, 12], values=[0.05, 0.02, 0.005])),
    # Losses and metrics.
    case("cce-label-smoothing", "categorical_crossentropy", HIDDEN + [dense(3, "softmax")], split=0.25,
         loss_settings={"label_smoothing": 0.1}, metrics=["accuracy", "mse"]),
    case("cce-from-logits", "categorical_crossentropy", HIDDEN + [dense(3)],
         loss_settings={"from_logits": True}, metrics=["categorical_accuracy"]),
    case("bce-label-smoothing-logits", "binary_crossentropy", [dense(16, "tanh"), dense(2)],
         loss_settings={"from_logits": True, "label_smoothing": 0.2}),
    case("scce-from-logits", "sparse_categorical_crossentropy", HIDDEN + [dense(3)],
         loss_settings={"from_logits": True}, metrics=["sparse_categorical_accuracy"]),
    case("mae", "mae", HIDDEN + [dense(2)], split=0.25, metrics=["mae", "mse"]),
    case("huber", "huber", HIDDEN + [dense(1)], loss_settings={"delta": 0.5}, metrics=["mae"]),
    case("log-cosh", "log_cosh", HIDDEN + [dense(2)], metrics=["mse"]),
    case("msle-val", "msle", HIDDEN + [dense(2, "softplus")], split=0.25, metrics=["mae"]),
    # Callbacks: the epoch each ends at, the weights each leaves, the rates each sets.
    case("early-stopping-restore", "mse", HIDDEN + [dense(1)], {"name": "sgd", "learning_rate": 0.3}, 32, 0.25,
         epochs=12, callbacks=[{"type": "EarlyStopping", "patience": 2, "restore_best_weights": True}]),
    case("early-stopping-baseline", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")],
         {"name": "adam", "learning_rate": 0.05}, 32, 0.25, epochs=10,
         callbacks=[{"type": "EarlyStopping", "monitor": "val_accuracy", "patience": 1, "baseline": 0.99,
                     "start_from_epoch": 1}]),
    case("reduce-lr-on-plateau", "mse", HIDDEN + [dense(1)], {"name": "sgd", "learning_rate": 0.3}, 32, 0.25,
         epochs=10, callbacks=[{"type": "ReduceLROnPlateau", "factor": 0.5, "patience": 1, "cooldown": 1,
                                "min_lr": 0.05}]),
    # Combinations, as a user's model has them: the features meet in one step and one epoch.
    case("batchnorm-adamw-cosine-warmup-scce-val", "sparse_categorical_crossentropy",
         [dense(16, use_bias=False), norm(), act("relu"), dense(8, "tanh"), dense(3, "softmax")],
         {"name": "adamw", "weight_decay": 0.02,
          "learning_rate": {"class_name": "CosineDecay", "config": {"initial_learning_rate": 0.0, "decay_steps": 15,
                                                                    "warmup_target": 0.02, "warmup_steps": 5}}},
         32, 0.25, epochs=4),
    # validation_data: Keras is given the last rows as (x_val, y_val), multifit the same rows as its split
    case("nadam-huber-plateau-early-stopping-validation-data", "huber", [dense(16, "gelu"), dense(2)],
         {"name": "nadam", "learning_rate": 0.05}, 24, 0.25, epochs=12, validation_data=True,
         loss_settings={"delta": 0.7}, metrics=["mae"],
         callbacks=[{"type": "ReduceLROnPlateau", "factor": 0.5, "patience": 1},
                    {"type": "EarlyStopping", "patience": 3, "restore_best_weights": True}]),
    # Weights per row (Keras's sample_weight, class_weight): each row's loss times its weight, the
    # metrics unweighted; validation rows weighted by their sample weights and not by class weights.
    case("sample-weight-scce-adam-val", "sparse_categorical_crossentropy", HIDDEN + [dense(3, "softmax")],
         ADAM, 32, 0.25, sample_weight=True),
    case("class-weight-bce-rmsprop-val", "binary_crossentropy", HIDDEN + [dense(1, "sigmoid")],
         {"name": "rmsprop", "learning_rate": 3e-3}, 32, 0.25, class_weight={0: 2.5, 1: 0.5}),
    case("class-weight-one-hot-cce-sgd", "categorical_crossentropy", HIDDEN + [dense(4, "softmax")],
         {"name": "sgd", "learning_rate": 0.1}, 16, class_weight={1: 3.0, 3: 0.25}),
    # Keras's confusion metrics: ratios of counts over the epoch's rows, each output counted
    case("precision-recall-multilabel-bce-val", "binary_crossentropy", HIDDEN + [dense(3, "sigmoid")],
         ADAM, 32, 0.25, metrics=["precision", "recall", "accuracy"]),
    case("precision-recall-one-hot-cce", "categorical_crossentropy", HIDDEN + [dense(4, "softmax")],
         {"name": "sgd", "learning_rate": 0.1}, 16, metrics=["precision", "recall"]),
    # AUC: Keras's 200 buckets a prediction, the ROC area interpolated over the epoch's rows; auto
    # mode maximizes it
    case("auc-bce-adam-val", "binary_crossentropy", HIDDEN + [dense(1, "sigmoid")], ADAM, 32, 0.25,
         metrics=["auc", "accuracy"]),
    case("auc-early-stopping-restore", "binary_crossentropy", HIDDEN + [dense(1, "sigmoid")],
         {"name": "sgd", "learning_rate": 0.2}, 16, 0.25, epochs=10, metrics=["auc"],
         callbacks=[{"type": "EarlyStopping", "monitor": "val_auc", "patience": 1, "restore_best_weights": True}]),
    case("sample-weight-huber-validation-data-sgd", "huber", HIDDEN + [dense(2)],
         {"name": "sgd", "learning_rate": 0.05, "momentum": 0.9}, 24, 0.25, validation_data=True,
         sample_weight=True, metrics=["mae"]),
]


# ---- Data and weights -----------------------------------------------------------------------------

def make_data(spec, seed):
    """Features and targets, every value a multiple of 1/256 (exact as text and as float32)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(ROWS, FEATURES)) * 256) / 256
    outputs, loss = spec["layers"][-1]["units"] if spec["layers"][-1]["type"] == "Dense" else 1, spec["loss"]
    logits = x @ rng.normal(size=(FEATURES, max(outputs, 3))) + rng.normal(size=(ROWS, max(outputs, 3)))
    if loss == "binary_crossentropy":
        y = (logits[:, :outputs] > 0).astype(np.float64)
    elif loss == "sparse_categorical_crossentropy":
        y = np.argmax(logits[:, :outputs], axis=1)[:, None].astype(np.float64)
    elif loss == "categorical_crossentropy":
        y = np.eye(outputs)[np.argmax(logits[:, :outputs], axis=1)]
    else:
        y = np.round((np.tanh(logits[:, :outputs]) + 0.1 * rng.normal(size=(ROWS, outputs))) * 256) / 256
    return x.astype(np.float32), y.astype(np.float32)


def row_weights(spec):
    """The case's sample weights, one per row, multiples of 1/2 in [0, 2] (exact as text); None
    without."""
    return (np.arange(ROWS) % 5 * 0.5).astype(np.float32) if spec.get("sample_weight") else None


def shapes(spec):
    """nn/weights.h's per-layer header {kind, in, out, activation, flags}, and the weights' shapes."""
    header, weights, width = [], [], FEATURES
    for layer in spec["layers"]:
        kind = layer["type"] if layer["type"] in KINDS else "Activation"  # ReLU, ELU: Activation layers
        out = layer["units"] if kind == "Dense" else width
        activation = layer.get("activation", {"ReLU": "relu", "ELU": "elu"}.get(layer["type"], "linear"))
        flags = 0
        if kind == "Dense":
            flags = 1 if layer.get("use_bias", True) else 0
            weights += [("kernel", (width, out))] + ([("bias", (out,))] if flags else [])
        if kind == "BatchNormalization":
            center, scale = layer.get("center", True), layer.get("scale", True)
            flags = (2 if center else 0) | (4 if scale else 0)
            weights += ([("gamma", (out,))] if scale else []) + ([("beta", (out,))] if center else [])
            weights += [("moving_mean", (out,)), ("moving_variance", (out,))]
        header.append((KINDS[kind], width, out, ACTIVATIONS[activation], flags))
        width = out
    return header, weights


def initial_weights(spec, seed):
    rng, arrays = np.random.default_rng(seed), []
    for role, shape in shapes(spec)[1]:
        if role == "kernel":
            limit = np.sqrt(6.0 / (shape[0] + shape[1]))  # Glorot uniform, as Keras's Dense
            arrays.append(rng.uniform(-limit, limit, size=shape))
        elif role in ("bias", "beta"):
            arrays.append(rng.uniform(-0.1, 0.1, size=shape))  # nonzero: the bias path counts
        elif role == "gamma":
            arrays.append(rng.uniform(0.8, 1.2, size=shape))
        else:
            arrays.append(np.zeros(shape) if role == "moving_mean" else np.ones(shape))
    return [a.astype(np.float32) for a in arrays]


def write_mfw(path, spec, arrays):
    header = shapes(spec)[0]
    flat = np.concatenate([a.ravel() for a in arrays]).astype("<f4")
    with open(path, "wb") as f:
        f.write(b"MFW2" + struct.pack("<I", len(header)) + b"".join(struct.pack("<5I", *h) for h in header) +
                struct.pack("<Q", flat.size) + flat.tobytes())


def read_mfw(path, spec):
    data = open(path, "rb").read()
    assert data[:4] == b"MFW2", path
    layers = struct.unpack_from("<I", data, 4)[0]
    offset = 8 + 20 * layers
    count = struct.unpack_from("<Q", data, offset)[0]
    flat = np.frombuffer(data, "<f4", count, offset + 8)
    arrays, at = [], 0
    for _, shape in shapes(spec)[1]:
        size = int(np.prod(shape))
        arrays.append(flat[at:at + size].reshape(shape))
        at += size
    assert at == count, path
    return arrays


# ---- multifit ---------------------------------------------------------------------------------------

def metrics_of(spec):
    """The case's metrics, else the "accuracy" of a cross-entropy, which both resolve by Keras's rule."""
    return spec.get("metrics", ["accuracy"] if "crossentropy" in spec["loss"] else [])


def multifit_spec(spec):
    out = {k: v for k, v in spec.items()
           if k not in ("loss_settings", "validation_data", "sample_weight", "class_weight")}
    out["metrics"] = metrics_of(spec)
    out["loss"] = {"name": spec["loss"], **spec.get("loss_settings", {})}
    out["fit"] = dict(spec["fit"], callbacks=spec.get("callbacks", []))
    if spec.get("sample_weight"):  # each CSV row's last column
        out["fit"]["sample_weight"] = True
    if "class_weight" in spec:
        out["fit"]["class_weight"] = {str(k): v for k, v in spec["class_weight"].items()}
    out.pop("callbacks", None)
    out.update(input=FEATURES, seed=SEED, memory={"limit": "16MiB", "mode": "grow"})
    if spec["loss"] not in ("sparse_categorical_crossentropy",):
        out["targets"] = shapes(spec)[0][-1][2]
    return out


def run_multifit(binary, work, spec, x, y, w0):
    name = spec["name"]
    csv, spec_path, w0_path, end_path, result = (os.path.join(work, name + s) for s in
                                                 (".csv", ".json", ".w0", ".end", ".result.json"))
    w = row_weights(spec)
    np.savetxt(csv, np.hstack([x, y] + ([] if w is None else [w[:, None]])), delimiter=",", fmt="%.9g")
    write_mfw(w0_path, spec, w0)
    json.dump(multifit_spec(spec), open(spec_path, "w"), indent=1)
    cmd = [binary, "train", spec_path, "--backend", "cpu", "--threads", "1", "--data", "csv:" + csv,
           "--load", w0_path, "--save", end_path, "--json", result, "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    model = json.load(open(result))["models"][0]
    history = {"loss": [e["loss"] for e in model["epochs"]], "val_loss": [e["val_loss"] for e in model["epochs"]]}
    for e in model["epochs"]:
        for key, value in (e.get("metrics") or {}).items():
            history.setdefault(key, []).append(value)
        for key, value in (e.get("val_metrics") or {}).items():
            history.setdefault("val_" + key, []).append(value)
        if e.get("learning_rate") is not None:
            history.setdefault("learning_rate", []).append(e["learning_rate"])
    return history, read_mfw(end_path, spec)


# ---- Keras ------------------------------------------------------------------------------------------

def mix32(x):
    """kernels/element_math.h's mix32, on uint32 arrays (numpy wraps their products)."""
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x7feb352d)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x846ca68b)
    return x ^ (x >> np.uint32(16))


def dropout_uniform(seed, layer, step, elements):
    """kernels/layer_math.h's dropout_uniform: the draw of each element of the batch, in [0, 1)."""
    with np.errstate(over="ignore"):
        u32 = lambda v: np.uint32(v & 0xFFFFFFFF)  # noqa: E731
        key = mix32(u32(seed) ^ mix32(u32(seed >> 32) + np.uint32(0x9e3779b9) * u32(layer + 1)))
        at = mix32(key ^ mix32(u32(step) ^ mix32(u32(step >> 32) + np.uint32(0x85ebca6b))))
        e = elements.astype(np.uint64)
        low, high = (e & 0xFFFFFFFF).astype(np.uint32), (e >> 32).astype(np.uint32)
        bits = mix32(at ^ mix32(low + np.uint32(0xc2b2ae35) * high))
    return (bits >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)


class HashDropout(keras.layers.Layer):
    """keras.layers.Dropout with multifit's masks: the draw of the model's seed, the layer's index in
    the spec and the optimizer's step count (the steps before this one), tf.nn.dropout's scaling."""

    def __init__(self, rate, index, step, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.index, self.step = rate, index, step
        self.scale = np.float32(1.0 / (1.0 - rate))  # in double, then float32, as tf.nn.dropout

    def call(self, x, training=False):
        if not training:
            return x

        def keep(step, rows, cols):
            draws = dropout_uniform(SEED, self.index, int(step), np.arange(int(rows) * int(cols)))
            return (draws >= np.float32(self.rate)).reshape(int(rows), int(cols))

        shape = tf.shape(x)
        step = tf.identity(self.step().value)  # read when the step runs, not when it is traced
        mask = tf.numpy_function(keep, [step, shape[0], shape[1]], tf.bool)
        mask.set_shape(x.shape)
        return tf.where(mask, x * self.scale, tf.zeros_like(x))


LOSSES = {"mse": "MeanSquaredError", "mae": "MeanAbsoluteError", "huber": "Huber", "log_cosh": "LogCosh",
          "msle": "MeanSquaredLogarithmicError",
          "binary_crossentropy": "BinaryCrossentropy", "categorical_crossentropy": "CategoricalCrossentropy",
          "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy"}


def keras_optimizer(spec):
    spec = copy.deepcopy(spec)
    if isinstance(spec.get("learning_rate"), dict):
        s = spec["learning_rate"]
        spec["learning_rate"] = getattr(keras.optimizers.schedules, s["class_name"])(**s["config"])
    name = {"adam": "Adam", "sgd": "SGD", "rmsprop": "RMSprop", "adamw": "AdamW", "adagrad": "Adagrad",
            "adamax": "Adamax", "nadam": "Nadam", "lion": "Lion"}[spec.pop("name")]
    return getattr(keras.optimizers, name)(**spec)


def keras_layer(index, layer, step, hash_dropout=True):
    settings = {k: v for k, v in layer.items() if k != "type"}
    if layer["type"] == "Dropout" and hash_dropout:
        return HashDropout(settings["rate"], index, step)
    for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer"):
        if key in settings:
            r = settings[key]
            if isinstance(r, dict) and "name" in r:
                r = {"class_name": {"l1": "L1", "l2": "L2", "l1_l2": "L1L2"}[r["name"]],
                     "config": {k: v for k, v in r.items() if k != "name"}}
            settings[key] = keras.regularizers.get(r)
    return getattr(keras.layers, layer["type"])(**settings)


def keras_model(spec, w0, hash_dropout=True):
    """The case's Keras model, compiled, with the weights w0. hash_dropout: multifit's masks in
    Keras's Dropout (to train it); else keras.layers.Dropout (to convert it, as a user's would be)."""
    keras.utils.set_random_seed(0)
    keras.backend.clear_session()
    optimizer = keras_optimizer(spec["optimizer"])
    step = lambda: optimizer.iterations  # noqa: E731
    model = keras.Sequential([keras.Input((FEATURES,))] +
                             [keras_layer(i, l, step, hash_dropout) for i, l in enumerate(spec["layers"])])
    model.set_weights(w0)
    loss = getattr(keras.losses, LOSSES[spec["loss"]])(**spec.get("loss_settings", {}))
    model.compile(optimizer=optimizer, loss=loss, metrics=metrics_of(spec), jit_compile=False)
    return model


def fit_arguments(spec, x, y):
    """model.fit's arguments of the case, for Keras and for multifit's Python package alike: the last
    rows as validation_data where the case says so, else its validation_split; its sample or class
    weights."""
    fit, w = spec["fit"], row_weights(spec)
    args = {"x": x, "y": y, "epochs": fit["epochs"], "batch_size": fit["batch_size"], "shuffle": False, "verbose": 0}
    if "class_weight" in spec:
        args["class_weight"] = spec["class_weight"]
    if spec.get("validation_data"):
        n = ROWS - int(np.floor(ROWS * (1.0 - fit["validation_split"])))  # the rows Keras's split takes
        if w is not None:
            return args | {"x": x[:-n], "y": y[:-n], "sample_weight": w[:-n],
                           "validation_data": (x[-n:], y[-n:], w[-n:])}
        return args | {"x": x[:-n], "y": y[:-n], "validation_data": (x[-n:], y[-n:])}
    return args | {"validation_split": fit["validation_split"]} | ({} if w is None else {"sample_weight": w})


def run_keras(spec, x, y, w0):
    model = keras_model(spec, w0)
    callbacks = [getattr(keras.callbacks, c["type"])(**{k: v for k, v in c.items() if k != "type"})
                 for c in spec.get("callbacks", [])]
    h = model.fit(**fit_arguments(spec, x, y), callbacks=callbacks).history
    if not any(isinstance(c, keras.callbacks.ReduceLROnPlateau) for c in callbacks):
        h.pop("learning_rate", None)
    return h, model.get_weights()


def run_from_keras(spec, x, y, w0):
    """What a Keras user's script gets from multifit's Python package: multifit.from_keras of the
    compiled Keras model (its weights w0, not yet trained), trained by its fit with the same
    arguments and multifit.callbacks of the same names; on the cpu backend, seeded as the spec."""
    converted = multifit.from_keras(keras_model(spec, w0, hash_dropout=False), backend="cpu", threads=1)
    converted.seed = SEED  # the draw of multifit's Dropout masks, which the Keras run's HashDropout replays
    callbacks = [getattr(multifit.callbacks, c["type"])(**{k: v for k, v in c.items() if k != "type"})
                 for c in spec.get("callbacks", [])]
    h = converted.fit(**fit_arguments(spec, x, y), callbacks=callbacks).history
    return h, converted.get_weights()


# ---- Comparison --------------------------------------------------------------------------------------

def max_diff(a, b):
    """Max abs and max relative difference over paired values; None where the series does not exist
    (a side without it, as Keras's history without validation rows, holds None)."""
    a, b = a or [None] * len(b), b or [None] * len(a)
    if len(a) != len(b):
        return {"abs": float("inf"), "rel": float("inf")}
    pairs = [(float(p), float(q)) for p, q in zip(a, b) if p is not None or q is not None]
    if not pairs:
        return None
    if any(p is None or q is None for p, q in pairs):
        return {"abs": float("inf"), "rel": float("inf")}
    absd = [abs(p - q) for p, q in pairs]
    return {"abs": max(absd), "rel": max(d / max(abs(p), 1e-30) for d, (p, _) in zip(absd, pairs))}


def compare(spec, keras_run, mf_run, w0):
    (kh, kw), (mh, mw) = keras_run, mf_run
    row = {"case": spec["name"], "epochs": [len(kh["loss"]), len(mh["loss"])], "keras": kh, "multifit": mh,
           "series": {}}
    fails = [] if len(kh["loss"]) == len(mh["loss"]) else ["epochs"]
    for key in sorted(set(kh) | set(mh)):
        d = max_diff(kh.get(key, []), mh.get(key, []))
        row["series"][key] = d
        if d is None:
            continue
        bare = key[4:] if key.startswith("val_") else key
        if key == "learning_rate":
            bad = d["rel"] > RATE_RTOL
        elif bare in ACCURACIES:
            bad = d["abs"] > METRIC_ATOL
        else:
            bad = d["abs"] > LOSS_ATOL + LOSS_RTOL * max(abs(float(v)) for v in kh.get(key, [0]) if v is not None)
        if bad:
            fails.append(key)
    kflat, mflat = np.concatenate([a.ravel() for a in kw]), np.concatenate([a.ravel() for a in mw])
    wabs = np.abs(kflat.astype(np.float64) - mflat)
    row["weights"] = {"abs": float(wabs.max()), "rel": float((wabs / np.maximum(np.abs(kflat), 1e-30)).max())}
    row["moved"] = float(np.abs(kflat - np.concatenate([a.ravel() for a in w0])).max())  # training did happen
    if not np.allclose(mflat, kflat, rtol=W_RTOL, atol=W_ATOL):
        fails.append("weights")
    row["pass"], row["failed"] = not fails, fails
    return row


# ---- Initializers, by their statistics ---------------------------------------------------------------

INITIALIZERS = [  # (spec form, the formula's bound, stddev): fan_in 256, fan_out 512
    ("glorot_uniform", np.sqrt(6 / 768), np.sqrt(2 / 768)),
    ("glorot_normal", 2 * np.sqrt(2 / 768) / 0.87962566103423978, np.sqrt(2 / 768)),
    ("he_uniform", np.sqrt(6 / 256), np.sqrt(2 / 256)),
    ("he_normal", 2 * np.sqrt(2 / 256) / 0.87962566103423978, np.sqrt(2 / 256)),
    ("lecun_uniform", np.sqrt(3 / 256), np.sqrt(1 / 256)),
    ("lecun_normal", 2 * np.sqrt(1 / 256) / 0.87962566103423978, np.sqrt(1 / 256)),
    ({"name": "random_uniform", "minval": -0.2, "maxval": 0.2}, 0.2, 0.4 / np.sqrt(12)),
    ({"name": "random_normal", "stddev": 0.1}, None, 0.1),
    ({"name": "truncated_normal", "stddev": 0.1}, 0.2, 0.1 * 0.87962566103423978),
]


def initializer_row(binary, work, init, bound, stddev):
    name = init if isinstance(init, str) else init["name"]
    spec = {"name": name, "input": 256, "layers": [dense(512, kernel_initializer=init), dense(1)], "loss": "mse",
            "fit": {"epochs": 0}, "seed": SEED}
    spec_path, w_path = os.path.join(work, name + ".json"), os.path.join(work, name + ".w")
    json.dump(spec, open(spec_path, "w"))
    cmd = [binary, "train", spec_path, "--backend", "cpu", "--data", "synthetic:regression:rows=64,features=256",
           "--save", w_path, "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    data = open(w_path, "rb").read()  # "MFW2", 2 layers' headers, the count, then the first kernel
    kernel = np.frombuffer(data, "<f4", 256 * 512, 8 + 20 * 2 + 8).astype(np.float64)
    keras_init = keras.initializers.get(init if isinstance(init, str) else
                                        {"class_name": "".join(p.title() for p in name.split("_")),
                                         "config": {k: v for k, v in init.items() if k != "name"} | {"seed": 1}})
    drawn = np.asarray(keras_init((256, 512))).astype(np.float64)
    n = kernel.size
    row = {"initializer": name, "mean": float(kernel.mean()), "sd": float(kernel.std()),
           "keras_sd": float(drawn.std()), "formula_sd": float(stddev), "max": float(np.abs(kernel).max()),
           "bound": None if bound is None else float(bound)}
    fails = []
    if abs(row["mean"]) > 5 * stddev / np.sqrt(n):
        fails.append("mean")
    if abs(row["sd"] / row["keras_sd"] - 1) > 0.01 or abs(row["sd"] / stddev - 1) > 0.01:
        fails.append("sd")
    if bound is not None and not (bound * 0.99 <= row["max"] <= bound * (1 + 1e-6)):
        fails.append("bound")
    row["pass"], row["failed"] = not fails, fails
    return row


# ---- Report ------------------------------------------------------------------------------------------

def fmt(d, key):
    return "-" if d is None else f"{d[key]:.1e}"


def table(rows):
    cols = ["case", "result", "from_keras", "epochs", "loss rel", "val_loss rel", "metrics (max rel; accuracies abs)",
            "learning_rate rel", "weights abs", "weights rel", "weights moved", "seconds"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        result = "PASS" if r["pass"] else "FAIL (" + ", ".join(r["failed"]) + ")"
        s = r["series"]
        metrics = [f"{k} {fmt(d, 'abs' if (k[4:] if k.startswith('val_') else k) in ACCURACIES else 'rel')}"
                   for k, d in s.items() if k not in ("loss", "val_loss", "learning_rate") and d is not None]
        epochs = str(r["epochs"][0]) if r["epochs"][0] == r["epochs"][1] else f"{r['epochs'][0]} vs {r['epochs'][1]}"
        fk = r["from_keras"]
        from_keras = "PASS" if fk["pass"] else "FAIL (" + (fk.get("error") or ", ".join(fk["failed"])) + ")"
        cells = [r["case"], result, from_keras, epochs, fmt(s.get("loss"), "rel"), fmt(s.get("val_loss"), "rel"),
                 ", ".join(metrics) or "-", fmt(s.get("learning_rate"), "rel"), fmt(r["weights"], "abs"),
                 fmt(r["weights"], "rel"), f"{r['moved']:.1e}", f"{r['seconds']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def initializer_table(rows):
    lines = ["| initializer | result | mean | sd | Keras's sd | formula's sd | max abs | bound |", "|" + "---|" * 8]
    for r in rows:
        result = "PASS" if r["pass"] else "FAIL (" + ", ".join(r["failed"]) + ")"
        bound = "-" if r["bound"] is None else f"{r['bound']:.5f}"
        lines.append(f"| {r['initializer']} | {result} | {r['mean']:.1e} | {r['sd']:.5f} | {r['keras_sd']:.5f} | "
                     f"{r['formula_sd']:.5f} | {r['max']:.5f} | {bound} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--multifit", default="build/bin/multifit", help="the multifit binary")
    ap.add_argument("--out", help="write exactness.md and exactness.json to this folder")
    ap.add_argument("--only", nargs="*", help="run only these cases (by name)")
    args = ap.parse_args()
    if not os.access(args.multifit, os.X_OK):
        sys.exit(f"{args.multifit}: not an executable (build it: cmake --build build -j2 --target multifit)")
    cases = [c for c in CASES if not args.only or c["name"] in args.only]
    if args.only and len(cases) != len(args.only):
        sys.exit("unknown case; the cases: " + ", ".join(c["name"] for c in CASES))
    start, rows, inits = time.perf_counter(), [], []
    with tempfile.TemporaryDirectory(prefix="exactness-") as work:
        for seed, spec in enumerate(cases):
            t0 = time.perf_counter()
            x, y = make_data(spec, seed)
            w0 = initial_weights(spec, 1000 + seed)
            mf = run_multifit(args.multifit, work, spec, x, y, w0)
            kr = run_keras(spec, x, y, w0)
            row = compare(spec, kr, mf, w0)
            try:
                fk = compare(spec, kr, run_from_keras(spec, x, y, w0), w0)
                row["from_keras"] = {k: fk[k] for k in ("pass", "failed", "epochs", "series", "weights")}
            except (ValueError, TypeError, RuntimeError) as e:  # a refusal: the conversion fails the case
                row["from_keras"] = {"pass": False, "failed": ["conversion"], "error": str(e).splitlines()[0]}
            row.update(spec=multifit_spec(spec), seconds=time.perf_counter() - t0)
            rows.append(row)
            fk = row["from_keras"]
            print(f"{spec['name']}: {'PASS' if row['pass'] else 'FAIL ' + str(row['failed'])}; from_keras "
                  f"{'PASS' if fk['pass'] else 'FAIL ' + (fk.get('error') or str(fk['failed']))}", file=sys.stderr)
        if not args.only:
            inits = [initializer_row(args.multifit, work, *i) for i in INITIALIZERS]
    ok = all(r["pass"] and r["from_keras"]["pass"] for r in rows) and all(r["pass"] for r in inits)
    text = table(rows) + ("\n\n" + initializer_table(inits) if inits else "")
    summary = (f"{sum(r['pass'] for r in rows)}/{len(rows)} cases, {sum(r['from_keras']['pass'] for r in rows)}/"
               f"{len(rows)} through from_keras and {sum(r['pass'] for r in inits)}/{len(inits)} "
               f"initializers pass; tolerances: weights rtol {W_RTOL:g} atol {W_ATOL:g}, losses and regression "
               f"metrics rtol {LOSS_RTOL:g} atol {LOSS_ATOL:g}, accuracies atol {METRIC_ATOL:g}, learning rates rtol "
               f"{RATE_RTOL:g}; {ROWS} rows x {FEATURES} features, shuffle off; keras {keras.__version__}, "
               f"tensorflow {tf.__version__}, {multifit.build_info()['description']}; {time.perf_counter() - start:.1f} s")
    print(text + "\n\n" + summary)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "exactness.md"), "w") as f:
            f.write("# multifit against Keras, step for step\n\n" + text + "\n\n" + summary + "\n")
        with open(os.path.join(args.out, "exactness.json"), "w") as f:
            json.dump({"pass": ok, "summary": summary, "cases": rows, "initializers": inits}, f, indent=1,
                      default=float)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
