"""Keras 3's serialized Sequential <-> multifit's model spec, and `.keras` files, without Keras.

    spec_from_keras_config(config) -> spec      what model.get_config(), model.to_json() or a .keras
                                                file's config.json says, as a multifit spec dict
    keras_config_from_spec(spec) -> config      the inverse: a .keras file's config.json content
    read_keras_file(path) -> (config, weights)  a .keras file's config.json and its weights
    write_keras_file(path, config, weights)     a .keras file that keras.saving.load_model opens

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
                    (name=<model name>); "optimizer/vars/..." when the model was compiled.
The files written here carry no optimizer state: Keras loads them with a fresh optimizer (and warns
"Skipping variable loading for optimizer").

Only numpy is needed; h5py only to read or write the weights (`pip install h5py`).
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

# Keras's activation strings that multifit has ("silu" is Keras 3's name of swish).
_ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "softmax", "gelu", "swish", "silu", "elu", "selu",
                "softplus", "leaky_relu", "mish")

# keras.initializers: class name -> identifier, and the settings of those that take any (Keras's defaults).
_INITIALIZERS = {"GlorotUniform": "glorot_uniform", "GlorotNormal": "glorot_normal", "HeUniform": "he_uniform",
                 "HeNormal": "he_normal", "LecunUniform": "lecun_uniform", "LecunNormal": "lecun_normal",
                 "Zeros": "zeros", "Ones": "ones", "Constant": "constant", "RandomUniform": "random_uniform",
                 "RandomNormal": "random_normal", "TruncatedNormal": "truncated_normal"}
_INITIALIZER_SETTINGS = {"constant": {"value": 0.0}, "random_uniform": {"minval": -0.05, "maxval": 0.05},
                         "random_normal": {"mean": 0.0, "stddev": 0.05},
                         "truncated_normal": {"mean": 0.0, "stddev": 0.05}}
# An initializer's seed draws from Keras's generator; multifit draws every weight from the model's seed.
_INITIALIZER_IGNORED = ("seed", "input_axes", "output_axes")

# keras.regularizers: class name -> identifier, and the factors each takes.
_REGULARIZERS = {"L1": "l1", "L2": "l2", "L1L2": "l1_l2"}
_REGULARIZER_FACTORS = {"l1": ("l1",), "l2": ("l2",), "l1_l2": ("l1", "l2")}

# keras.optimizers: class name -> identifier, its own settings with Keras's defaults, and its
# learning rate's default.
_OPTIMIZERS = {"Adam": "adam", "SGD": "sgd", "RMSprop": "rmsprop", "AdamW": "adamw", "Adagrad": "adagrad",
               "Adamax": "adamax", "Nadam": "nadam", "Lion": "lion"}
_ADAM_SETTINGS = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
_OPTIMIZER_SETTINGS = {"adam": {**_ADAM_SETTINGS, "amsgrad": False}, "adamw": {**_ADAM_SETTINGS, "amsgrad": False},
                       "adamax": _ADAM_SETTINGS, "nadam": _ADAM_SETTINGS,
                       "sgd": {"momentum": 0.0, "nesterov": False},
                       "rmsprop": {"rho": 0.9, "momentum": 0.0, "epsilon": 1e-7, "centered": False},
                       "adagrad": {"initial_accumulator_value": 0.1, "epsilon": 1e-7},
                       "lion": {"beta_1": 0.9, "beta_2": 0.99}}
_OPTIMIZER_COMMON = ("learning_rate", "weight_decay", "clipnorm", "global_clipnorm", "clipvalue")
# Keras's Optimizer names its instance by its class in snake case ("rm_sprop", "adam_w").
_OPTIMIZER_KERAS_NAMES = {"rmsprop": "rm_sprop", "adamw": "adam_w"}
_SCHEDULES = ("ExponentialDecay", "CosineDecay", "PiecewiseConstantDecay", "InverseTimeDecay", "PolynomialDecay")

# keras.losses: class name -> (Keras's instance name, the identifiers Keras and multifit both take,
# the settings multifit reads).
_LOSSES = {"MeanSquaredError": ("mean_squared_error", ("mse", "mean_squared_error"), ()),
           "MeanAbsoluteError": ("mean_absolute_error", ("mae", "mean_absolute_error"), ()),
           "BinaryCrossentropy": ("binary_crossentropy", ("binary_crossentropy",), ("from_logits", "label_smoothing")),
           "CategoricalCrossentropy": ("categorical_crossentropy", ("categorical_crossentropy",),
                                       ("from_logits", "label_smoothing")),
           "SparseCategoricalCrossentropy": ("sparse_categorical_crossentropy", ("sparse_categorical_crossentropy",),
                                             ("from_logits",)),
           "Huber": ("huber_loss", ("huber",), ("delta",)),
           "LogCosh": ("log_cosh", ("log_cosh", "logcosh"), ()),
           "MeanSquaredLogarithmicError": ("mean_squared_logarithmic_error",
                                           ("msle", "mean_squared_logarithmic_error"), ())}
_LOSS_NAMES = ", ".join(ids[0] for _, ids, _ in _LOSSES.values())
_LOSS_DEFAULTS = {"from_logits": False, "label_smoothing": 0.0, "delta": 1.0}

# keras.metrics multifit computes: class name -> (identifier, Keras's instance name).
_METRIC_CLASSES = {"BinaryAccuracy": "binary_accuracy", "CategoricalAccuracy": "categorical_accuracy",
                   "SparseCategoricalAccuracy": "sparse_categorical_accuracy",
                   "MeanAbsoluteError": "mean_absolute_error", "MeanSquaredError": "mean_squared_error"}
_METRIC_NAMES = ("accuracy", "acc", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy", "mae",
                 "mean_absolute_error", "mse", "mean_squared_error")

# Keras's float32 policy, as Keras 3 writes a layer's or a model's dtype.
_FLOAT32_POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
                   "registered_name": None}

# Settings multifit takes only at Keras's default: key -> (default, what multifit does instead).
_LAYER_DEFAULTS = {"trainable": (True, "multifit trains every layer")}
_CLASS_DEFAULTS = {
    "Dense": {"kernel_constraint": (None, "multifit applies no weight constraints"),
              "bias_constraint": (None, "multifit applies no weight constraints"),
              "quantization_config": (None, "multifit trains float32 weights"),
              "lora_rank": (None, "multifit trains every weight of a layer")},
    "Dropout": {"noise_shape": (None, "multifit drops each unit on its own")},
    "BatchNormalization": {
        "axis": (-1, "multifit normalizes each feature column over the batch"),
        "beta_regularizer": (None, "multifit regularizes Dense layers only"),
        "gamma_regularizer": (None, "multifit regularizes Dense layers only"),
        "beta_constraint": (None, "multifit applies no weight constraints"),
        "gamma_constraint": (None, "multifit applies no weight constraints"),
        "synchronized": (False, "multifit normalizes over each model's own batch"),
        "renorm": (False, "multifit normalizes with the batch's statistics")},
    "Flatten": {"data_format": ("channels_last", "multifit's image rows are channels last")},
    "ReLU": {"max_value": (None, "multifit's relu has no ceiling"), "negative_slope": (0.0, "multifit's relu is 0 below 0"),
             "threshold": (0.0, "multifit's relu starts at 0")},
    "ELU": {"alpha": (1.0, "multifit's elu has alpha 1")},
    "Softmax": {"axis": (-1, "multifit's softmax is over a row's classes")},
    "InputLayer": {"sparse": (False, "multifit reads dense rows"), "ragged": (False, "multifit reads rows of one width"),
                   "optional": (False, "a model's input is required")},
}
# Settings read and dropped: bookkeeping (name), the float32 multifit computes in whatever the dtype,
# Keras's own random seeds, and settings used only with one refused above.
_LAYER_IGNORED = ("name", "dtype", "seed", "lora_alpha", "renorm_clipping", "renorm_momentum", "batch_size",
                  "batch_shape", "batch_input_shape", "input_shape", "input_dim", "shape")
# The settings multifit reads of each layer class.
_LAYER_READS = {
    "Dense": ("units", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
              "bias_regularizer", "activity_regularizer"),
    "Dropout": ("rate",),
    "BatchNormalization": ("momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
                           "moving_mean_initializer", "moving_variance_initializer"),
    "Activation": ("activation",), "Flatten": (), "ReLU": (), "ELU": (), "Softmax": (), "InputLayer": (),
}
# Keras's activation layers, each an Activation here.
_ACTIVATION_LAYERS = {"ReLU": "relu", "ELU": "elu", "Softmax": "softmax"}
_BATCH_NORM_INITIALIZERS = {"beta_initializer": "zeros", "gamma_initializer": "ones",
                            "moving_mean_initializer": "zeros", "moving_variance_initializer": "ones"}

_OPTIMIZER_DEFAULTS = {"use_ema": (False, "multifit keeps no moving average of the weights"),
                       "ema_overwrite_frequency": (None, "multifit keeps no moving average of the weights"),
                       "loss_scale_factor": (None, "multifit trains in float32, unscaled"),
                       "gradient_accumulation_steps": (None, "multifit updates the weights every step")}
_LOSS_FIXED = {"reduction": ("sum_over_batch_size", "multifit reduces a loss to its mean over the batch"),
               "axis": (-1, "multifit reduces a row's loss over its last axis"),
               "ignore_class": (None, "multifit counts every class")}


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


def _same(value, default):
    """Whether a setting is at Keras's default: numbers by value, a one-element list as its element
    (Keras 2 may write a BatchNormalization's axis as [-1])."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(default, (bool, str)) or default is None:
        return value is default or value == default
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == default


def _check_settings(where, settings, reads, defaults, ignored=()):
    """Refuses a setting multifit does not read unless it is at its default (or None, a newer
    Keras's optional feature left unset): one line naming `where`, the setting and why."""
    for key, value in settings.items():
        if key in reads or key in ignored:
            continue
        if key in defaults:
            default, why = defaults[key]
            if not _same(value, default):
                raise ValueError(f"{where} has {key}={value!r}; multifit supports only {key}={default!r}: {why}")
        elif value is not None:
            raise ValueError(f"{where} has {key}={value!r}, a setting multifit does not have; it reads "
                             f"{', '.join(reads) or 'no settings'}")


def _float32_text(x):
    """A float32 by its shortest decimal: Keras writes a learning rate (a float32 variable) as
    0.0010000000474974513; 0.001 is the same float32."""
    return float(str(np.float32(x)))


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
    input flattened by a first Flatten), "layers" and, where the config has a compile_config,
    "loss", "metrics" and "optimizer", in multifit's vocabulary (Keras's names and defaults).

    Raises ValueError, one line naming the layer (its name and class) or the compile setting, for a
    model that is not a Sequential, a layer multifit does not build, a setting multifit does not
    have set away from its default, or an optimizer, loss or metric multifit does not have.
    """
    model_config, compile_config = _model_parts(config, "from_keras")
    if model_config.get("trainable", True) is not True:
        raise ValueError("from_keras: the model has trainable=False; multifit trains every layer")
    shape = _input_dims(model_config, "from_keras")
    dims = shape  # the shape of the rows each layer reads
    spec = {"name": model_config.get("name", "sequential"), "input": math.prod(shape), "layers": []}
    for i, layer in enumerate(model_config["layers"]):
        cls, settings = _object(layer, "class_name")
        if cls == "InputLayer":
            if i != 0:
                raise ValueError(f"from_keras: layer {settings.get('name')!r} (InputLayer) comes after other layers")
            _check_layer(cls, settings)
            continue
        entry, dims = _layer_to_spec(cls, settings, dims)
        spec["layers"].append(entry)
    if not spec["layers"]:
        raise ValueError("from_keras: the model has no layers")
    if len(shape) == 3 and spec["layers"][0]["type"] == "Flatten":  # an image flattened into a row
        spec["input_shape"] = list(shape)
    if compile_config:
        spec.update(_compile_to_spec(compile_config))
    return spec


def _check_layer(cls, settings):
    where = f"from_keras: layer {settings.get('name')!r} ({cls})"
    if cls not in _LAYER_READS:
        raise ValueError(f"{where} is not supported; {_LAYERS_SUPPORTED}")
    _check_settings(where, settings, _LAYER_READS[cls], {**_LAYER_DEFAULTS, **_CLASS_DEFAULTS.get(cls, {})},
                    _LAYER_IGNORED)
    return where


def _layer_to_spec(cls, settings, dims):
    """(the layer's spec entry, the shape of its output row) for a layer reading rows of `dims`."""
    where = _check_layer(cls, settings)
    if cls == "Flatten":
        return {"type": "Flatten"}, (math.prod(dims),)
    if len(dims) != 1:
        raise ValueError(f"{where} reads a {dims} input; multifit's rows are flat: put a Flatten before it")
    if cls in _ACTIVATION_LAYERS:
        return {"type": "Activation", "activation": _ACTIVATION_LAYERS[cls]}, dims
    if cls == "Activation":
        return {"type": "Activation", "activation": _activation(settings.get("activation"), where)}, dims
    if cls == "Dropout":
        return {"type": "Dropout", "rate": settings["rate"]}, dims
    if cls == "BatchNormalization":
        entry = {"type": "BatchNormalization"}
        for key, default in (("momentum", 0.99), ("epsilon", 1e-3), ("center", True), ("scale", True)):
            entry[key] = settings.get(key, default)
        for key, default in _BATCH_NORM_INITIALIZERS.items():
            init = _initializer_to_spec(settings.get(key, default), f"{where}: {key}")
            if init != default:
                entry[key] = init
        return entry, dims
    # Dense
    entry = {"type": "Dense", "units": settings["units"], "activation": _activation(settings.get("activation"), where)}
    if settings.get("use_bias", True) is False:
        entry["use_bias"] = False
    for key, default in (("kernel_initializer", "glorot_uniform"), ("bias_initializer", "zeros")):
        init = _initializer_to_spec(settings.get(key, default), f"{where}: {key}")
        if init != default:
            entry[key] = init
    for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer"):
        regularizer = _regularizer_to_spec(settings.get(key), f"{where}: {key}")
        if regularizer is not None:
            entry[key] = regularizer
    return entry, (settings["units"],)


def _activation(value, where):
    if value is None:
        return "linear"
    if value not in _ACTIVATIONS:
        raise ValueError(f"{where}: activation {value!r} is not one multifit has; it has {', '.join(_ACTIVATIONS)}")
    return value


def _initializer_to_spec(value, where):
    """multifit's form: the identifier ("he_normal"), or {"name": ..., its settings}."""
    kind, settings = _object(value)
    name = _INITIALIZERS.get(kind, kind if kind in _INITIALIZERS.values() else None)
    if name is None:
        raise ValueError(f"{where}: initializer {kind!r} is not one multifit has; it has "
                         f"{', '.join(_INITIALIZERS.values())}")
    defaults = _INITIALIZER_SETTINGS.get(name, {})
    _check_settings(f"{where} ({kind})", settings, tuple(defaults), {}, _INITIALIZER_IGNORED)
    if not defaults:
        return name
    return {"name": name, **{key: settings.get(key, default) for key, default in defaults.items()}}


def _regularizer_to_spec(value, where):
    """None, or multifit's form {"name": "l2", "l2": 0.0001} (a string "l1"/"l2" as it is)."""
    if value is None:
        return None
    kind, settings = _object(value)
    name = _REGULARIZERS.get(kind, kind if kind in _REGULARIZERS.values() else None)
    if name is None:
        raise ValueError(f"{where}: regularizer {kind!r} is not one multifit has; it has L1, L2 and L1L2")
    if isinstance(value, str):
        return name
    factors = _REGULARIZER_FACTORS[name]
    _check_settings(f"{where} ({kind})", settings, factors, {})
    return {"name": name, **{key: settings.get(key, 0.01) for key in factors}}


def _compile_to_spec(compile_config):
    """"optimizer", "loss" and "metrics" of model.compile()'s config."""
    where = "from_keras: compile"
    # What it runs on, not what it computes: jit_compile, run_eagerly and steps_per_execution.
    fixed = {"loss_weights": (None, "multifit's models have one output, weighted 1"),
             "weighted_metrics": (None, "multifit weighs every row alike")}
    _check_settings(where, compile_config, ("optimizer", "loss", "metrics"), fixed,
                    ("jit_compile", "run_eagerly", "steps_per_execution", "auto_scale_loss"))
    out = {}
    if compile_config.get("optimizer") is not None:
        out["optimizer"] = _optimizer_to_spec(compile_config["optimizer"])
    if compile_config.get("loss") is not None:
        out["loss"] = _loss_to_spec(compile_config["loss"])
    out["metrics"] = _metrics_to_spec(compile_config.get("metrics"))
    return out


def _optimizer_to_spec(value):
    """multifit's form {"name": "adam", "learning_rate": 0.001, its settings...}."""
    kind, settings = _object(value)
    name = _OPTIMIZERS.get(kind, kind if kind in _OPTIMIZERS.values() else None)
    where = f"from_keras: optimizer {kind!r}"
    if name is None:
        raise ValueError(f"{where} is not supported; multifit has {', '.join(_OPTIMIZERS)}")
    own = _OPTIMIZER_SETTINGS[name]
    _check_settings(where, settings, _OPTIMIZER_COMMON + tuple(own), _OPTIMIZER_DEFAULTS, ("name", "ema_momentum"))
    out = {"name": name}
    rate = settings.get("learning_rate")
    if isinstance(rate, dict):
        out["learning_rate"] = _schedule_to_spec(rate, where)
    elif rate is not None:
        out["learning_rate"] = _float32_text(rate)
    out.update({key: settings[key] for key in own if key in settings})
    out.update({key: settings[key] for key in _OPTIMIZER_COMMON[1:] if settings.get(key) is not None})
    return out


def _schedule_to_spec(value, where):
    kind, settings = _object(value)
    if kind not in _SCHEDULES:
        raise ValueError(f"{where}: learning-rate schedule {kind!r} is not supported; multifit has "
                         f"{', '.join(_SCHEDULES)}")
    return {"class_name": kind, "config": {k: v for k, v in settings.items() if k != "name"}}


def _loss_class(kind):
    """(class name, the multifit identifier) of a loss by its identifier or class name, or (None, None)."""
    for class_name, (_, identifiers, _) in _LOSSES.items():
        if kind == class_name or kind in identifiers:
            return class_name, kind if kind in identifiers else identifiers[0]
    return None, None


def _loss_to_spec(value):
    """The loss's identifier ("binary_crossentropy"), or {"name": ..., its settings} where they are
    not Keras's defaults."""
    kind, settings = _object(value)
    class_name, identifier = _loss_class(kind)
    where = f"from_keras: loss {kind!r}"
    if class_name is None:
        raise ValueError(f"{where} is not supported; multifit has {_LOSS_NAMES}")
    if settings.get("reduction") == "auto":  # Keras 2's name of sum_over_batch_size
        settings["reduction"] = "sum_over_batch_size"
    if settings.get("dtype") not in (None, "float32"):
        raise ValueError(f"{where} has dtype={settings['dtype']!r}; multifit computes in float32")
    keys = _LOSSES[class_name][2]
    _check_settings(where, settings, keys, _LOSS_FIXED, ("name", "dtype"))
    given = {key: settings[key] for key in keys if key in settings and not _same(settings[key], _LOSS_DEFAULTS[key])}
    return {"name": identifier, **given} if given else identifier


def _metrics_to_spec(value):
    """A list of metric names; a metric object renamed from Keras's default name keeps its class
    and name as {"class_name": ..., "config": {"name": ...}}."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"from_keras: metrics {value!r} are not a list; multifit's models have one output")
    metrics = []
    for item in value:
        kind, settings = _object(item)
        if isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("config"), str)):
            if kind not in _METRIC_NAMES:
                raise ValueError(f"from_keras: metric {kind!r} is not supported; multifit has {', '.join(_METRIC_NAMES)}")
            metrics.append(kind)
            continue
        if kind not in _METRIC_CLASSES:
            raise ValueError(f"from_keras: metric {kind!r} is not supported; multifit has {', '.join(_METRIC_CLASSES)}")
        _check_settings(f"from_keras: metric {kind!r}", settings, (),
                        {"threshold": (0.5, "multifit's binary accuracy thresholds at 0.5")}, ("name", "dtype"))
        default_name = _METRIC_CLASSES[kind]
        name = settings.get("name") or default_name
        metrics.append(default_name if name == default_name else {"class_name": kind, "config": {"name": name}})
    return metrics


# ---- Spec -> Keras -------------------------------------------------------------------------------

def keras_config_from_spec(spec):
    """The config.json of a `.keras` file holding a Keras 3 Sequential of `spec` (a multifit spec
    dict, in any form multifit's reader accepts): InputLayer, the layers (named as Keras names them
    in a fresh session: dense, dense_1, ...), build_config and, where the spec has a loss, the
    compile_config of its optimizer (adam by default), loss and metrics. The fit, data, seed and
    preprocessing settings are multifit's training, not the model's, and are not carried.

    Raises ValueError for a spec without an input width or layers, or with a layer, activation,
    initializer, regularizer, optimizer, loss or metric that has no Keras form here.
    """
    layers = spec.get("layers")
    if not isinstance(layers, list) or not layers:
        raise ValueError("to_keras: the spec has no layers")
    dims = _spec_input_dims(spec)
    model_name = spec.get("name", "sequential")
    keras_layers = [{"module": "keras.layers", "class_name": "InputLayer",
                     "config": {"batch_shape": [None, *dims], "dtype": "float32", "sparse": False, "name": "input_layer"},
                     "registered_name": None}]
    number = _Numbering()
    row = dims
    for i, entry in enumerate(layers):
        cls, settings = _spec_layer(entry, i)
        if cls == "InputLayer":
            continue
        if cls in _ACTIVATION_LAYERS:  # ReLU, ELU, Softmax: written as the Activation layers they are here
            cls, settings = "Activation", {"activation": _ACTIVATION_LAYERS[cls]}
        layer, row = _keras_layer(cls, settings, number(_snake_case(cls)), row, i)
        keras_layers.append(layer)
    config = {"module": "keras", "class_name": "Sequential",
              "config": {"name": model_name, "trainable": True, "dtype": _FLOAT32_POLICY, "layers": keras_layers,
                         "build_input_shape": [None, *dims]},
              "registered_name": None, "build_config": {"input_shape": [None, *dims]}}
    if spec.get("loss") is not None:
        config["compile_config"] = {
            "optimizer": _keras_optimizer(spec.get("optimizer", "adam")), "loss": _keras_loss(spec["loss"]),
            "loss_weights": None, "metrics": _keras_metrics(spec.get("metrics")), "weighted_metrics": None,
            "run_eagerly": False, "steps_per_execution": 1, "jit_compile": "auto"}
    return config


_SPEC_LAYER_CLASSES = ("Dense", "Dropout", "BatchNormalization", "Activation", "Flatten", "InputLayer", "ReLU",
                       "ELU", "Softmax")


def _spec_layer(entry, i):
    """(Keras class name, settings) of a spec's layer entry: {"type": "Dense", ...} (Dense where no
    type), {"class_name": ..., "config": {...}}, or multifit's older "dense", "batch_normalization"."""
    if not isinstance(entry, dict):
        raise ValueError(f"to_keras: layers[{i}] is not an object")
    kind, settings = _object(entry, "type")
    kind = kind or "Dense"
    for cls in _SPEC_LAYER_CLASSES:
        if kind == cls or str(kind).replace("_", "").lower() == cls.lower():
            return cls, settings
    raise ValueError(f"to_keras: layers[{i}] is a {kind!r} layer; {_LAYERS_SUPPORTED}")


