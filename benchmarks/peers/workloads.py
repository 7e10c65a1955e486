"""The workloads multifit is measured on against its peers, defined once for every peer script.

  W1  the seeds' tiny model: Dense(64, relu) -> Dense(1, sigmoid) on 1024x20 uniform inputs with
      random 0/1 labels, binary cross-entropy, Adam, batch 64.
  W2  the Fashion-MNIST MLP: 784-256-128-10, relu, softmax + sparse categorical cross-entropy, Adam;
      inputs scaled to [0, 1] as multifit's IDX loader does.
  W3  the Fashion-MNIST grid (examples/fashion-mnist-grid.json): hidden layers (10), (100), (10,10),
      (100,10) x activation tanh or relu, softmax output, Adam, batch 32.
  W4  Keras's MLP (examples/fashion-mnist-keras-mlp.json): 784-512-512-10, relu, Dropout(0.2) after
      each hidden layer, softmax + sparse categorical cross-entropy, RMSprop (rho 0.9, epsilon 1e-7),
      batch 128, the last 10% of the rows for validation each epoch, EarlyStopping(patience 3).

Every peer follows Keras's semantics as multifit does: Glorot-uniform kernels, zero biases, Adam with
epsilon 1e-7, shuffling every epoch, the last partial batch kept.
"""
import gzip
import os
import struct

import numpy as np

W1 = {"input": 20, "hidden": [64], "activation": "relu", "outputs": 1, "batch": 64, "rows": 1024}
W2 = {"input": 784, "hidden": [256, 128], "activation": "relu", "outputs": 10}
W4 = {"input": 784, "hidden": [512, 512], "activation": "relu", "outputs": 10, "dropout": 0.2, "batch": 128,
      "validation_split": 0.1}
W3_GRID = [{"input": 784, "hidden": hidden, "activation": activation, "outputs": 10, "batch": 32}
           for hidden in ([10], [100], [10, 10], [100, 10]) for activation in ("tanh", "relu")]


def w1_data(seed=1234):
    """(x, y): 1024x20 uniform floats in [0, 1) and random 0/1 labels, float32."""
    rng = np.random.default_rng(seed)
    x = rng.random((W1["rows"], W1["input"]), dtype=np.float32)
    y = rng.integers(0, 2, size=(W1["rows"], 1)).astype(np.float32)
    return x, y


def fashion_mnist_dir():
    """Where multifit reads Fashion-MNIST: $MULTIFIT_DATA/fashion-mnist, else the Debian package's."""
    root = os.environ.get("MULTIFIT_DATA")
    return os.path.join(root, "fashion-mnist") if root else "/usr/share/datasets/fashion-mnist"


def _idx(path):
    opener = gzip.open if path.endswith(".gz") or not os.path.exists(path) else open
    path = path if os.path.exists(path) else path + ".gz"
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_mnist():
    """(x_train, y_train, x_test, y_test): images as float32 rows in [0, 1], labels as int64."""
    d = fashion_mnist_dir()
    load = lambda name: _idx(os.path.join(d, name))
    x_train = load("train-images-idx3-ubyte").reshape(-1, 784).astype(np.float32) / 255.0
    x_test = load("t10k-images-idx3-ubyte").reshape(-1, 784).astype(np.float32) / 255.0
    return x_train, load("train-labels-idx1-ubyte").astype(np.int64), x_test, load("t10k-labels-idx1-ubyte").astype(np.int64)
