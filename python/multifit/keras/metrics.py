"""keras.metrics: the classes multifit computes beside the loss (BinaryAccuracy(), MeanSquaredError(),
...) and their identifiers as functions; compile(metrics=["accuracy"]) takes Keras's names too."""
from .._keras_objects import classes, functions, missing

globals().update(classes("metrics", __name__))
globals().update(functions("metrics"))


def __getattr__(name):
    raise missing(__name__, "metrics", name)
