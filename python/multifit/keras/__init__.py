"""multifit shaped like keras, so that a Keras user's script changes one import:

    from multifit import keras   # instead of: import keras

    model = keras.Sequential([keras.Input(shape=(20,)),
                              keras.layers.Dense(64, activation="relu",
                                                 kernel_regularizer=keras.regularizers.L2(1e-4)),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.BinaryCrossentropy(),
                  metrics=[keras.metrics.BinaryAccuracy()])
    model.fit(x, y, epochs=5, validation_split=0.2, callbacks=[keras.callbacks.EarlyStopping(patience=2)])

It holds what multifit trains: Sequential and its layers, the optimizers and their schedules, the
losses, metrics, initializers and regularizers the spec reader takes (their classes made of its
tables), Keras's callbacks, utils.set_random_seed and to_categorical, and saving.load_model.
A name Keras has and multifit does not is an AttributeError saying what multifit has.
"""
from .. import callbacks, layers
from ..layers import Input
from ..models import Sequential
from . import initializers, losses, metrics, models, optimizers, regularizers, saving, utils

__all__ = ["Sequential", "Input", "layers", "callbacks", "optimizers", "losses", "metrics", "initializers",
           "regularizers", "utils", "saving", "models"]
