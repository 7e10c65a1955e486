"""Shared pieces of the Python package's tests: a small binary task, and the multifit program the
package carries (the command line the numbers are compared with)."""
import os

import numpy as np
import pytest

import multifit

# A sweep of two models from the repository's examples.
SEED_PAIR = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "seed-pair.json")


@pytest.fixture
def binary_task():
    """(x, y): 600 rows of 20 features, y = whether the first two features sum above 0."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(600, 20)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    return x, y


@pytest.fixture
def program():
    """The multifit program installed with the package (processes mode's workers run it)."""
    path = os.path.join(os.path.dirname(multifit.__file__), "bin", "multifit")
    assert os.path.exists(path), f"the package has no program at {path}"
    return path


def program_epochs(program, model, x, y, folder):
    """The epochs `multifit train` reports for `model`'s spec, written as a file, on x and y saved as
    .npy files in `folder`, on one cpu thread: what the Python fit's numbers are compared with."""
    import json
    import subprocess

    spec = folder / "m.json"
    spec.write_text(json.dumps(model.spec()))
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", y)
    document = folder / "r.json"
    subprocess.run([program, "train", str(spec), "--data", f"npy:{folder}/x.npy,{folder}/y.npy",
                    "--backend", "cpu", "--threads", "1", "--quiet", "--json", str(document)], check=True)
    return json.loads(document.read_text())["models"][0]["epochs"]


def small_model(name="m", seed=3, dropout=0.1):
    """Input(20), Dense(16 relu), Dropout, BatchNormalization, Dense(1 sigmoid), compiled for binary labels."""
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(16, activation="relu"),
                                 multifit.layers.Dropout(dropout),
                                 multifit.layers.BatchNormalization(),
                                 multifit.layers.Dense(1, activation="sigmoid")], name=name, seed=seed)
    model.compile(optimizer="rmsprop", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu", threads=1)
    return model