def _spec_input_dims(spec):
    """The Keras input's shape: (input,), or the spec's input_shape (an image) where the first layer
    is a Flatten; an InputLayer entry or a first layer's input_shape/input_dim gives it too."""
    first_cls, first = _spec_layer(spec["layers"][0], 0)
    for key in ("batch_shape", "batch_input_shape"):
        if first.get(key) is not None:
            return _batch_dims(first[key], "to_keras: layers[0]")
    for key in ("shape", "input_shape"):
        if first.get(key) is not None:
            return _batch_dims([None, *first[key]], "to_keras: layers[0]")
    if first.get("input_dim") is not None:
        return (int(first["input_dim"]),)
    if spec.get("input") is None:
        raise ValueError("to_keras: the spec gives no input width: give \"input\" (features per row)")
    width = int(spec["input"])
    shape = spec.get("input_shape")
    if shape and first_cls == "Flatten" and math.prod(shape) == width:
        return tuple(int(d) for d in shape)
    return (width,)


def _keras_layer(cls, settings, name, row, i):
    """(Keras's serialized layer, the shape of its output row) of a spec layer reading rows of `row`."""
    config = {"name": name, "trainable": True, "dtype": _FLOAT32_POLICY}
    build = {"input_shape": [None, *row]}
    if cls == "Activation":
        config["activation"] = _activation(settings.get("activation"), f"to_keras: layers[{i}]")
        return _serialized("keras.layers", "Activation", config), row
    if cls == "Flatten":
        config["data_format"] = "channels_last"
        return _serialized("keras.layers", "Flatten", config, build), (math.prod(row),)
    if cls == "Dropout":
        config.update({"rate": settings["rate"], "seed": None, "noise_shape": None})
        return _serialized("keras.layers", "Dropout", config), row
    if cls == "BatchNormalization":
        config.update({"axis": -1, "momentum": settings.get("momentum", 0.99),
                       "epsilon": settings.get("epsilon", 1e-3), "center": settings.get("center", True),
                       "scale": settings.get("scale", True)})
        for key, default in _BATCH_NORM_INITIALIZERS.items():
            config[key] = _keras_initializer(settings.get(key, default), f"to_keras: layers[{i}]: {key}")
        config.update({"beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None,
                       "gamma_constraint": None})
        return _serialized("keras.layers", "BatchNormalization", config, build), row
    # Dense: Keras writes an activity regularizer, when it has one, before its own settings.
    if settings.get("activity_regularizer") is not None:
        config["activity_regularizer"] = _keras_regularizer(settings["activity_regularizer"], i)
    config.update({"units": int(settings["units"]),
                   "activation": _activation(settings.get("activation"), f"to_keras: layers[{i}]"),
                   "use_bias": settings.get("use_bias", True),
                   "kernel_initializer": _keras_initializer(settings.get("kernel_initializer", "glorot_uniform"),
                                                            f"to_keras: layers[{i}]: kernel_initializer"),
                   "bias_initializer": _keras_initializer(settings.get("bias_initializer", "zeros"),
                                                          f"to_keras: layers[{i}]: bias_initializer"),
                   "kernel_regularizer": _keras_regularizer(settings.get("kernel_regularizer"), i),
                   "bias_regularizer": _keras_regularizer(settings.get("bias_regularizer"), i),
                   "kernel_constraint": None, "bias_constraint": None})
    return _serialized("keras.layers", "Dense", config, build), (config["units"],)


