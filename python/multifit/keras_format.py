"""Keras 3's serialized Sequential <-> multifit's model spec, and `.keras` files, without Keras.

    spec_from_keras_config(config) -> spec      what model.get_config(), model.to_json() or a .keras
                                                file's config.json says, as a multifit spec dict
    keras_config_from_spec(spec) -> config      the inverse: a .keras file's config.json content
    read_keras_file(path) -> (config, weights, optimizer_variables)
                                                a .keras file's config.json, weights and optimizer
    write_keras_file(path, config, weights, optimizer)
                                                a .keras file that keras.saving.load_model opens

The weights are a list in Keras's `model.get_weights()` order: per layer, a Dense's kernel
(inputs, units) then its bias (units,); a BatchNormalization's gamma (if scale), beta (if center),
moving_mean and moving_variance (features,).

A `.keras` file (Keras 3.15.1 writes it so) is a zip of three stored entries:
  metadata.json     {"keras_version": "3.15.1", "date_saved": "2026-12-04@18:52:54"}
  config.json       {"module": "keras", "class_name": "Sequential", "config": {...},
                     "registered_name": null, "build_config": {...}, "compile_config": {...}}
  model.weights.h5  per layer "layers/<key>/vars/0", "/1", ... (float32 datasets), the group "vars"
                    holding the attribute name=<the layer's name>; <key> is the layer's class in
                    snake case, numbered within the model (dense, dense_1, batch_normalization),
                    not the layer's name; InputLayer has none; the model's own group "vars"
                    (name=<model name>); "optimizer/vars/0", "/1", ... (name=<the optimizer's
                    name>) when the model was compiled: optimizer.variables, laid out as
                    keras_optimizer_state.py says.

Keras -> spec is read by multifit's spec reader (the compiled library's, which the command line's
"keras_config" uses too), so that both accept and refuse the same configs with the same words.
Only numpy is needed besides; h5py only to read or write the weights (`pip install h5py`).
"""
import datetime
import io
import json
import math
import re
import zipfile

import numpy as np

# The Keras version whose files this module's were copied from (metadata.json says it).
KERAS_VERSION = "3.15.1"

_LAYERS_SUPPORTED = "multifit builds Dense, Dropout, BatchNormalization, Activation and Flatten"
# Keras's activation layers, weightless as Activation is.
_ACTIVATION_LAYERS = ("ReLU", "ELU", "Softmax")


# ---- Shared pieces --------------------------------------------------------------------------------

def _object(value, kind_key="name"):
    """(kind, settings) of a Keras object in any form: "adam"; {"class_name": "Adam", "config": {...}}
    (Keras's serialize(), "module" and "registered_name" beside it; a function's config is its name);
    or flat {"name": "adam", "learning_rate": 0.01} (multifit's spec), kind under `kind_key`."""
    if isinstance(value, str):
        return value, {}
    if not isinstance(value, dict):
        return None, {}
    if "class_name" in value:
        config = value.get("config")
        if isinstance(config, str):  # {"class_name": "function", "config": "binary_crossentropy"}
            return config, {}
        return value["class_name"], dict(config or {})
    settings = {k: v for k, v in value.items() if k != kind_key}
    return value.get(kind_key), settings


