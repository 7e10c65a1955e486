"""keras.utils: set_random_seed and to_categorical."""
import random as _random

import numpy as _np

from .. import models as _models


def set_random_seed(seed):
    """Seeds Python's random, NumPy's global generator (as Keras's does) and every Sequential made
    after it that is given no seed: its initial weights, shuffles and Dropout masks (multifit's own
    generator: the same seed gives the same numbers every run, not Keras's numbers)."""
    _random.seed(seed)
    _np.random.seed(seed)
    _models.Sequential.default_seed = int(seed)


def to_categorical(x, num_classes=None):
    """keras.utils.to_categorical: class indices (any shape) as one-hot rows of float32, num_classes
    wide (the largest index + 1 by default)."""
    x = _np.asarray(x, dtype="int64")
    if x.ndim > 1 and x.shape[-1] == 1:  # Keras drops a trailing axis of one
        x = x.reshape(x.shape[:-1])
    num_classes = int(x.max()) + 1 if num_classes is None else int(num_classes)
    return _np.eye(num_classes, dtype="float32")[x.reshape(-1)].reshape(*x.shape, num_classes)
