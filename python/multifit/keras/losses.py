"""keras.losses: the classes (MeanSquaredError(), Huber(delta=0.5), ...) and the functions by their
identifiers (mean_squared_error, mse, ...), which compile() takes as Keras's do."""
from .._keras_objects import classes, functions, missing

globals().update(classes("losses", __name__))
globals().update(functions("losses"))


def __getattr__(name):
    raise missing(__name__, "losses", name)
