"""keras.initializers: GlorotUniform(), RandomNormal(mean, stddev), Constant(value), ... and their
lower-case names (glorot_uniform), the same classes as in Keras 3. A seed given is taken and not
used: multifit draws from the model's seed."""
from .._keras_objects import _CLASSES, classes, missing

globals().update(classes("initializers", __name__))
globals().update({e["identifier"]: globals()[e["class_name"]] for e in _CLASSES["initializers"]})


def __getattr__(name):
    raise missing(__name__, "initializers", name)
