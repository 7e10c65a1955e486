"""keras.regularizers: L1(l1=0.01), L2(l2=0.01), L1L2(l1=0.0, l2=0.0) and their lower-case names (l1,
l2, l1_l2), the same classes as in Keras 3."""
from .._keras_objects import _CLASSES, classes, missing

globals().update(classes("regularizers", __name__))
globals().update({e["identifier"]: globals()[e["class_name"]] for e in _CLASSES["regularizers"]})


def __getattr__(name):
    raise missing(__name__, "regularizers", name)
