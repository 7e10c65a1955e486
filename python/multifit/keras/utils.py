"""keras.utils: set_random_seed."""
from .. import models as _models


def set_random_seed(seed):
    """The seed of every Sequential made after it that is given none: its initial weights, shuffles
    and Dropout masks (multifit's own generator: the same seed gives the same numbers every run, not
    Keras's numbers)."""
    _models.Sequential.default_seed = int(seed)
