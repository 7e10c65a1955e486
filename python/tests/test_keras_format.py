"""keras_format: Keras 3's serialized Sequential <-> multifit's spec, and .keras files read and written
without Keras; where Keras is installed, a trained Keras model's file read, rewritten and loaded back.
Keras -> spec is the spec reader's (the compiled library's): the command line reads the same configs
as a spec's "keras_config", and judges them alike."""
import json
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

import multifit
from multifit import keras_format as kf

# ---- Keras 3.15's serialized forms, as model.get_config() and config.json hold them ---------------

POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}


def serialized(module, class_name, config):
    return {"module": module, "class_name": class_name, "config": config, "registered_name": None}


def initializer(class_name, **config):
    return serialized("keras.initializers", class_name, config)


def glorot():
    return initializer("GlorotUniform", seed=None, input_axes=None, output_axes=None)


def input_layer(*shape, name="input_layer"):
    return serialized("keras.layers", "InputLayer", {"batch_shape": [None, *shape], "dtype": "float32",
                                                     "sparse": False, "ragged": False, "name": name,
                                                     "optional": False})


def layer(class_name, name, **config):
    return serialized("keras.layers", class_name, {"name": name, "trainable": True, "dtype": POLICY, **config})


def dense(name, units, activation="linear", **config):
    settings = {"units": units, "activation": activation, "use_bias": True, "kernel_initializer": glorot(),
                "bias_initializer": initializer("Zeros"), "kernel_regularizer": None, "bias_regularizer": None,
                "kernel_constraint": None, "bias_constraint": None, "quantization_config": None}
    return layer("Dense", name, **{**settings, **config})


def dropout(name, rate):
    return layer("Dropout", name, rate=rate, seed=None, noise_shape=None)


def batch_normalization(name, **config):
    settings = {"axis": -1, "momentum": 0.99, "epsilon": 0.001, "center": True, "scale": True,
                "beta_initializer": initializer("Zeros"), "gamma_initializer": initializer("Ones"),
                "moving_mean_initializer": initializer("Zeros"), "moving_variance_initializer": initializer("Ones"),
                "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None,
                "synchronized": False, "renorm": False, "renorm_clipping": None, "renorm_momentum": 0.99}
    return layer("BatchNormalization", name, **{**settings, **config})