def _serialized(module, class_name, config, build_config=None):
    out = {"module": module, "class_name": class_name, "config": config, "registered_name": None}
    if build_config is not None:
        out["build_config"] = build_config
    return out


def _class_of(table, kind):
    """The Keras class of an identifier or class name in `table` (class name -> identifier)."""
    for class_name, identifier in table.items():
        if kind in (class_name, identifier):
            return class_name, identifier
    return None, None


def _keras_initializer(value, where):
    kind, settings = _object(value)
    class_name, identifier = _class_of(_INITIALIZERS, kind)
    if class_name is None:
        raise ValueError(f"{where}: initializer {kind!r} has no Keras form here; known: "
                         f"{', '.join(_INITIALIZERS.values())}")
    defaults = _INITIALIZER_SETTINGS.get(identifier)
    if defaults is None:  # Zeros and Ones take nothing; the variance-scaling ones a seed
        config = {} if identifier in ("zeros", "ones") else {"seed": None}
    else:
        config = {**({} if identifier == "constant" else {"seed": None}),
                  **{key: settings.get(key, default) for key, default in defaults.items()}}
    return _serialized("keras.initializers", class_name, config)


def _keras_regularizer(value, i):
    if value is None:
        return None
    kind, settings = _object(value)
    class_name, identifier = _class_of(_REGULARIZERS, kind)
    if class_name is None:
        raise ValueError(f"to_keras: layers[{i}]: regularizer {kind!r} has no Keras form here; known: l1, l2, l1_l2")
    config = {key: settings.get(key, 0.01) for key in _REGULARIZER_FACTORS[identifier]}
    return _serialized("keras.regularizers", class_name, config)