def _snake_case(name):
    """keras.src.utils.naming.to_snake_case: "BatchNormalization" -> "batch_normalization"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


class _Numbering:
    """Keras's names within a model: the first of a kind is its name, then name_1, name_2, ...
    (its auto-names in a fresh session, and the keys of model.weights.h5's layer groups)."""

    def __init__(self):
        self._used = {}

    def __call__(self, name):
        count = self._used.get(name, -1) + 1
        self._used[name] = count
        return name if count == 0 else f"{name}_{count}"


def _model_parts(config, who):
    """(the Sequential's own config: name, layers, ...; its compile_config or None), from any of
    model.get_config(), model.to_json()'s object, or a .keras file's config.json."""
    if not isinstance(config, dict):
        raise ValueError(f"{who}: expected a dict, got {type(config).__name__}")
    if "class_name" in config:
        if config["class_name"] != "Sequential":
            raise ValueError(f"{who}: a {config['class_name']} model is not supported; multifit converts a "
                             f"keras.Sequential")
        return config.get("config") or {}, config.get("compile_config")
    if not isinstance(config.get("layers"), list):
        raise ValueError(f"{who}: expected a Sequential's config, with its \"layers\"")
    return config, config.get("compile_config")


def _batch_dims(shape, where):
    """A Keras batch shape [null, d1, ...] as (d1, ...), each a positive int."""
    dims = tuple(shape[1:]) if isinstance(shape, (list, tuple)) else ()
    if not dims or not all(isinstance(d, int) and d > 0 for d in dims):
        raise ValueError(f"{where}: the input shape {shape!r} is not [null, features] of known sizes")
    return dims


def _input_dims(model_config, who):
    """The shape of one input row, (features,) or (height, width, channels): the InputLayer's
    batch_shape (Keras 3) or batch_input_shape (Keras 2), a first layer's, or build_input_shape."""
    layers = model_config.get("layers") or []
    first = layers[0].get("config", {}) if layers and isinstance(layers[0], dict) else {}
    for key in ("batch_shape", "batch_input_shape"):
        if first.get(key) is not None:
            return _batch_dims(first[key], f"{who}: layer {first.get('name')!r}")
    if model_config.get("build_input_shape") is not None:
        return _batch_dims(model_config["build_input_shape"], f"{who}: build_input_shape")
    raise ValueError(f"{who}: the model has no input shape; start it with keras.Input(shape=(features,)) or build it")


# ---- Keras -> spec -------------------------------------------------------------------------------

def spec_from_keras_config(config):
    """A multifit spec dict of a Keras 3 Sequential's config.

    `config` is model.get_config(), json.loads(model.to_json()) or a .keras file's config.json. The
    spec has "name", "input" (features per row), "input_shape" ([height, width, channels]: an image
    input flattened by a first Flatten), "layers" and, where the config has a compile_config with a
    loss, "loss", "metrics" and "optimizer", in the form multifit's spec reader writes.

    The command line's spec reader judges it (its "keras_config" reads the same configs): a
    ValueError of one line naming the place and what multifit allows, for a model that is not a
    Sequential, a layer multifit does not build, a setting multifit does not have set away from
    Keras's default, or an optimizer, loss or metric multifit does not have.
    """
    from . import _multifit  # the compiled library: the package's, not this file's alone
    return json.loads(_multifit.spec_from_keras(json.dumps(config)))


# ---- Spec -> Keras -------------------------------------------------------------------------------

def keras_config_from_spec(spec):
    """The config.json of a `.keras` file holding a Keras 3 Sequential of `spec` (a multifit spec
    dict, in any form multifit's reader accepts): InputLayer, the layers (named as Keras names them
    in a fresh session: dense, dense_1, ...), build_config and, where the spec has a loss, the
    compile_config of its optimizer, loss and metrics (those the model reports). The fit, data, seed
    and preprocessing settings are multifit's training, not the model's, and are not carried.

    Written by the spec reader's library, which first judges the spec: a ValueError of one line,
    the command line's, for a spec multifit would not train.
    """
    from . import _multifit  # the compiled library: the package's, not this file's alone
    return json.loads(_multifit.keras_config(json.dumps(spec)))


def _serialized(module, class_name, config):
    return {"module": module, "class_name": class_name, "config": config, "registered_name": None}


# ---- .keras files --------------------------------------------------------------------------------

_CONFIG, _METADATA, _WEIGHTS = "config.json", "metadata.json", "model.weights.h5"


def _import_h5py():
    try:
        import h5py
    except ImportError as e:
        raise ImportError("reading and writing .keras files needs h5py: pip install h5py") from e
    return h5py


def _weight_groups(model_config):
    """[(model.weights.h5's key of the layer, its class, its settings)] in order: Keras numbers a
    Sequential's layers (its InputLayer is none of them) by class in snake case, not by name."""
    number = _Numbering()
    classes_and_settings = (_object(layer, "class_name") for layer in model_config.get("layers", []))
    return [(number(_snake_case(cls)), cls, settings) for cls, settings in classes_and_settings if cls != "InputLayer"]


def read_keras_file(path):
    """(config, weights, optimizer_variables) of a Keras 3 `.keras` file: its config.json as a dict,
    its layers' variables as numpy arrays in model.get_weights() order (per layer, its "vars/0",
    "vars/1", ...), and read_optimizer_h5's list of its optimizer's variables (None without).

    Raises FileNotFoundError for a missing file; ValueError for a file that is not a .keras zip with
    config.json and model.weights.h5 (a legacy HDF5 .h5 model, weights saved as npz), or whose model
    is not a Sequential; ImportError where h5py is not installed.
    """
    h5py = _import_h5py()
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError(f"read_keras_file: {path}: not a .keras file: no readable zip archive (damaged or "
                         f"truncated?); legacy HDF5 models are not read") from None
    with archive:
        names = archive.namelist()
        for needed in (_CONFIG, _WEIGHTS):
            if needed not in names:
                raise ValueError(f"read_keras_file: {path}: the archive has no {needed} (it has {', '.join(names)})")
        try:
            config = json.loads(archive.read(_CONFIG))
            data = archive.read(_WEIGHTS)
        except (zipfile.BadZipFile, json.JSONDecodeError) as e:
            raise ValueError(f"read_keras_file: {path}: the archive is damaged ({e})") from None
    model_config, _ = _model_parts(config, f"read_keras_file: {path}")
    return config, read_weights_h5(io.BytesIO(data), model_config), read_optimizer_h5(io.BytesIO(data))


def read_weights_h5(file, model_config):
    """The layers' variables of a Keras 3 weights file (a path, or a file object: a .keras file's
    model.weights.h5, or what model.save_weights("m.weights.h5") writes) as numpy arrays in
    model.get_weights() order, its layers keyed as `model_config`'s Sequential numbers them."""
    weights = []
    with _import_h5py().File(file, "r") as h5:
        for key, _, _ in _weight_groups(model_config):
            group = h5.get(f"layers/{key}/vars")
            if group is not None:
                weights.extend(np.array(group[name]) for name in sorted(group.keys(), key=int))
    return weights


def read_optimizer_h5(file):
    """The optimizer's variables of a Keras 3 weights file ("optimizer/vars/0", "/1", ... as numpy
    arrays, in order), or None where the file holds none (a model saved uncompiled)."""
    with _import_h5py().File(file, "r") as h5:
        group = h5.get("optimizer/vars")
        return None if group is None else [np.array(group[name]) for name in sorted(group.keys(), key=int)]


def trainable_shapes(config):
    """The shapes of Keras's model.trainable_variables of a Sequential's config in any form
    _model_parts reads: each layer's variables but a BatchNormalization's moving mean and variance."""
    model_config, _ = _model_parts(config, "trainable_shapes")
    return [shape for _, cls, _, shapes in _variable_shapes(model_config)
            for shape in (shapes[:-2] if cls == "BatchNormalization" else shapes)]


def _variable_shapes(model_config):
    """[(h5 key, layer class, layer name, [variable shapes])] of a Sequential of Dense, BatchNormalization and
    weightless layers, in Keras's order: a Dense's kernel (inputs, units) and bias (units,); a
    BatchNormalization's gamma, beta, moving_mean, moving_variance (features,)."""
    row = _input_dims(model_config, "write_keras_file")
    layers = []
    for key, cls, settings in _weight_groups(model_config):
        if cls == "Dense":
            units = int(settings["units"])
            shapes = [(row[-1], units)] + ([(units,)] if settings.get("use_bias", True) else [])
            row = (*row[:-1], units)
        elif cls == "BatchNormalization":
            flags = (settings.get("scale", True), settings.get("center", True), True, True)
            shapes = [(row[-1],)] * sum(map(bool, flags))
        elif cls == "Flatten":
            shapes, row = [], (math.prod(row),)
        elif cls in ("Dropout", "Activation", *_ACTIVATION_LAYERS):
            shapes = []
        else:
            raise ValueError(f"write_keras_file: layer {settings.get('name')!r} ({cls}) is not supported; "
                             f"{_LAYERS_SUPPORTED}")
        layers.append((key, cls, settings.get("name", key), shapes))
    return layers


def write_weights_h5(file, model_config, weights, optimizer=None):
    """Writes `weights` (model.get_weights() order) as float32 to a Keras 3 weights file (a path,
    or a file object), laid out as Keras lays out model.weights.h5 and save_weights' files: per
    layer of `model_config`'s Sequential "layers/<key>/vars/0", "/1", ..., the group "vars", and
    where `optimizer` is given, (its name, its variables in Keras's order: keras_optimizer_state.py)
    as "optimizer/vars/0", "/1", ...

    Raises ValueError where the model is not a Sequential of Dense, Dropout, BatchNormalization,
    Activation and Flatten layers, or the weights are not as many, or not of the shapes, its layers
    have (nothing is written then); ImportError where h5py is not installed."""
    h5py = _import_h5py()
    layers = _variable_shapes(model_config)
    expected = [shape for _, _, _, shapes in layers for shape in shapes]
    if len(weights) != len(expected):
        raise ValueError(f"write_keras_file: the model has {len(expected)} weights, given {len(weights)}")
    arrays = [np.asarray(w, dtype=np.float32) for w in weights]
    for i, (array, shape) in enumerate(zip(arrays, expected)):
        if array.shape != tuple(shape):
            raise ValueError(f"write_keras_file: weight {i} has shape {array.shape}, the model's is {tuple(shape)}")
    with h5py.File(file, "w") as h5:
        h5.create_group("layers")
        position = 0
        for key, _, name, shapes in layers:
            group = h5.create_group(f"layers/{key}/vars")
            group.attrs["name"] = name
            for j in range(len(shapes)):
                group.create_dataset(str(j), data=arrays[position])
                position += 1
        if optimizer is not None:
            name, variables = optimizer
            group = h5.create_group("optimizer/vars")
            group.attrs["name"] = name
            for j, variable in enumerate(variables):
                group.create_dataset(str(j), data=variable)
        h5.create_group("vars").attrs["name"] = model_config.get("name", "sequential")


def write_keras_file(path, config, weights, optimizer=None):
    """Writes a Keras 3 `.keras` file: metadata.json (keras_version, date_saved), `config`
    (keras_config_from_spec's, or a Sequential's model.get_config(), then wrapped as Keras wraps it)
    as config.json, and `weights` (model.get_weights() order) as float32 in model.weights.h5, laid
    out as Keras lays them out, with `optimizer`'s state as write_weights_h5 writes it.

    Raises ValueError where the model is not a Sequential of Dense, Dropout, BatchNormalization,
    Activation and Flatten layers, or the weights are not as many, or not of the shapes, its
    layers have (nothing is written then); ImportError where h5py is not installed.
    """
    model_config, _ = _model_parts(config, "write_keras_file")
    if "class_name" not in config:  # model.get_config(): wrapped as config.json holds it
        config = _serialized("keras", "Sequential", model_config)
    buffer = io.BytesIO()
    write_weights_h5(buffer, model_config, weights, optimizer)
    metadata = {"keras_version": KERAS_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    # Keras's order, entries stored uncompressed as Keras stores them.
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_METADATA, json.dumps(metadata))
        archive.writestr(_CONFIG, json.dumps(config))
        archive.writestr(_WEIGHTS, buffer.getvalue())