def optimizer(class_name, name, **config):
    base = {"name": name, "learning_rate": 0.0010000000474974513, "weight_decay": None, "clipnorm": None,
            "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
            "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None}
    return serialized("keras.optimizers", class_name, {**base, **config})


ADAM = optimizer("Adam", "adam", beta_1=0.9, beta_2=0.999, epsilon=1e-07, amsgrad=False)


def compiled(optimizer=ADAM, loss="binary_crossentropy", metrics=("accuracy",), **config):
    return {"optimizer": optimizer, "loss": loss, "loss_weights": None,
            "metrics": None if metrics is None else list(metrics),
            "weighted_metrics": None, "run_eagerly": False, "steps_per_execution": 1, "jit_compile": False, **config}


def model_config(*layers, name="classifier"):
    """model.get_config() of a keras.Sequential."""
    shape = layers[0]["config"].get("batch_shape") if layers[0]["class_name"] == "InputLayer" else None
    return {"name": name, "trainable": True, "dtype": POLICY, "layers": list(layers), "build_input_shape": shape}


def keras_file_config(*layers, compile_config=None, name="classifier"):
    """A .keras file's config.json: the model's config wrapped, with its compile_config."""
    config = serialized("keras", "Sequential", model_config(*layers, name=name))
    config["build_config"] = {"input_shape": config["config"]["build_input_shape"]}
    if compile_config is not None:
        config["compile_config"] = compile_config
    return config


def classifier_layers():
    """Input(20), Dense(16, relu), Dropout(0.1), BatchNormalization, Dense(1, sigmoid)."""
    return [input_layer(20), dense("dense", 16, "relu"), dropout("dropout", 0.1),
            batch_normalization("batch_normalization"), dense("dense_1", 1, "sigmoid")]


def f32(x):
    """A float32 setting as the spec reader writes it: the double of the float32 (JSON numbers are doubles)."""
    return float(np.float32(x))


# The classifier's spec as the spec reader writes it: a Dense without its type, float32 settings as
# their doubles, each metric by its class and name.
CLASSIFIER_SPEC = {
    "name": "classifier", "input": 20,
    "layers": [{"units": 16, "activation": "relu"}, {"type": "Dropout", "rate": 0.1},
               {"type": "BatchNormalization", "momentum": 0.99, "epsilon": 0.001, "center": True, "scale": True},
               {"units": 1, "activation": "sigmoid"}],
    "optimizer": {"name": "adam", "learning_rate": f32(0.001), "beta_1": 0.9, "beta_2": 0.999, "epsilon": f32(1e-07),
                  "amsgrad": False},
    "loss": "binary_crossentropy", "metrics": [{"class_name": "BinaryAccuracy", "config": {"name": "accuracy"}}]}


def spec_of_layers(*layers):
    return kf.spec_from_keras_config(model_config(input_layer(8), *layers))


# ---- Keras -> spec --------------------------------------------------------------------------------

def test_a_keras_file_config_becomes_the_spec_with_its_compile_settings():
    config = keras_file_config(*classifier_layers(), compile_config=compiled())
    assert kf.spec_from_keras_config(config) == CLASSIFIER_SPEC


def test_get_config_and_to_json_give_the_layers_without_compile_settings():
    expected = {k: v for k, v in CLASSIFIER_SPEC.items() if k not in ("optimizer", "loss", "metrics")}
    assert kf.spec_from_keras_config(model_config(*classifier_layers())) == expected
    to_json = json.loads(json.dumps(keras_file_config(*classifier_layers())))
    assert kf.spec_from_keras_config(to_json) == expected


def test_an_image_input_flattened_gives_its_width_and_input_shape():
    spec = kf.spec_from_keras_config(model_config(input_layer(28, 28, 1), layer("Flatten", "flatten",
                                                                                 data_format="channels_last"),
                                                  dense("dense", 10, "softmax")))
    assert spec["input"] == 784 and spec["input_shape"] == [28, 28, 1]
    assert spec["layers"] == [{"type": "Flatten"}, {"units": 10, "activation": "softmax"}]


def test_the_input_width_comes_from_keras_2s_batch_input_shape_or_the_build_shape():
    keras_2 = {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 6], "dtype": "float32",
                                                      "sparse": False, "ragged": False, "name": "input_1"}}
    assert kf.spec_from_keras_config(model_config(keras_2, dense("dense", 1)))["input"] == 6
    built = model_config(dense("dense", 1))
    built["build_input_shape"] = [None, 7]
    assert kf.spec_from_keras_config(built)["input"] == 7
    with pytest.raises(ValueError, match="a model without an input shape; start it with keras.Input"):
        kf.spec_from_keras_config(model_config(dense("dense", 1)))


@pytest.mark.parametrize("class_name,name", [("Conv2D", "conv2d"), ("LSTM", "lstm"), ("Embedding", "embedding")])
def test_a_layer_multifit_does_not_build_is_refused_by_name_and_class(class_name, name):
    with pytest.raises(ValueError) as error:
        spec_of_layers(layer(class_name, name, filters=8), dense("dense", 1))
    assert str(error.value).startswith(f"from_keras: layers[1].class_name: {class_name} is not a layer multifit "
                                       "trains: ")
    assert str(error.value).endswith("multifit trains Sequential dense networks of Dense, Dropout, "
                                     "BatchNormalization, Activation and Flatten layers")


@pytest.mark.parametrize("entry,words", [
    (dense("dense", 4, kernel_constraint=serialized("keras.constraints", "MaxNorm", {"max_value": 2})),
     ["layers[1].config.kernel_constraint: got", "expected null: multifit applies no weight constraints"]),
    (batch_normalization("batch_normalization", axis=1), ["layers[1].config.axis: got 1; expected -1"]),
    (dense("dense", 4, trainable=False), ["layers[1].config.trainable: got false", "multifit trains every layer"]),
    (layer("Dropout", "dropout", rate=0.5, noise_shape=[None, 1]), ["layers[1].config.noise_shape: got [null,1]"]),
    (layer("Flatten", "flatten", data_format="channels_first"),
     ["layers[1].config.data_format: got \"channels_first\"", "channels last"]),
    (dense("dense", 4, activation="hard_sigmoid"), ["layers[1].config.activation: got \"hard_sigmoid\""]),
    (dense("dense", 4, kernel_initializer=initializer("Orthogonal", gain=1.0, seed=None)),
     ["layers[1].config.kernel_initializer.class_name", "Orthogonal"]),
    (dense("dense", 4, future_setting=3), ["layers[1].config.future_setting: unknown key"]),
    (dense("dense", 4, dtype="mixed_float16"), ["layers[1].config.dtype: got \"mixed_float16\"", "float32"]),
])
def test_a_setting_multifit_does_not_have_is_refused_in_one_line_naming_it(entry, words):
    with pytest.raises(ValueError) as error:
        spec_of_layers(entry, dense("dense_9", 1))
    message = str(error.value)
    assert message.startswith("from_keras: layers[1]") and "\n" not in message
    for word in words:
        assert word in message


