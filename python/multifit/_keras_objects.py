"""Keras objects made of the C++ spec reader's tables (nn/spec.h keras_classes): an optimizer, a
schedule, a loss, a metric, an initializer or a regularizer is its Keras class name and the
arguments given, written as Keras serializes it ({"class_name", "config"}); the spec reader checks
the arguments and keeps the defaults, so Python holds no table of Keras's names."""
import json

from . import _multifit

_CLASSES = json.loads(_multifit.keras_classes())


class KerasObject:
    """A Keras object by class name: `positional` names the arguments Keras's signature takes by
    position, the rest are given by keyword."""

    positional = ()

    def __init__(self, *args, **config):
        if len(args) > len(self.positional):
            taken = ", ".join(self.positional) or "none"
            raise TypeError(f"{type(self).__name__}() takes {len(self.positional)} positional argument(s) "
                            f"({taken}) and {len(args)} were given; give the others by name")
        self._config = {**dict(zip(self.positional, args)), **config}

    def get_config(self):
        return dict(self._config)

    def keras_form(self):
        """{"class_name", "config"}: what a spec takes for this object (Keras's serialized form)."""
        return {"class_name": type(self).__name__, "config": serialized(self._config)}

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._config.items())})"


class KerasFunction:
    """A Keras function given where a spec takes its identifier (loss=keras.losses.mean_squared_error):
    multifit computes it in its kernels, so calling it is a TypeError."""

    def __init__(self, identifier):
        self.__name__ = identifier

    def keras_form(self):
        return self.__name__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is computed in multifit's kernels: give it to compile(), "
                        f"not call it")

    def __repr__(self):
        return f"<multifit.keras function {self.__name__}>"


def serialized(value):
    """`value` with every Keras object in it (in lists and dicts too) in its spec form."""
    if hasattr(value, "keras_form"):
        return value.keras_form()
    if isinstance(value, dict):
        return {k: serialized(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [serialized(v) for v in value]
    return value


def classes(family, module, base=KerasObject):
    """{class name: class} of a family ("optimizers", ...), each a subclass of `base` in `module`
    (where pickle finds it)."""
    return {e["class_name"]: type(e["class_name"], (base,), {"positional": tuple(e["positional"]),
                                                            "__module__": module})
            for e in _CLASSES[family]}


def functions(family):
    """{identifier: function} of a family's identifiers (mean_squared_error, mse, ...)."""
    return {e["identifier"]: KerasFunction(e["identifier"]) for e in _CLASSES[family] if e["identifier"]}


def missing(module, family, name):
    """The AttributeError for a name a family does not have, saying what it has."""
    have = sorted({e["class_name"] for e in _CLASSES[family]})
    return AttributeError(f"module '{module}' has no attribute '{name}': multifit's {family} are "
                          f"{', '.join(have)}")
