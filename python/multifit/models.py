"""keras.Sequential, trained by multifit's kernels: compile, fit, evaluate, predict, weights.

A Sequential is a multifit spec (the JSON a spec file holds, `spec()`), built from its layers and
what compile() and fit() are given, and a C++ session that holds the model on its backend between
calls. Every argument a spec can take is a keyword, validated by the same C++ reader as a spec
file: a bad one is a ValueError with the command line's text.
"""
import json
import math
import os
import time
import warnings

import numpy as np

from . import _multifit, _summary
from ._arrays import as_rows, features_and_targets
from ._keras_objects import serialized
from .callbacks import BATCH_HOOKS, Callback, EarlyStopping, ProgbarLogger, SpecCallback, keras_order, progbar_line
from .layers import Flatten, InputLayer, Layer


class History:
    """keras.callbacks.History: `history` maps "loss", each metric, "val_" ones and, with
    ReduceLROnPlateau, "learning_rate" to one value per epoch; `epoch` lists the epochs (from 0).
    Also what multifit measured: `seconds` per epoch, `status` ("ok", "diverged", "stopped"),
    `stopped_epoch` and `restored_epoch` (EarlyStopping, from 1), `train_s`, `samples`."""

    def __init__(self, fit, params, logs=None):
        self.params = params
        first = params.get("initial_epoch", 0)  # fit's initial_epoch: the epochs count from it
        self.epoch = list(range(first, first + len(fit["epochs"])))
        self.history = {}
        # each epoch's logs as the callbacks left them (what one added, History keeps), or the fit's
        for epoch in logs if logs is not None else fit["epochs"]:
            for key, value in epoch.items():
                if key != "seconds":
                    self.history.setdefault(key, []).append(value)
        self.history = {key: self.history[key] for key in keras_order(self.history)}
        self.seconds = [e["seconds"] for e in fit["epochs"]]
        self.status, self.why = fit["status"], fit["why"]
        self.stopped_epoch, self.restored_epoch = (None if e is None else e + first
                                                   for e in (fit["stopped_epoch"], fit["restored_epoch"]))
        self.train_s = fit["train_s"]
        self.samples = fit["samples"]  # rows trained on, over every step

    def __repr__(self):
        return f"History(epochs={len(self.epoch)}, status={self.status!r}, keys={list(self.history)})"


def _checked_layer(layer, i):
    """`layer`, or a TypeError naming entry `i` where it is not a multifit.layers layer."""
    if not isinstance(layer, Layer):
        raise TypeError(f"Sequential: entry {i} is {type(layer).__name__} {layer!r:.40}, not a multifit.layers "
                        f"layer (multifit.from_keras converts a Keras model)")
    return layer


def _shape_config(layers):
    """(input features or None, image shape or None, the layers' spec entries, preprocessing entries)."""
    features, image, entries, preprocessing = None, None, [], []
    for i, layer in enumerate(layers):
        config = _checked_layer(layer, i).get_config()
        if isinstance(layer, InputLayer) or (i == 0 and "input_shape" in config):  # Keras's two ways
            if i != 0:
                raise ValueError(f"Sequential: an Input (InputLayer) must come first, not at entry {i}")
            shape = list(config.pop("input_shape", None) or config["shape"])
            features = math.prod(shape)
            # An image: (height, width, channels), or (height, width) of one channel, as Keras's
            # Fashion-MNIST examples write it.
            image = shape + [1] if len(shape) == 2 else shape if len(shape) > 1 else None
            if isinstance(layer, InputLayer):
                continue
        if layer.preprocessing:
            preprocessing.append(config)
        else:
            entries.append(config)
    return features, image, entries, preprocessing