def test_settings_keras_leaves_unset_or_multifit_ignores_are_taken():
    # A newer Keras's setting left None, float32 written as a string, and Keras's seeds: nothing
    # multifit computes.
    entry = dense("dense", 4, future_setting=None, dtype="float32", kernel_initializer=initializer("HeNormal", seed=7))
    assert spec_of_layers(entry)["layers"] == [{"units": 4, "activation": "linear", "kernel_initializer": "he_normal"}]


def test_a_dense_layer_on_an_unflattened_image_is_refused():
    with pytest.raises(ValueError, match=r"layers\[0\]: an input of shape \[28,28\] read by a Dense layer; "
                                         r"multifit's rows are flat: put a Flatten first"):
        kf.spec_from_keras_config(model_config(input_layer(28, 28), dense("dense", 4)))


def test_initializers_regularizers_and_activation_layers_take_multifits_forms():
    spec = spec_of_layers(
        dense("dense", 4, use_bias=False, kernel_initializer=initializer("RandomNormal", seed=None, mean=0.0, stddev=0.1),
              kernel_regularizer=serialized("keras.regularizers", "L2", {"l2": 1e-4}),
              activity_regularizer=serialized("keras.regularizers", "L1L2", {"l1": 1e-3, "l2": 1e-5})),
        layer("ReLU", "re_lu", max_value=None, negative_slope=0.0, threshold=0.0),
        batch_normalization("batch_normalization", center=False, gamma_initializer=initializer("Constant", value=0.5)),
        layer("Activation", "activation", activation="silu"), dense("dense_1", 1))
    assert spec["layers"][:4] == [
        {"units": 4, "activation": "linear", "use_bias": False,
         "kernel_initializer": {"name": "random_normal", "mean": 0.0, "stddev": 0.1},
         "kernel_regularizer": {"name": "l1_l2", "l1": 0.0, "l2": f32(1e-4)},
         "activity_regularizer": {"name": "l1_l2", "l1": f32(1e-3), "l2": f32(1e-5)}},
        {"type": "Activation", "activation": "relu"},
        {"type": "BatchNormalization", "momentum": 0.99, "epsilon": 0.001, "center": False, "scale": True,
         "gamma_initializer": {"name": "constant", "value": 0.5}},
        {"type": "Activation", "activation": "swish"}]


def spec_compiled(**compile_settings):
    return kf.spec_from_keras_config(keras_file_config(*classifier_layers(), compile_config=compiled(**compile_settings)))


