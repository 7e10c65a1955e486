"""keras.callbacks that multifit runs inside its fit, by Keras's names, arguments and defaults.

They are the spec's "fit.callbacks" entries: they run in C++ at each epoch's end, with Keras's
rules (nn/callbacks.h). A Python callback of one's own (a keras.callbacks.Callback subclass) has no
place there: fit() refuses it with a TypeError.
"""


class Callback:
    kind = None

    def __init__(self, **config):
        self.config = config

    def get_config(self):
        return {"type": self.kind, **self.config}

    def __repr__(self):
        return f"{self.kind}({', '.join(f'{k}={v!r}' for k, v in self.config.items())})"


class EarlyStopping(Callback):
    kind = "EarlyStopping"


class ReduceLROnPlateau(Callback):
    kind = "ReduceLROnPlateau"