def _keras_optimizer(value):
    kind, settings = _object(value)
    class_name, identifier = _class_of(_OPTIMIZERS, kind)
    if class_name is None:
        raise ValueError(f"to_keras: optimizer {kind!r} has no Keras form here; known: {', '.join(_OPTIMIZERS)}")
    rate = settings.get("learning_rate", 0.01 if identifier == "sgd" else 0.001)
    if isinstance(rate, dict):
        schedule, schedule_settings = _object(rate)
        if schedule not in _SCHEDULES:
            raise ValueError(f"to_keras: learning-rate schedule {schedule!r} has no Keras form here; known: "
                             f"{', '.join(_SCHEDULES)}")
        rate = _serialized("keras.optimizers.schedules", schedule, schedule_settings)
    config = {"name": _OPTIMIZER_KERAS_NAMES.get(identifier, identifier), "learning_rate": rate,
              "weight_decay": settings.get("weight_decay", 0.004 if identifier == "adamw" else None)}
    config.update({key: settings.get(key) for key in _OPTIMIZER_COMMON[2:]})
    config.update({key: settings.get(key, default) for key, default in _OPTIMIZER_SETTINGS[identifier].items()})
    return _serialized("keras.optimizers", class_name, config)


def _keras_loss(value):
    """Keras's loss string ("mse"), or its serialized class where the spec gives settings."""
    kind, settings = _object(value)
    class_name, identifier = _loss_class(kind)
    if class_name is None:
        raise ValueError(f"to_keras: loss {kind!r} has no Keras form here; known: {_LOSS_NAMES}")
    keras_name, identifiers, keys = _LOSSES[class_name]
    given = {key: settings[key] for key in keys if key in settings}
    if not given:
        return "log_cosh" if identifier == "logcosh" else identifier  # Keras 3 has no "logcosh"
    return _serialized("keras.losses", class_name, {"name": keras_name, "reduction": "sum_over_batch_size", **given})