@pytest.mark.parametrize("class_name,name,own,expected", [
    ("SGD", "sgd", {"learning_rate": 0.10000000149011612, "momentum": 0.9, "nesterov": False},
     {"name": "sgd", "learning_rate": f32(0.1), "momentum": f32(0.9), "nesterov": False}),
    ("RMSprop", "rm_sprop", {"rho": 0.9, "momentum": 0.0, "epsilon": 1e-07, "centered": False},
     {"name": "rmsprop", "learning_rate": f32(0.001), "rho": 0.9, "momentum": 0.0, "epsilon": f32(1e-07),
      "centered": False}),
    ("AdamW", "adam_w", {"weight_decay": 0.004, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": False},
     {"name": "adamw", "learning_rate": f32(0.001), "beta_1": 0.9, "beta_2": 0.999, "epsilon": f32(1e-07),
      "amsgrad": False, "weight_decay": f32(0.004)}),
    ("Adagrad", "adagrad", {"initial_accumulator_value": 0.1, "epsilon": 1e-07, "clipnorm": 1.0},
     {"name": "adagrad", "learning_rate": f32(0.001), "initial_accumulator_value": f32(0.1), "epsilon": f32(1e-07),
      "clipnorm": 1.0}),
    ("Nadam", "nadam", {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07},
     {"name": "nadam", "learning_rate": f32(0.001), "beta_1": 0.9, "beta_2": 0.999, "epsilon": f32(1e-07)}),
    ("Lion", "lion", {"beta_1": 0.9, "beta_2": 0.99},
     {"name": "lion", "learning_rate": f32(0.001), "beta_1": 0.9, "beta_2": 0.99}),
])
def test_an_optimizer_keeps_what_multifit_reads_and_drops_keras_defaults(class_name, name, own, expected):
    assert spec_compiled(optimizer=optimizer(class_name, name, **own))["optimizer"] == expected


def test_a_learning_rate_schedule_is_kept_as_its_class_and_config():
    schedule = serialized("keras.optimizers.schedules", "ExponentialDecay",
                          {"initial_learning_rate": 0.01, "decay_steps": 100, "decay_rate": 0.9, "staircase": False,
                           "name": "ExponentialDecay"})
    spec = spec_compiled(optimizer=optimizer("Adam", "adam", learning_rate=schedule))
    assert spec["optimizer"]["learning_rate"] == {
        "class_name": "ExponentialDecay",
        "config": {"initial_learning_rate": 0.01, "decay_steps": 100, "decay_rate": 0.9, "staircase": False}}


@pytest.mark.parametrize("settings,words", [
    ({"optimizer": optimizer("Adafactor", "adafactor", beta_2_decay=-0.8)},
     ["compile_config.optimizer.class_name: unknown optimizer \"Adafactor\"", "adam, sgd"]),
    ({"optimizer": optimizer("Adam", "adam", use_ema=True)},
     ["compile_config.optimizer.config.use_ema: got true; expected false"]),
    ({"optimizer": optimizer("Adam", "adam", gradient_accumulation_steps=4)},
     ["compile_config.optimizer.config.gradient_accumulation_steps: got 4; expected null"]),
    ({"loss": "binary_focal_crossentropy"}, ["compile_config.loss: unknown loss \"binary_focal_crossentropy\""]),
    ({"loss": serialized("keras.losses", "BinaryCrossentropy",
                         {"name": "binary_crossentropy", "reduction": "sum", "from_logits": False})},
     ["compile_config.loss.config.reduction: got \"sum\"; expected \"sum_over_batch_size\""]),
    ({"metrics": ["top_k_categorical_accuracy"]}, ["compile_config.metrics[0]: unknown metric \"top_k_categorical_accuracy\""]),
    ({"loss_weights": [0.5]}, ["compile_config.loss_weights: got [0.5]; expected null"]),
    # Keras takes from_logits beside a sigmoid output and applies the sigmoid twice; multifit refuses
    ({"loss": serialized("keras.losses", "BinaryCrossentropy",
                         {"name": "binary_crossentropy", "reduction": "sum_over_batch_size", "from_logits": True})},
     ["compile_config.loss: binary_crossentropy from logits needs a linear output"]),
])
def test_compile_settings_multifit_does_not_have_are_refused(settings, words):
    with pytest.raises(ValueError) as error:
        spec_compiled(**settings)
    assert str(error.value).startswith("from_keras: ")
    for word in words:
        assert word in str(error.value)


def test_losses_and_metrics_in_keras_serialized_forms():
    loss = serialized("keras.losses", "BinaryCrossentropy", {"name": "binary_crossentropy",
                                                             "reduction": "sum_over_batch_size", "from_logits": True,
                                                             "label_smoothing": 0.0, "axis": -1})
    metrics = [serialized("keras.metrics", "BinaryAccuracy", {"name": "binary_accuracy", "dtype": "float32",
                                                              "threshold": 0.5}),
               serialized("keras.metrics", "MeanAbsoluteError", {"name": "error", "dtype": "float32"}),
               {"module": "builtins", "class_name": "function", "config": "mse", "registered_name": "function"}]
    logits = [*classifier_layers()[:-1], dense("dense_1", 1, "linear")]
    spec = kf.spec_from_keras_config(keras_file_config(*logits, compile_config=compiled(
        loss=loss, metrics=metrics, jit_compile=True)))  # jit_compile: how, not what
    assert spec["loss"] == {"name": "binary_crossentropy", "from_logits": True}
    assert spec["metrics"] == [{"class_name": "BinaryAccuracy", "config": {"name": "binary_accuracy"}},
                               {"class_name": "MeanAbsoluteError", "config": {"name": "error"}},
                               {"class_name": "MeanSquaredError", "config": {"name": "mse"}}]
    function = {"module": "builtins", "class_name": "function", "config": "huber", "registered_name": "function"}
    assert spec_compiled(loss=function, metrics=[])["loss"] == "huber"
    assert spec_compiled(metrics=None)["metrics"] == []  # compiled without metrics: it reports none
    msle = serialized("keras.losses", "MeanSquaredLogarithmicError",
                      {"name": "mean_squared_logarithmic_error", "reduction": "sum_over_batch_size"})
    assert spec_compiled(loss=msle, metrics=[])["loss"] == "msle"
    assert spec_compiled(loss="mean_squared_logarithmic_error", metrics=[])["loss"] == "msle"


def test_a_functional_model_is_refused():
    with pytest.raises(ValueError, match="class_name: a \"Functional\" model; multifit converts a keras.Sequential"):
        kf.spec_from_keras_config({"class_name": "Functional", "config": {"layers": []}})


# ---- One judge: the command line's keras_config ----------------------------------------------------

# Configs accepted and refused, given both to from_keras and to `multifit train` as a spec's
# "keras_config": a refusal's place in the config and its words are the same, and an accepted
# config is the same model (name, parameters, metrics).
JUDGED = {
    "a compiled classifier": lambda: keras_file_config(*classifier_layers(), compile_config=compiled()),
    "an image flattened": lambda: keras_file_config(
        input_layer(4, 5, 1), layer("Flatten", "flatten", data_format="channels_last"), dense("dense", 1, "sigmoid"),
        compile_config=compiled()),
    "a newer Keras's unset setting": lambda: keras_file_config(
        input_layer(20), dense("dense", 1, "sigmoid", a_newer_setting=None), compile_config=compiled()),
    "a Conv2D layer": lambda: keras_file_config(
        input_layer(20), layer("Conv2D", "conv2d", filters=8), dense("dense", 1, "sigmoid"), compile_config=compiled()),
    "a kernel constraint": lambda: keras_file_config(
        input_layer(20), dense("dense", 1, "sigmoid", kernel_constraint=serialized("keras.constraints", "MaxNorm",
                                                                                   {"max_value": 2})),
        compile_config=compiled()),
    "a Flatten channels first": lambda: keras_file_config(
        input_layer(4, 5, 1), layer("Flatten", "flatten", data_format="channels_first"), dense("dense", 1, "sigmoid"),
        compile_config=compiled()),
    "mixed precision": lambda: keras_file_config(
        input_layer(20), dense("dense", 1, "sigmoid", dtype="mixed_float16"), compile_config=compiled()),
    "an image not flattened": lambda: keras_file_config(
        input_layer(4, 5), dense("dense", 1, "sigmoid"), compile_config=compiled()),
    "weighted losses": lambda: keras_file_config(*classifier_layers(), compile_config=compiled(loss_weights=[0.5])),
    "Adafactor": lambda: keras_file_config(
        *classifier_layers(), compile_config=compiled(optimizer=optimizer("Adafactor", "adafactor"))),
    "a focal loss": lambda: keras_file_config(
        *classifier_layers(), compile_config=compiled(loss="binary_focal_crossentropy")),
    "a Functional model": lambda: {"class_name": "Functional", "config": {"layers": []}},
}


@pytest.mark.parametrize("case", list(JUDGED))
def test_from_keras_and_the_command_line_judge_a_config_alike(case, program, tmp_path):
    config = JUDGED[case]()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"data": "synthetic:teacher:rows=64", "keras_config": config, "fit": {"epochs": 0}}))
    document = tmp_path / "run.json"
    done = subprocess.run([program, "train", str(spec), "--backend", "cpu", "--quiet", "--json", str(document)],
                          capture_output=True, text=True, timeout=120)
    try:
        model = kf.spec_from_keras_config(config)
    except ValueError as error:
        # "from_keras: PLACE: WORDS" from Python, "SPEC: keras_config.PLACE: WORDS" from the command line
        place, words = str(error).removeprefix("from_keras: ").split(": ", 1)
        where = "keras_config" if place == "top level" else f"keras_config.{place}"
        assert done.returncode == 2
        assert f"{spec}: {where}: {words}" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    [report] = json.loads(document.read_text())["models"]
    python = multifit.Sequential.from_spec(model, backend="cpu")
    assert report["name"] == model["name"] == config["config"]["name"]
    assert report["params"] == python._ensure_session().param_count  # the trainable ones, in both
    assert [m["name"] for m in report["metrics"]["list"]] == [
        m if isinstance(m, str) else m["config"]["name"] for m in model["metrics"]]