def _with_validation_rows(x, y, sample_weight, validation_data):
    """(x, y and sample_weight with validation_data's rows after theirs, the validation split that
    takes exactly those): fit validates on the last rows of what it is given, before shuffling, as
    Keras's validation_split does, so that validation_data is that split of the rows put together
    (one copy of them). Where only one side has sample weights, the other's rows weigh 1, as Keras
    weighs rows without them. Raises ValueError for what is not (x_val, y_val) or (x_val, y_val,
    val_sample_weight)."""
    if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
        raise ValueError("fit: validation_data must be (x_val, y_val) or (x_val, y_val, val_sample_weight)")
    xv, yv = features_and_targets(*validation_data[:2])
    wv = validation_data[2] if len(validation_data) == 3 else None
    if sample_weight is not None or wv is not None:
        weights = []
        for w, rows, name in ((sample_weight, x, "sample_weight"), (wv, xv, "validation_data's sample weight")):
            w = np.ones(len(rows), np.float32) if w is None else as_rows(w, name, ndims=(1, 2))
            if w.shape not in ((len(rows),), (len(rows), 1)):
                raise ValueError(f"fit: {name} has shape {w.shape}; expected ({len(rows)},): one weight per row")
            weights.append(w.reshape(-1))
        sample_weight = np.concatenate(weights)
    _multifit.check_finite(xv, "validation_data's x")  # named by its own rows, not the joined ones
    _multifit.check_finite(yv, "validation_data's y")
    if xv.shape[1:] != x.shape[1:] or yv.shape[1:] != y.shape[1:]:
        raise ValueError(f"fit: validation_data has rows of shape {xv.shape[1:]} and {yv.shape[1:]}, x and y "
                         f"{x.shape[1:]} and {y.shape[1:]}")
    rows, train = len(x) + len(xv), len(x)
    split = len(xv) / rows
    while math.floor(rows * (1.0 - split)) > train:  # nn/fit.cpp training_rows' rounding, in doubles
        split = float(np.nextafter(split, 1.0))
    while math.floor(rows * (1.0 - split)) < train:
        split = float(np.nextafter(split, 0.0))
    return np.concatenate([x, xv]), np.concatenate([y, yv]), sample_weight, split


def _class_weight_entries(class_weight):
    """Keras's class_weight {class index: weight} as the spec's fit.class_weight (JSON keys are
    strings); a ValueError for what is not such a dict (the spec's reader judges the weights)."""
    if not isinstance(class_weight, dict):
        raise ValueError(f"fit: class_weight must be a dict of class indices to weights, like {{0: 1.0, 1: 5.0}}; "
                         f"got {type(class_weight).__name__}")
    entries = {}
    for label, weight in class_weight.items():
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)) or label < 0:
            raise ValueError(f"fit: class_weight has the key {label!r}; expected class indices 0, 1, ...")
        entries[str(int(label))] = float(weight) if isinstance(weight, (int, float, np.number)) else weight
    return entries


def _keras_values(values):
    """Keras's return of evaluate() and the *_on_batch calls: the loss alone, or [loss, metrics...]."""
    values = list(values.values())
    return values[0] if len(values) == 1 else values


def _split_callbacks(callbacks):
    """(the spec's fit.callbacks entries, the Python callbacks whose hooks fit calls) of fit's
    `callbacks`; a TypeError for what is not a Callback or defines a per-step hook."""
    entries, hooked = [], []
    if isinstance(callbacks, Callback):  # one, as Keras takes it
        callbacks = [callbacks]
    for c in callbacks or []:
        if not isinstance(c, Callback):
            raise TypeError(f"fit: callback {type(c).__name__} is not a multifit.callbacks.Callback (Keras's "
                            f"callbacks: from multifit import keras, then keras.callbacks)")
        if isinstance(c, SpecCallback):
            entries.append(c.get_config())
            continue
        batch = [h for h in BATCH_HOOKS if getattr(type(c), h, None) is not None]
        if batch:
            raise TypeError(f"fit: callback {type(c).__name__} defines {', '.join(batch)}: multifit calls the "
                            f"epoch and train hooks only (a step's hook would run in every step)")
        hooked.append(c)
    return entries, hooked


def _weights_path(path, who):
    """`path` as a string; a ValueError for an .h5 name other than Keras 3's ".weights.h5"."""
    path = os.fspath(path)
    if path.endswith(".h5") and not path.endswith(".weights.h5"):
        raise ValueError(f"{who}: {path}: Keras 3's weights file is named NAME.weights.h5 (any other name "
                         f"but an .h5 one is multifit's weights file)")
    return path


class OptimizerState:
    """model.optimizer: the compiled optimizer's learning rate, read and set as Keras's is
    (`model.optimizer.learning_rate = 1e-4` between fits, or from a callback between epochs; a
    ValueError where the rate is a schedule)."""

    def __init__(self, model):
        self._model = model

    @property
    def learning_rate(self):
        return float(self._model._ensure_session().learning_rate())

    @learning_rate.setter
    def learning_rate(self, rate):
        self._model._ensure_session().set_learning_rate(float(rate))
        self._model._learning_rate = float(rate)

    def __repr__(self):
        return f"<optimizer of {self._model.name}: {self._model._compiled['optimizer']!r}>"


