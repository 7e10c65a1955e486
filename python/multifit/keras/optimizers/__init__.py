"""keras.optimizers: Adam(learning_rate=...), SGD, RMSprop, AdamW, Adagrad, Adamax, Nadam, Lion, by
Keras's keyword arguments (learning_rate also by position, or a schedule of `schedules`)."""
from ..._keras_objects import classes, missing
from . import schedules

globals().update(classes("optimizers", __name__))


def __getattr__(name):
    raise missing(__name__, "optimizers", name)