# ---- Spec -> Keras --------------------------------------------------------------------------------

def test_the_keras_config_of_a_spec_is_what_keras_writes():
    config = kf.keras_config_from_spec(CLASSIFIER_SPEC)
    assert config["class_name"] == "Sequential" and config["build_config"] == {"input_shape": [None, 20]}
    model = config["config"]
    assert model["name"] == "classifier" and model["build_input_shape"] == [None, 20]
    assert [(entry["class_name"], entry["config"]["name"]) for entry in model["layers"]] == [
        ("InputLayer", "input_layer"), ("Dense", "dense"), ("Dropout", "dropout"),
        ("BatchNormalization", "batch_normalization"), ("Dense", "dense_1")]
    assert model["layers"][0]["config"]["batch_shape"] == [None, 20]
    # Keras 3.15's Dense, less the settings newer Keras versions added (their defaults apply).
    expected_dense = dense("dense", 16, "relu", kernel_initializer=initializer("GlorotUniform", seed=None))
    del expected_dense["config"]["quantization_config"]
    assert model["layers"][1] == {**expected_dense, "build_config": {"input_shape": [None, 20]}}
    assert "build_config" not in model["layers"][2]  # Keras writes none for a Dropout
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"
    assert config["compile_config"]["loss"] == "binary_crossentropy"
    assert config["compile_config"]["metrics"] == [serialized("keras.metrics", "BinaryAccuracy",
                                                              {"name": "accuracy", "dtype": "float32"})]
    assert kf.spec_from_keras_config(config) == CLASSIFIER_SPEC