class Sequential:
    """keras.Sequential of multifit.layers. `seed` draws the initial weights, each epoch's shuffle
    and Dropout's masks (multifit's own generator: the same seed gives the same numbers every run,
    not Keras's numbers)."""

    _unnamed = 0  # Sequentials made without a name so far: Keras's sequential, sequential_1, ...
    default_seed = 0  # the seed of a Sequential given none (multifit.keras.utils.set_random_seed sets it)

    def __init__(self, layers=None, name=None, seed=None):
        if layers is not None and not isinstance(layers, (list, tuple)):
            raise TypeError(f"Sequential: layers is {type(layers).__name__} {layers!r:.40}; expected a list of "
                            f"multifit.layers layers")
        self._layers = []  # as given, the InputLayer included
        for layer in layers or []:
            self.add(layer)
        if name is None:
            name = "sequential" + (f"_{Sequential._unnamed}" if Sequential._unnamed else "")
            Sequential._unnamed += 1
        self.name = name
        self.seed = Sequential.default_seed if seed is None else int(seed)
        self._compiled = None
        self.stop_training = False  # Keras's: a callback sets it to end the fit after the epoch
        self._fit = {"epochs": 1, "batch_size": 32, "validation_split": 0.0, "shuffle": True, "callbacks": []}
        self._features = None  # the input's width, from the first data seen where no Input gives it
        self._targets = None  # y's columns (one-hot labels, several regression targets); None: no data yet
        self._session = None
        self._session_spec = None  # the spec's JSON the session has
        self._backend = None
        self._learning_rate = None  # the rate set through model.optimizer; None: the compiled one

    @classmethod
    def from_spec(cls, spec, **compile_kwargs):
        """A model of a spec dict (as a spec file holds it, or spec() gives): its layers, input and
        seed, compiled with its optimizer, loss and metrics where it has a loss (compile_kwargs add
        where it runs: backend, threads...)."""
        from .layers import from_config
        shape = spec.get("input_shape") or ([spec["input"]] if "input" in spec else None)
        entries = [InputLayer(shape)] if shape else []
        entries += [from_config(entry) for entry in spec.get("preprocessing", [])]
        entries += [from_config(entry) for entry in spec["layers"]]
        model = cls(entries, name=spec.get("name"), seed=spec.get("seed"))
        if spec.get("loss") is not None:
            model.compile(optimizer=spec.get("optimizer", "adam"), loss=spec["loss"], metrics=spec.get("metrics"),
                          **compile_kwargs)
            if "metrics" not in spec:  # the spec's default, not Keras's none
                model._compiled["metrics"] = None
                model._session = None
        return model

    def add(self, layer):
        """keras.Sequential.add: the layer last; one given no name is named as Keras names it
        (dense, dense_1, ...: its class in snake case, counted in this model)."""
        layer = _checked_layer(layer, len(self._layers))
        if layer.name is None and not isinstance(layer, InputLayer):
            base = _summary.snake_case(layer.kind)
            taken = {other.name for other in self._layers}
            layer.name = next(name for name in (base if i == 0 else f"{base}_{i}" for i in range(len(taken) + 1))
                              if name not in taken)
        self._layers.append(layer)
        layer._model = self

    @property
    def layers(self):
        """keras.Sequential.layers: its layers in order, without the InputLayer (a new list)."""
        return [layer for layer in self._layers if not isinstance(layer, InputLayer)]

    def get_layer(self, name=None, index=None):
        """keras.Model.get_layer: the layer of that name, or at that index of `layers`; a ValueError
        naming the model's layers where there is none."""
        layers = self.layers
        if (name is None) == (index is None):
            raise ValueError("get_layer: give a layer's name or its index, not both")
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"get_layer: index {index} is out of range: the model has {len(layers)} layers")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"get_layer: no layer named {name!r}; the model's layers: "
                         f"{', '.join(str(layer.name) for layer in layers)}")

    def _weights_range(self, layer):
        """Where `layer`'s weights are in get_weights()' list: (start, count)."""
        start = 0
        for other in self._layers:
            if other is layer:
                return start, other.weight_count()
            start += other.weight_count()
        raise ValueError(f"{layer.name}: not a layer of model {self.name}")

    def compile(self, optimizer="adam", loss=None, metrics=None, *, backend="auto", graphs="auto", threads=0,
                gemm="tiled", activations="ours", memory_limit=None, memory="grow", pipeline=None):
        """keras.Model.compile, and where it runs: `backend` auto|cpu|cuda|host-exec, `graphs`
        auto|on|off, `threads` (the cpu backend's; 0: the cores this process may use), `gemm`
        tiled|cublas and `activations` ours|cudnn (cuda), `memory_limit` (the model's pool's cap:
        bytes, or "64MiB"), `memory` grow|reserve, `pipeline` {"workers", "prefetch"} (with
        preprocessing). Optimizer and loss by Keras's names or as {"name": ..., settings}."""
        if loss is None:
            raise ValueError("compile: loss is required, e.g. loss=\"binary_crossentropy\"")
        weights = self.get_weights() if self._session is not None else None  # read under the old compile
        # the last fit's callbacks watched the old metrics; each fit() gives its own
        self._fit = {**self._fit, "callbacks": []}
        self._compiled = {"optimizer": serialized(optimizer), "loss": serialized(loss),
                          "metrics": serialized(list(metrics or [])),
                          "memory": {"mode": memory, **({"limit": memory_limit} if memory_limit is not None else {})},
                          "pipeline": pipeline}
        self._backend = {"backend": backend, "graphs": graphs, "threads": int(threads), "gemm": gemm,
                         "activations": activations}
        self._learning_rate = None  # a new optimizer's
        choice = self._backend_choice()
        _multifit.check_backend(choice)
        self._session = None  # made again: a fresh optimizer, as Keras's compile makes; the weights kept
        if self._input_features() is not None:
            self._ensure_session()
            if weights is not None and [w.shape for w in weights] == [tuple(s) for s in
                                                                       self._session.weight_shapes()]:
                self._session.set_weights(np.concatenate([w.ravel() for w in weights]) if weights else
                                          np.zeros(0, np.float32))

    # ---- the spec ------------------------------------------------------------------------------

    def _input_features(self):
        features, _, _, _ = _shape_config(self._layers)
        return features if features is not None else self._features

    def spec(self):
        """The model as a multifit spec (a dict): what `multifit train` reads from a file; before
        compile() its layers alone (a Keras model without compile_config)."""
        features, image, layers, preprocessing = _shape_config(self._layers)
        features = features if features is not None else self._features
        if features is None:
            raise ValueError("the model's input is not known yet: give multifit.layers.Input(shape=(N,)) first, "
                             "or call fit() with data")
        spec = {"name": self.name, "input": features, "layers": layers, "fit": dict(self._fit), "seed": self.seed}
        c = self._compiled or {"metrics": None, "pipeline": None}
        if self._compiled is not None:
            spec.update(loss=c["loss"], optimizer=c["optimizer"], memory=c["memory"])
        if c["metrics"] is not None:  # None: a spec's own default (from_spec of a spec without metrics)
            spec["metrics"] = c["metrics"]
        if self._targets not in (None, 1):
            spec["targets"] = self._targets
        if image is not None:
            spec["input_shape"] = image
        if preprocessing:
            spec["preprocessing"] = preprocessing
            if c["pipeline"]:
                spec["pipeline"] = c["pipeline"]
        return spec

    def see_data(self, x, y):
        """Takes the input's width from x where no Input gave it, and the targets' from y."""
        if self._input_features() is None:
            self._features = int(x.shape[1])
        self._targets = int(y.shape[1]) if y.ndim == 2 else 1

    def _session_for(self, x, y, fit=None):
        """The session for data (x, y), and with `fit` for these fit settings: the input's width and
        the target columns taken from the data, the spec checked; a ValueError (a mistake in the
        data or the settings) leaves the model as it was."""
        kept = self._features, self._targets, self._fit
        self.see_data(x, y)
        if fit is not None:
            self._fit = fit
        try:
            return self._ensure_session()
        except ValueError:
            self._features, self._targets, self._fit = kept
            raise

    def _session_spec_json(self):
        """The spec the session is built from. Before any data the target columns are unknown, so a
        metric read against them cannot be checked yet (mse beside categorical cross-entropy, whose
        labels Keras takes one-hot and a spec without "targets" takes as class indices): the session
        is built without the metrics, which the first fit or evaluate gives it with the data. The
        weights do not depend on them."""
        spec = self.spec()
        if self._compiled is None:  # built, not compiled: its weights and predictions need no loss
            spec["loss"] = "mse"
        if self._targets is None:
            spec.pop("metrics", None)
        return json.dumps(spec)

    def _backend_choice(self):
        choice = _multifit.BackendChoice()  # compile()'s defaults where it has not been called
        for key, value in (self._backend or {}).items():
            setattr(choice, key, value)
        return choice

    def _ensure_session(self):
        spec_json = self._session_spec_json()
        if self._session is None:
            self._session = _multifit.Session(spec_json, self._backend_choice(), self.name)
        elif spec_json != self._session_spec:  # a fit's new arguments, or compile() again
            self._session.respec(spec_json, self.name)
        else:
            return self._session
        self._session_spec = spec_json
        if self._learning_rate is not None:  # a model built (again) has the compiled rate
            self._session.set_learning_rate(self._learning_rate)
        return self._session

    @property
    def optimizer(self):
        """keras.Model.optimizer: None before compile; then its learning rate (OptimizerState)."""
        return OptimizerState(self) if self._compiled is not None else None

    # ---- training ------------------------------------------------------------------------------

    def fit(self, x, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            **unsupported):
        """keras.Model.fit on numpy arrays: returns a History. x (rows, features), or images (rows,
        ...) flattened; y (rows,) or (rows, targets). float32 C-contiguous arrays are read in place
        (on the cpu backend, without a copy); others are converted once. The GIL is released while
        it trains; Ctrl-C stops it after its current step and raises KeyboardInterrupt, leaving the
        model as that step left it. verbose 0 prints nothing; 1 ("auto") and 2 Keras's epoch lines
        (ProgbarLogger), 1 with its bar redrawn while the epoch runs.
        validation_data (x_val, y_val) or (x_val, y_val, val_sample_weight) overrides
        validation_split, as in Keras (its rows are joined after x's: one copy).
        sample_weight (rows,) multiplies each row's loss (in training, and in validation where the
        validation rows are x's last ones); class_weight {class: weight} each training row's by its
        class's (its label, or the largest column of a one-hot row), 1 for a class not named, as
        Keras's: a batch's loss is the sum of its weighted row losses over its rows, and the metrics
        are not weighted. A fit with weights after one without, or the reverse, starts the optimizer's
        state afresh (the weights kept). initial_epoch k trains epochs k to epochs - 1, as Keras's resumes a fit
        (the callbacks and the History count from k; EarlyStopping's and ReduceLROnPlateau's own
        counts, which run in C++, start at this fit's first epoch)."""
        if unsupported:
            raise TypeError(f"fit() got arguments multifit does not take: {', '.join(sorted(unsupported))}")
        if self._compiled is None:
            raise ValueError("You must call compile() before fit()")  # Keras's type and words
        if y is None:  # Keras takes a generator or a tf.data.Dataset of (x, y) batches here
            raise TypeError(f"fit: x is {type(x).__name__} and no y is given; multifit trains on arrays: pass "
                            f"numpy arrays x and y (np.concatenate a generator's batches first)")
        if not isinstance(initial_epoch, int) or isinstance(initial_epoch, bool) or initial_epoch < 0:
            raise ValueError(f"fit: initial_epoch={initial_epoch!r}; expected a whole number >= 0")
        if class_weight is not None and sample_weight is not None:  # Keras's words
            raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
        x, y = features_and_targets(self._rows_of(x), y)
        if validation_data is not None:  # Keras: it overrides validation_split
            if isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3):
                validation_data = (self._rows_of(validation_data[0], "validation_data's x"), *validation_data[1:])
            x, y, sample_weight, validation_split = _with_validation_rows(x, y, sample_weight, validation_data)
            if class_weight is not None and sample_weight is not None:
                raise ValueError("fit: class_weight with validation_data's sample weights: multifit weighs a fit's "
                                 "rows one way; give the class weights as sample weights")
        entries, hooked = _split_callbacks(callbacks)
        # the epochs this fit trains; what is not a count is left to the spec reader, which names fit.epochs
        counted = isinstance(epochs, int) and not isinstance(epochs, bool) and epochs >= 0
        fit = {"epochs": max(0, epochs - initial_epoch) if counted else epochs,
               "batch_size": 32 if batch_size is None else batch_size,
               "validation_split": validation_split, "shuffle": shuffle, "callbacks": entries}
        if sample_weight is not None:
            fit["sample_weight"] = True
            sample_weight = as_rows(sample_weight, "sample_weight", ndims=(1, 2))
        if class_weight is not None:
            fit["class_weight"] = _class_weight_entries(class_weight)
        session = self._session_for(x, y, fit)
        trained_rows = math.floor(len(x) * (1 - validation_split))  # Keras's split: the last rows validate
        params = {"epochs": epochs, "steps": math.ceil(trained_rows / self._fit["batch_size"]), "verbose": verbose,
                  "initial_epoch": initial_epoch}
        if verbose != 0 and not any(isinstance(c, ProgbarLogger) for c in hooked):  # Keras's lines
            hooked.append(ProgbarLogger(2 if verbose == 2 else 1))
        result, logs = self._fit_with_hooks(session, x, y, sample_weight, hooked, params)
        if self._learning_rate is not None:  # where ReduceLROnPlateau left it
            self._learning_rate = session.learning_rate()
        for c in [callbacks] if isinstance(callbacks, Callback) else callbacks or []:
            if isinstance(c, EarlyStopping):  # Keras's attribute: the epoch (from 0) it stopped after, else 0
                stopped = result["stopped_epoch"] and result["stop_reason"].startswith("EarlyStopping")
                c.stopped_epoch = result["stopped_epoch"] - 1 + initial_epoch if stopped else 0
        if result["status"] == "diverged":  # Keras would go on with nan; multifit stops and says where
            warnings.warn(f"fit: model '{self.name}' diverged: {result['why']}", RuntimeWarning, stacklevel=2)
        return History(result, params, logs)

    def _fit_with_hooks(self, session, x, y, sample_weight, hooked, params):
        """(session.fit's result, each epoch's logs or None), the hooks of the Python callbacks
        `hooked` called as Keras calls them: on_train_begin, on_epoch_begin and on_epoch_end between
        epochs (from the C++ fit, the GIL taken back; the epoch a C++ callback or a divergence ends
        the fit with too), on_train_end with the last epoch's logs. The callbacks share each epoch's
        logs dict, as Keras's do: what one adds the next sees, and History keeps. stop_training ends
        the fit after an epoch."""
        if not hooked:
            return session.fit(x, y, sample_weight=sample_weight), None
        first, epochs = params["initial_epoch"], params["epochs"]
        self.stop_training = False
        for c in hooked:
            c.set_model(self)
            c.set_params(params)
        for c in hooked:
            c.on_train_begin({})
        if first < epochs:
            for c in hooked:
                c.on_epoch_begin(first, {})
        kept = []  # each epoch's logs, as the callbacks left them

        def on_epoch(epoch, logs, ended):
            epoch += first
            logs = {k: v for k, v in logs.items() if k != "seconds"}
            for c in hooked:
                c.on_epoch_end(epoch, logs)
            kept.append(logs)
            if ended or self.stop_training:
                return True
            if epoch + 1 < epochs:
                for c in hooked:
                    c.on_epoch_begin(epoch + 1, {})
            return False

        bars = [c for c in hooked if isinstance(c, ProgbarLogger) and c.verbose == 1]
        result = session.fit(x, y, None, on_epoch, sample_weight, bars[0].on_step if bars else None)
        for c in hooked:
            c.on_train_end(dict(kept[-1]) if kept else {})
        return result, kept

    def evaluate(self, x, y, batch_size=None, verbose="auto", sample_weight=None, return_dict=False):
        """keras.Model.evaluate: the loss, or [loss, metrics...], or with return_dict a dict.
        (The batch size of the fit is used: the mean is the same.) sample_weight (rows,) weighs
        each row's loss, as in fit. verbose 1 ("auto") and 2 print Keras's last line of its bar."""
        if self._compiled is None:
            raise ValueError("You must call compile() before evaluate()")
        x, y = features_and_targets(self._rows_of(x), y)
        if sample_weight is not None:
            sample_weight = as_rows(sample_weight, "sample_weight", ndims=(1, 2))
        started = time.perf_counter()
        values = self._session_for(x, y).evaluate(x, y, sample_weight)
        if verbose != 0:  # Keras's finished bar, steps of its default 32 rows
            print(progbar_line(math.ceil(len(x) / (batch_size or 32)), time.perf_counter() - started, values,
                               2 if verbose == 2 else 1), flush=True)
        if return_dict:
            return values
        return _keras_values(values)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """keras.Model.train_on_batch: one step on the batch (x, y), its rows weighted as fit's; the
        batch's loss (before the step's update, as Keras's) and metrics, as evaluate() gives them.
        The optimizer's state carries on while the batches are no larger than the fit's batch size
        (32 before any fit)."""
        # The fit's batch size where the batch fits in it (one step of a part batch), so that the plan,
        # and the optimizer's state with it, carries on; a larger batch builds the model again at its
        # size, with its weights and a fresh optimizer.
        batch = max(len(x), self._fit["batch_size"])
        history = self.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0,
                           sample_weight=sample_weight, class_weight=class_weight)
        values = {key: series[0] for key, series in history.history.items()}
        values = {"loss": values.pop("loss"), **values}  # Keras's: the loss, then the metrics
        return values if return_dict else _keras_values(values)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """keras.Model.test_on_batch: evaluate() of one batch."""
        return self.evaluate(x, y, verbose=0, sample_weight=sample_weight, return_dict=return_dict)

    def predict_on_batch(self, x):
        """keras.Model.predict_on_batch: predict() of one batch."""
        return self.predict(x, verbose=0)

    def __call__(self, x, training=False):
        """model(x): the outputs of x, as a numpy array (predict(); multifit has no tensors). training
        True, Keras's Dropout-on call, is refused."""
        if training:
            raise ValueError("model(x, training=True): multifit applies Dropout inside fit only; call fit()")
        return self.predict(x, verbose=0)

    def predict(self, x, batch_size=None, verbose="auto"):
        """keras.Model.predict: the output layer's outputs, (rows, units), float32; verbose 1
        ("auto") and 2 print Keras's last line of its bar."""
        x = self._rows_of(x)
        x = as_rows(x.reshape(x.shape[0], -1) if x.ndim > 2 else x, "x")
        started = time.perf_counter()
        out = self._ensure_session().predict(x)
        if verbose != 0:  # Keras's finished bar, steps of its default 32 rows
            print(progbar_line(math.ceil(len(x) / (batch_size or 32)), time.perf_counter() - started, {},
                               2 if verbose == 2 else 1), flush=True)
        return out

    def _rows_of(self, x, name="x"):
        """x as given, refused (ValueError) where its samples are not the model's input: a batch of
        samples of several dimensions is flattened (as Keras's Flatten) only where the model reads
        samples of that shape (its Input's) or, without an Input, starts with a Flatten; Keras would
        otherwise apply the first Dense to the last axis alone."""
        x = np.asarray(x)
        if x.ndim <= 2:
            return x
        features, image, _, _ = _shape_config(self._layers)
        sample = list(x.shape[1:])
        first = next((layer for layer in self._layers if not isinstance(layer, InputLayer)), None)
        if image is not None and image in (sample, sample + [1]):
            return x
        if features is None and isinstance(first, Flatten):
            return x
        declared = f"the model's input is {tuple(image) if image else (features,)}" if features else \
            "the model declares no input shape and its first layer is not a Flatten"
        raise ValueError(f"{name} has samples of shape {tuple(sample)}, but {declared}: reshape {name} to "
                         f"(rows, features), or give the model Input(shape={tuple(sample)}) and a Flatten")

    # ---- weights -------------------------------------------------------------------------------

    def count_params(self):
        """keras.Model.count_params: the scalars of every weight, a BatchNormalization's moving
        statistics included."""
        return sum(math.prod(shape) for shape in self._ensure_session().weight_shapes())

    def get_weights(self):
        """Every weight in Keras's order (a Dense's kernel (in, out) and bias; a BatchNormalization's
        gamma, beta, moving mean, moving variance), as float32 numpy arrays (copies)."""
        session = self._ensure_session()
        flat = session.weights()
        arrays, at = [], 0
        for shape in session.weight_shapes():
            n = int(np.prod(shape))
            arrays.append(flat[at:at + n].reshape(shape))
            at += n
        return arrays

    def set_weights(self, weights):
        """Sets every weight from arrays in get_weights()' order and shapes (a ValueError otherwise)."""
        session = self._ensure_session()
        shapes = [tuple(s) for s in session.weight_shapes()]
        if len(weights) != len(shapes):
            raise ValueError(f"set_weights: the model has {len(shapes)} weights, given {len(weights)}")
        for i, (w, shape) in enumerate(zip(weights, shapes)):
            if tuple(np.shape(w)) != shape:
                raise ValueError(f"set_weights: weight {i} has shape {tuple(np.shape(w))}, the model's is {shape}")
        flat = [np.asarray(w, np.float32).ravel() for w in weights]
        session.set_weights(np.concatenate(flat) if flat else np.zeros(0, np.float32))

    def __getstate__(self):
        """What pickle and copy.deepcopy keep: the layers, the compile and fit settings, the seed,
        the weights (where the model has been built) and the optimizer's state and rate (where
        compiled): the copy trains on as the model would, as one loaded from its .keras file does."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_session", "_session_spec")}
        built = self._session is not None
        state["_weights"] = self.get_weights() if built else None
        state["_optimizer"] = self._session.optimizer_state() if built and self._compiled is not None else None
        return state

    def __setstate__(self, state):
        weights, optimizer = state.pop("_weights"), state.pop("_optimizer", None)
        self.__dict__.update(state, _session=None, _session_spec=None)
        for layer in self._layers:
            layer._model = self
        if weights is not None:
            self.set_weights(weights)
        if optimizer is not None:
            self._set_optimizer_state(optimizer)

    def _set_optimizer_state(self, state):
        """The optimizer's state and rate (Session.optimizer_state()'s form), the rate kept for a
        session built again."""
        self._ensure_session().set_optimizer_state(state)
        if state["learning_rate"] is not None:
            self._learning_rate = state["learning_rate"]

    def save_weights(self, path):
        """The weights to `path`: a "NAME.weights.h5" file as Keras 3 writes it (Keras's
        load_weights reads it; needs h5py), any other name but an .h5 one multifit's weights file
        (what `multifit train --save` writes and `--load` reads)."""
        path = _weights_path(path, "save_weights")
        if path.endswith(".weights.h5"):
            from . import keras_io
            keras_io.save_weights_h5(self, path)
        else:
            self._ensure_session().save_weights(path)

    def load_weights(self, path):
        """Weights from a Keras 3 "NAME.weights.h5" file (Keras's save_weights, or save_weights here)
        or ".keras" file, with its optimizer's state where it holds this model's optimizer's, or a
        multifit weights file; a ValueError where they are not this model's, FileNotFoundError where
        there is no such file."""
        path = _weights_path(path, "load_weights")
        if path.endswith((".weights.h5", ".keras")):
            from . import keras_io
            keras_io.load_weights_keras(self, path)
        else:
            self._ensure_session().load_weights(path)

    def save(self, path):
        """A Keras 3 `.keras` file (keras.saving.load_model opens it; needs h5py)."""
        path = os.fspath(path)
        if not path.endswith(".keras"):
            raise ValueError(f"save: {path}: give a .keras file name (save_weights writes multifit's weights file)")
        from . import keras_io
        keras_io.save_keras(self, path)

    def to_keras(self):
        """The model as a keras.Sequential with its weights (needs Keras 3)."""
        from . import keras_io
        return keras_io.to_keras(self)

    @property
    def backend(self):
        """The backend it trains on ("cpu", "cuda", "host-exec")."""
        return self._ensure_session().backend_name

    def summary(self, print_fn=None):
        """keras.Model.summary: each layer's name (type), output shape and parameter count, and the
        totals (a BatchNormalization's moving statistics not trainable), in Keras 3's table;
        `print_fn` gets the text (print by default). The model's input must be known (an Input, or
        data seen)."""
        features, image, _, _ = _shape_config(self._layers)
        features = features if features is not None else self._features
        if features is None:
            raise ValueError("summary: the model's input is not known yet: give multifit.layers.Input(shape=(N,)) "
                             "first, or call fit() with data")
        rows = _summary.layer_rows(self._layers, image or (features,))
        (print_fn or print)(_summary.summary_text(self.name, rows))