def _keras_metrics(value):
    metrics = []
    for item in value or []:
        kind, settings = _object(item)
        if isinstance(item, dict) and "class_name" in item and kind in _METRIC_CLASSES:
            name = settings.get("name") or _METRIC_CLASSES[kind]
            metrics.append(_serialized("keras.metrics", kind, {"name": name, "dtype": "float32"}))
        elif kind in _METRIC_NAMES:
            metrics.append(kind)
        elif kind in _METRIC_CLASSES:
            metrics.append(_METRIC_CLASSES[kind])
        else:
            raise ValueError(f"to_keras: metric {kind!r} has no Keras form here; known: {', '.join(_METRIC_NAMES)}")
    return metrics


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
    """(config, weights) of a Keras 3 `.keras` file: its config.json as a dict, and its layers'
    variables as numpy arrays in model.get_weights() order (per layer, its "vars/0", "vars/1", ...).
    The optimizer's state is not read.

    Raises FileNotFoundError for a missing file; ValueError for a file that is not a .keras zip with
    config.json and model.weights.h5 (a legacy HDF5 .h5 model, weights saved as npz), or whose model
    is not a Sequential; ImportError where h5py is not installed.
    """
    h5py = _import_h5py()
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError(f"read_keras_file: {path}: not a .keras file (a zip archive); legacy HDF5 models are "
                         f"not read") from None
    with archive:
        names = archive.namelist()
        for needed in (_CONFIG, _WEIGHTS):
            if needed not in names:
                raise ValueError(f"read_keras_file: {path}: the archive has no {needed} (it has {', '.join(names)})")
        config = json.loads(archive.read(_CONFIG))
        data = archive.read(_WEIGHTS)
    model_config, _ = _model_parts(config, f"read_keras_file: {path}")
    weights = []
    with h5py.File(io.BytesIO(data), "r") as h5:
        for key, _, _ in _weight_groups(model_config):
            group = h5.get(f"layers/{key}/vars")
            if group is not None:
                weights.extend(np.array(group[name]) for name in sorted(group.keys(), key=int))
    return config, weights