def test_a_spec_goes_to_keras_and_back_unchanged():
    # written as the spec reader writes it, so that the way back gives it again key for key
    spec = {"name": "wide", "input": 784, "input_shape": [28, 28, 1],
            "layers": [{"type": "Flatten"},
                       {"units": 32, "activation": "gelu", "use_bias": False,
                        "kernel_initializer": {"name": "truncated_normal", "mean": 0.0, "stddev": 0.02},
                        "kernel_regularizer": {"name": "l1_l2", "l1": 0.0, "l2": f32(1e-4)}},
                       {"type": "BatchNormalization", "momentum": 0.9, "epsilon": 1e-5, "center": True, "scale": False},
                       {"type": "Activation", "activation": "leaky_relu"},
                       {"units": 10, "activation": "linear"}],
            "optimizer": {"name": "sgd", "learning_rate": f32(0.05), "momentum": f32(0.9), "nesterov": True},
            "loss": {"name": "sparse_categorical_crossentropy", "from_logits": True},
            "metrics": [{"class_name": "SparseCategoricalAccuracy", "config": {"name": "accuracy"}},
                        {"class_name": "SparseCategoricalAccuracy", "config": {"name": "acc"}}]}
    config = kf.keras_config_from_spec(spec)
    assert config["config"]["layers"][0]["config"]["batch_shape"] == [None, 28, 28, 1]
    assert kf.spec_from_keras_config(json.loads(json.dumps(config))) == spec


def test_multifits_other_spec_forms_go_to_keras():
    # As multifit's to_json writes a spec: Dense without its type, an optimizer object, metrics by class.
    spec = {"name": "m", "input": 4, "layers": [{"units": 2, "activation": "relu"},
                                                {"type": "dropout", "rate": 0.5},
                                                {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}],
            "loss": "binary_crossentropy", "optimizer": "rmsprop",
            "metrics": [{"class_name": "BinaryAccuracy", "config": {"name": "accuracy"}}], "fit": {"epochs": 3},
            "seed": 1}
    config = kf.keras_config_from_spec(spec)
    assert [entry["config"]["name"] for entry in config["config"]["layers"]] == ["input_layer", "dense", "dropout",
                                                                                  "dense_1"]
    assert config["compile_config"]["optimizer"]["config"]["name"] == "rm_sprop"
    assert config["compile_config"]["metrics"] == [
        {"module": "keras.metrics", "class_name": "BinaryAccuracy", "config": {"name": "accuracy", "dtype": "float32"},
         "registered_name": None}]
    assert "compile_config" not in kf.keras_config_from_spec({"input": 4, "layers": [{"units": 1}]})
    relu = kf.keras_config_from_spec({"input": 4, "layers": [{"units": 2}, {"type": "ReLU"}, {"units": 1}]})
    assert [(entry["class_name"], entry["config"]["name"]) for entry in relu["config"]["layers"][1:]] == [
        ("Dense", "dense"), ("Activation", "activation"), ("Dense", "dense_1")]


