"""Keras models in and out of multifit: the conversions of keras_format.py applied to Sequential.

from_keras takes a Keras 3 Sequential object (Keras needed: it is the object), its to_json() text or
config dict, or a `.keras` file (read without Keras, with h5py); to_keras and save_keras write what
keras.saving.load_model opens.
"""
import json
import os
import tempfile

from .keras_format import (keras_config_from_spec, read_keras_file, read_optimizer_h5, read_weights_h5,
                           spec_from_keras_config, trainable_shapes, write_keras_file, write_weights_h5)
from .keras_optimizer_state import keras_variables, state_from_keras
from .models import Sequential


def existing_file(path, who, kind):
    """`path` (a string) where it is a file; else a FileNotFoundError naming `who`, and whether the
    path is a folder (not `kind`) or nothing."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{who}: {path}: " + (f"is a folder, not {kind}" if os.path.isdir(path)
                                                      else "no such file"))
    return path


def _config_and_weights(source):
    """(the Keras config, the weights in get_weights() order or None, the optimizer's variables or
    None) of what from_keras is given: a .keras file, a JSON file of model.to_json() (as a spec's
    keras_config names one), its text, its dict, or a Keras model."""
    is_path = isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{"))
    if is_path:
        path = existing_file(source, "from_keras", "a .keras file")
        if not path.endswith(".keras"):
            try:
                with open(path, encoding="utf-8") as file:
                    return json.loads(file.read()), None, None
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                hint = "; a weights file loads with model.load_weights" if path.endswith(".h5") else ""
                raise ValueError(f"from_keras: {path}: not a .keras file nor a model's to_json() text "
                                 f"({e}){hint}") from None
        return read_keras_file(path)
    if isinstance(source, str):
        try:
            return json.loads(source), None, None
        except json.JSONDecodeError as e:
            raise ValueError(f"from_keras: the text is not a model's to_json() ({e})") from None
    if isinstance(source, dict):
        return source, None, None
    if hasattr(source, "get_config") and hasattr(source, "get_weights"):  # a Keras model object
        config = {"class_name": type(source).__name__, "config": source.get_config()}
        variables = None
        if getattr(source, "compiled", False) and hasattr(source, "get_compile_config"):
            config["compile_config"] = _with_live_loss(source.get_compile_config(), getattr(source, "loss", None))
            variables = [v.numpy() for v in source.optimizer.variables]
        return config, source.get_weights(), variables
    raise TypeError(f"from_keras: {type(source).__name__} is not a Keras model, its to_json() text or a .keras file")


def _with_live_loss(compile_config, loss):
    """`compile_config` with the settings its loss's get_config() leaves out read from the live loss
    object: Keras 3's Huber.get_config() drops its delta, so Huber(delta=0.7) converted from the
    config alone trained with delta 1.0. A setting multifit does not have is then refused by name,
    as any other is."""
    entry = compile_config.get("loss") if isinstance(compile_config, dict) else None
    settings = getattr(loss, "_fn_kwargs", None)  # a LossFunctionWrapper's arguments to its function
    if isinstance(entry, dict) and isinstance(entry.get("config"), dict) and isinstance(settings, dict):
        for key, value in settings.items():
            entry["config"].setdefault(key, value)
    return compile_config


def from_keras(source, **compile_kwargs):
    """A multifit Sequential of a Keras Sequential, with its weights where they are given (a model
    object, a .keras file), compiled as the Keras model was (compile_kwargs add where it runs).
    Raises ValueError naming a layer or setting multifit does not have, TypeError for what is not a
    Keras model."""
    config, weights, variables = _config_and_weights(source)
    model = Sequential.from_spec(spec_from_keras_config(config), **compile_kwargs)
    if weights is not None:
        if model._compiled is None:  # weights need a built model: a loss gives it one
            model.compile(loss="mse", **compile_kwargs)
        model.set_weights(weights)
        if variables is not None and "optimizer" not in compile_kwargs:
            _set_optimizer_variables(model, config, variables, "from_keras")
    return model


def _optimizer_entry(model, config):
    """(the optimizer's name, its variables as Keras holds them: keras_optimizer_state.py) of a
    compiled model, `config` its keras_config_from_spec; None before compile."""
    if model._compiled is None:
        return None
    state = model._ensure_session().optimizer_state()
    return (config["compile_config"]["optimizer"]["config"]["name"],
            keras_variables(state, trainable_shapes(config)))


def _set_optimizer_variables(model, config, variables, who):
    """The optimizer's state and rate from Keras's optimizer.variables, where they are this model's
    optimizer's (state_from_keras: else a warning naming `who`); `config` the model's Keras config."""
    template = model._ensure_session().optimizer_state()
    state = state_from_keras(template, trainable_shapes(config), variables, who)
    if state is not None:
        model._set_optimizer_state(state)


def save_keras(model, path):
    """`model` as a Keras 3 `.keras` file at `path`: its layers, weights, compile settings and, where
    compiled, its optimizer's state (Keras's load_model goes on training from it)."""
    config = keras_config_from_spec(model.spec())
    write_keras_file(path, config, model.get_weights(), _optimizer_entry(model, config))


def save_weights_h5(model, path):
    """`model`'s weights, and its optimizer's state where compiled, as Keras 3's
    `save_weights("NAME.weights.h5")` writes them."""
    config = keras_config_from_spec(model.spec())
    write_weights_h5(path, config["config"], model.get_weights(), _optimizer_entry(model, config))


def load_weights_keras(model, path):
    """Sets `model`'s weights from a Keras 3 "NAME.weights.h5" or ".keras" file, and its optimizer's
    state where the file holds this optimizer's, as Keras's load_weights does. A ValueError naming
    the file where it is damaged or its weights are not this model's."""
    path = existing_file(path, "load_weights", "a weights file")
    try:
        if path.endswith(".keras"):
            config, weights, variables = read_keras_file(path)
        else:
            config = keras_config_from_spec(model.spec())
            weights, variables = read_weights_h5(path, config["config"]), read_optimizer_h5(path)
        model.set_weights(weights)
    except (OSError, ValueError) as e:
        raise ValueError(f"load_weights: {path}: {e}") from None
    if variables is not None and model._compiled is not None:
        _set_optimizer_variables(model, config, variables, "load_weights")


def to_keras(model):
    """`model` as a keras.Sequential with its weights, compiled as it is (needs Keras 3)."""
    import keras
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{model.name}.keras")
        save_keras(model, path)
        return keras.saving.load_model(path)