def _variable_shapes(model_config):
    """[(h5 key, layer name, [variable shapes])] of a Sequential of Dense, BatchNormalization and
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
        layers.append((key, settings.get("name", key), shapes))
    return layers


def write_keras_file(path, config, weights):
    """Writes a Keras 3 `.keras` file: metadata.json (keras_version, date_saved), `config`
    (keras_config_from_spec's, or a Sequential's model.get_config(), then wrapped as Keras wraps it)
    as config.json, and `weights` (model.get_weights() order) as float32 in model.weights.h5, laid
    out as Keras lays them out. It holds no optimizer state.

    Raises ValueError where the model is not a Sequential of Dense, Dropout, BatchNormalization,
    Activation and Flatten layers, or the weights are not as many, or not of the shapes, its
    layers have (nothing is written then); ImportError where h5py is not installed.
    """
    h5py = _import_h5py()
    model_config, _ = _model_parts(config, "write_keras_file")
    if "class_name" not in config:  # model.get_config(): wrapped as config.json holds it
        config = _serialized("keras", "Sequential", model_config)
    layers = _variable_shapes(model_config)
    expected = [shape for _, _, shapes in layers for shape in shapes]
    if len(weights) != len(expected):
        raise ValueError(f"write_keras_file: the model has {len(expected)} weights, given {len(weights)}")
    arrays = [np.asarray(w, dtype=np.float32) for w in weights]
    for i, (array, shape) in enumerate(zip(arrays, expected)):
        if array.shape != tuple(shape):
            raise ValueError(f"write_keras_file: weight {i} has shape {array.shape}, the model's is {tuple(shape)}")

    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as h5:
        h5.create_group("layers")
        position = 0
        for key, name, shapes in layers:
            group = h5.create_group(f"layers/{key}/vars")
            group.attrs["name"] = name
            for j in range(len(shapes)):
                group.create_dataset(str(j), data=arrays[position])
                position += 1
        h5.create_group("vars").attrs["name"] = model_config.get("name", "sequential")
    metadata = {"keras_version": KERAS_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    # Keras's order, entries stored uncompressed as Keras stores them.
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_METADATA, json.dumps(metadata))
        archive.writestr(_CONFIG, json.dumps(config))
        archive.writestr(_WEIGHTS, buffer.getvalue())