@pytest.mark.parametrize("spec,words", [
    ({"layers": [{"type": "Dense", "units": 1}]}, "input: missing; expected the number of features per row"),
    ({"input": 4, "layers": [{"type": "Conv2D", "filters": 3}]}, "layers[0].type: Conv2D is not a layer multifit trains"),
    ({"input": 4, "layers": []}, "layers: got []; expected a non-empty array of layers"),
    ({"input": 4, "layers": [{"units": 1}], "loss": "hinge"}, "loss: unknown loss \"hinge\""),
])
def test_a_spec_without_a_keras_form_is_refused(spec, words):
    with pytest.raises(ValueError) as error:
        kf.keras_config_from_spec(spec)
    assert words in str(error.value) and str(error.value).startswith("to_keras: ")


# ---- .keras files ---------------------------------------------------------------------------------

def classifier_weights(center=True, scale=True):
    """Weights in model.get_weights() order for the classifier: kernel, bias; gamma, beta, mean, var; kernel, bias."""
    rng = np.random.default_rng(3)
    batch_norm = [rng.normal(size=16) for flag in (scale, center, True, True) if flag]
    return [rng.normal(size=(20, 16)), rng.normal(size=16), *batch_norm, rng.normal(size=(16, 1)), rng.normal(size=1)]


def test_a_written_file_reads_back_with_keras_layout(tmp_path):
    h5py = pytest.importorskip("h5py", reason="reading and writing .keras files needs h5py")
    path = tmp_path / "classifier.keras"
    config = kf.keras_config_from_spec(CLASSIFIER_SPEC)
    weights = classifier_weights()
    kf.write_keras_file(path, config, weights)
    read_config, read_weights, optimizer = kf.read_keras_file(path)
    assert read_config == json.loads(json.dumps(config))
    assert len(read_weights) == len(weights) and optimizer is None  # written without an optimizer
    for read, written in zip(read_weights, weights):
        assert read.dtype == np.float32 and np.array_equal(read, written.astype(np.float32))
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        metadata = json.loads(archive.read("metadata.json"))
        assert metadata["keras_version"] == kf.KERAS_VERSION and "@" in metadata["date_saved"]
        (tmp_path / "w.h5").write_bytes(archive.read("model.weights.h5"))
    with h5py.File(tmp_path / "w.h5", "r") as h5:
        assert h5["layers/dense/vars/0"].shape == (20, 16) and h5["layers/dense_1/vars/1"].shape == (1,)
        assert len(h5["layers/batch_normalization/vars"]) == 4 and len(h5["layers/dropout/vars"]) == 0
        assert h5["layers/dense_1/vars"].attrs["name"] == "dense_1" and h5["vars"].attrs["name"] == "classifier"


def test_batch_normalization_without_center_has_three_weights(tmp_path):
    pytest.importorskip("h5py", reason="reading and writing .keras files needs h5py")
    spec = json.loads(json.dumps(CLASSIFIER_SPEC))
    spec["layers"][2]["center"] = False
    weights = classifier_weights(center=False)
    kf.write_keras_file(tmp_path / "m.keras", kf.keras_config_from_spec(spec), weights)
    assert len(kf.read_keras_file(tmp_path / "m.keras")[1]) == len(weights) == 7


def test_a_models_get_config_is_written_wrapped_as_keras_wraps_it(tmp_path):
    pytest.importorskip("h5py", reason="reading and writing .keras files needs h5py")
    kf.write_keras_file(tmp_path / "m.keras", model_config(*classifier_layers()), classifier_weights())
    config, weights, _ = kf.read_keras_file(tmp_path / "m.keras")
    assert config["class_name"] == "Sequential" and config["config"]["name"] == "classifier"
    assert len(weights) == 8


