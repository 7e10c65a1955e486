"""Keras's layers inside multifit's scope, by Keras's names and keyword arguments.

Each layer is its spec entry: `get_config()` gives the dict a multifit spec lists under "layers"
(or "preprocessing", for the Random* operations), which the C++ spec reader validates with the
command line's messages. Defaults are Keras 3's.
"""
from ._keras_objects import serialized


class Layer:
    """A layer: its Keras class name and the keyword arguments given (Keras's defaults for the rest)."""

    kind = None  # the spec's "type": Keras's class name
    preprocessing = False  # a preprocessing operation, applied to training batches on the host

    def __init__(self, **config):
        self.name = config.pop("name", None)
        self.config = config
        self._model = None  # the Sequential it was added to (Sequential.add sets it)

    def get_config(self):
        return {"type": self.kind, **serialized(self.config)}

    def weight_count(self):
        """How many weight arrays it holds in Keras's get_weights(): none but for Dense and
        BatchNormalization (which override it)."""
        return 0

    def get_weights(self):
        """keras.layers.Layer.get_weights: its weights as float32 numpy arrays (copies), in Keras's
        order; [] before it is in a model whose input is known."""
        if self._model is None or self.weight_count() == 0 or self._model._input_features() is None:
            return []
        start, count = self._model._weights_range(self)
        return self._model.get_weights()[start:start + count]

    def set_weights(self, weights):
        """keras.layers.Layer.set_weights: arrays in get_weights()' order and shapes (a ValueError
        otherwise)."""
        if self._model is None:
            raise ValueError(f"{self.name or self.kind}.set_weights: the layer is in no model yet")
        start, count = self._model._weights_range(self)
        if len(weights) != count:
            raise ValueError(f"{self.name}.set_weights: the layer has {count} weights, given {len(weights)}")
        every = self._model.get_weights()
        every[start:start + count] = weights
        self._model.set_weights(every)

    def __getstate__(self):
        """What pickle and copy.deepcopy keep: its settings, not its model (the model's copy links
        its own layers)."""
        return {**self.__dict__, "_model": None}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{self.kind}({args})"


class Dense(Layer):
    kind = "Dense"

    def __init__(self, units, activation=None, **config):
        super().__init__(units=units, activation=activation or "linear", **config)

    def weight_count(self):
        """Its kernel (in, units), and its bias where use_bias."""
        return 1 + bool(self.config.get("use_bias", True))


class Dropout(Layer):
    kind = "Dropout"

    def __init__(self, rate, **config):
        super().__init__(rate=rate, **config)


class BatchNormalization(Layer):
    kind = "BatchNormalization"

    def weight_count(self):
        """gamma where it scales, beta where it centers, then the moving mean and variance."""
        return bool(self.config.get("scale", True)) + bool(self.config.get("center", True)) + 2


class Activation(Layer):
    kind = "Activation"

    def __init__(self, activation, **config):
        super().__init__(activation=activation, **config)


class Flatten(Layer):
    kind = "Flatten"


class InputLayer(Layer):
    """The input's shape: (features,), or an image's (height, width, channels)."""

    kind = "InputLayer"

    def __init__(self, shape, **config):
        if not isinstance(shape, (tuple, list)):  # Keras's words: Input(shape=20) is a mistake there too
            raise ValueError(f"Cannot convert '{shape}' to a shape: give a tuple, e.g. shape=({shape},)")
        super().__init__(shape=list(shape), **config)


def Input(shape, name=None):
    """keras.Input for a Sequential's first entry: the shape of one sample."""
    return InputLayer(shape, name=name)


class RandomFlip(Layer):
    kind, preprocessing = "RandomFlip", True


class RandomTranslation(Layer):
    kind, preprocessing = "RandomTranslation", True


class RandomZoom(Layer):
    kind, preprocessing = "RandomZoom", True


class RandomContrast(Layer):
    kind, preprocessing = "RandomContrast", True


class GaussianNoise(Layer):
    kind, preprocessing = "GaussianNoise", True

    def __init__(self, stddev, **config):
        super().__init__(stddev=stddev, **config)


_KINDS = {cls.kind: cls for cls in (Dense, Dropout, BatchNormalization, Activation, Flatten, InputLayer, RandomFlip,
                                    RandomTranslation, RandomZoom, RandomContrast, GaussianNoise)}


def from_config(entry):
    """The layer of a spec's layer entry ({"type": "Dense", "units": 64, ...}; Dense where it has no
    type, as the spec reader takes it). Raises ValueError for a type multifit has no layer of."""
    entry = dict(entry)
    kind = entry.pop("type", "Dense")
    if kind not in _KINDS:
        raise ValueError(f"layer type {kind!r}: multifit's layers are {', '.join(_KINDS)}")
    layer = Layer.__new__(_KINDS[kind])
    Layer.__init__(layer, **entry)
    return layer


def __getattr__(name):  # keras.layers.Conv2D and the like: say what multifit has
    raise AttributeError(f"module '{__name__}' has no attribute '{name}': multifit's layers are "
                         f"{', '.join(_KINDS)} (and Input)")
