"""multifit from Python: Keras-shaped small dense networks trained on multifit's hand-written kernels,
and sweeps of them in the study's modes, measured.

    import multifit
    model = multifit.Sequential([multifit.layers.Dense(64, activation="relu"),
                                 multifit.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=2, batch_size=64, validation_split=0.2)
    result = multifit.run("examples/tiny-sweep.json", mode="streams")
"""
import os as _os

from . import _multifit, callbacks, layers
from .models import History, Sequential
from .study import Result, cli, run

__all__ = ["Sequential", "History", "Result", "run", "cli", "layers", "callbacks", "build_info", "from_keras",
           "load_model"]
__version__ = _multifit.build_info()["version"]

# processes mode's workers run the multifit program installed beside the binding (this process is python).
_program = _os.path.join(_os.path.dirname(__file__), "bin", "multifit")
if _os.path.exists(_program):
    _multifit.set_worker_program(_program)


def build_info():
    """What this build is: {"version", "commit", "cuda" (whether it has the cuda backend), "mpi",
    "description"} (the line `multifit --version` prints)."""
    return _multifit.build_info()


def from_keras(model, **compile_kwargs):
    """A multifit Sequential with the weights of a Keras Sequential of supported layers: a Keras model
    object, its to_json() text, or a `.keras` file's path (then Keras itself is not needed), compiled
    as it was; compile_kwargs say where it runs (backend="cpu", threads=...)."""
    from . import keras_io
    return keras_io.from_keras(model, **compile_kwargs)


def load_model(path, **compile_kwargs):
    """A `.keras` file as a multifit Sequential, compiled as it was saved (keras.saving.load_model's
    counterpart; h5py needed, Keras not)."""
    from . import keras_io
    return keras_io.from_keras(keras_io.existing_file(path, "load_model", "a .keras file"), **compile_kwargs)