def test_weights_of_the_wrong_count_or_shape_are_refused_before_writing(tmp_path):
    pytest.importorskip("h5py", reason="reading and writing .keras files needs h5py")
    config = kf.keras_config_from_spec(CLASSIFIER_SPEC)
    with pytest.raises(ValueError, match="the model has 8 weights, given 7"):
        kf.write_keras_file(tmp_path / "m.keras", config, classifier_weights()[:7])
    wrong = classifier_weights()
    wrong[0] = wrong[0].T
    with pytest.raises(ValueError, match=r"weight 0 has shape \(16, 20\), the model's is \(20, 16\)"):
        kf.write_keras_file(tmp_path / "m.keras", config, wrong)
    assert not (tmp_path / "m.keras").exists()


def test_a_file_that_is_not_a_keras_zip_is_refused(tmp_path):
    pytest.importorskip("h5py", reason="reading and writing .keras files needs h5py")
    (tmp_path / "legacy.h5").write_bytes(b"\x89HDF\r\n\x1a\n")
    with pytest.raises(ValueError, match="not a .keras file"):
        kf.read_keras_file(tmp_path / "legacy.h5")
    with zipfile.ZipFile(tmp_path / "empty.keras", "w") as archive:
        archive.writestr("config.json", "{}")
    with pytest.raises(ValueError, match="the archive has no model.weights.h5"):
        kf.read_keras_file(tmp_path / "empty.keras")
    with pytest.raises(FileNotFoundError):
        kf.read_keras_file(tmp_path / "missing.keras")


def test_without_h5py_the_file_functions_say_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)  # `import h5py` now raises ImportError
    with pytest.raises(ImportError, match="pip install h5py"):
        kf.read_keras_file(tmp_path / "m.keras")
    with pytest.raises(ImportError, match="pip install h5py"):
        kf.write_keras_file(tmp_path / "m.keras", kf.keras_config_from_spec(CLASSIFIER_SPEC), classifier_weights())


# ---- Against Keras itself -------------------------------------------------------------------------

def test_a_trained_keras_model_goes_through_multifits_spec_and_back(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    keras = pytest.importorskip("keras", reason="the round trip through Keras needs Keras 3")
    if not keras.__version__.startswith("3."):
        pytest.skip(f"the round trip needs Keras 3, not {keras.__version__}")
    keras.backend.clear_session()  # the layers' names from dense, as in a fresh session
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dropout(0.1), keras.layers.BatchNormalization(),
                              keras.layers.Dense(1, activation="sigmoid")], name="classifier")
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 20)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    model.fit(x, y, epochs=1, batch_size=32, verbose=0)
    original = tmp_path / "original.keras"
    model.save(original)

    config, weights, optimizer = kf.read_keras_file(original)
    assert [v.shape for v in optimizer][:2] == [(), ()] and int(optimizer[0]) == 8  # iteration: 256 rows / 32
    spec = kf.spec_from_keras_config(config)
    assert spec == CLASSIFIER_SPEC
    assert len(weights) == len(model.get_weights())
    assert all(np.array_equal(read, kept) for read, kept in zip(weights, model.get_weights()))

    rewritten = tmp_path / "rewritten.keras"
    kf.write_keras_file(rewritten, kf.keras_config_from_spec(spec), weights)
    with warnings.catch_warnings():  # the file holds no optimizer state: Keras says it starts a fresh one
        warnings.filterwarnings("ignore", message="Skipping variable loading for optimizer")
        loaded = keras.saving.load_model(rewritten)
    assert json.loads(json.dumps(loaded.get_config())) == json.loads(json.dumps(model.get_config()))
    expected = model.evaluate(x, y, verbose=0, return_dict=True)
    got = loaded.evaluate(x, y, verbose=0, return_dict=True)
    assert set(got) == set(expected) == {"loss", "accuracy"}
    for key in expected:
        assert np.isclose(got[key], expected[key], rtol=1e-6, atol=0), key
    assert np.array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_from_keras_reads_a_to_json_file_as_a_spec_names_one(tmp_path):
    config = keras_file_config(*classifier_layers(), compile_config=compiled())
    path = tmp_path / "model.json"
    path.write_text(json.dumps(config))
    for source in (path, str(path), json.dumps(config), config):
        assert multifit.from_keras(source, backend="cpu").spec() == multifit.from_keras(config, backend="cpu").spec()
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="broken.json: not a .keras file nor a model's to_json()"):
        multifit.from_keras(tmp_path / "broken.json")
    with pytest.raises(FileNotFoundError, match="missing.json: no such file"):
        multifit.from_keras(str(tmp_path / "missing.json"))
