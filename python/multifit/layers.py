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

    def get_config(self):
        return {"type": self.kind, **serialized(self.config)}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{self.kind}({args})"


class Dense(Layer):
    kind = "Dense"

    def __init__(self, units, activation=None, **config):
        super().__init__(units=units, activation=activation or "linear", **config)


class Dropout(Layer):
    kind = "Dropout"

    def __init__(self, rate, **config):
        super().__init__(rate=rate, **config)


class BatchNormalization(Layer):
    kind = "BatchNormalization"


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
