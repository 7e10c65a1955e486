"""keras.optimizers.schedules: ExponentialDecay(initial_learning_rate, decay_steps, decay_rate),
CosineDecay, PiecewiseConstantDecay, InverseTimeDecay, PolynomialDecay, their required arguments by
position as in Keras."""
from ..._keras_objects import classes, missing

globals().update(classes("schedules", __name__))


def __getattr__(name):
    raise missing(__name__, "schedules", name)
