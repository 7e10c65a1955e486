"""Ctrl-C while multifit trains: KeyboardInterrupt within a step or so, and the process usable after."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import multifit
from conftest import SEED_PAIR


def interrupt_in(seconds):
    threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT)).start()


def long_task(**compile_kwargs):
    """(model, x, y): Dense(128 relu) -> Dense(1 sigmoid) on 20000 rows of 64 features, an epoch
    long enough to interrupt or to count beside."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20000, 64)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)
    model = multifit.Sequential([multifit.layers.Dense(128, activation="relu"),
                                 multifit.layers.Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", backend="cpu", **compile_kwargs)
    return model, x, y


def test_ctrl_c_stops_a_fit_and_the_model_trains_again():
    model, x, y = long_task()
    interrupt_in(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        model.fit(x, y, epochs=100000, verbose=0)
    assert time.monotonic() - start < 5
    history = model.fit(x[:512], y[:512], epochs=1, verbose=0)
    assert history.status == "ok" and np.isfinite(history.history["loss"][0])


def test_ctrl_c_stops_a_run_and_a_run_goes_on_after():
    interrupt_in(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        multifit.run({"name": "long", "base": {"input": 20, "layers": [{"type": "Dense", "units": 64},
                                                                    {"type": "Dense", "units": 1,
                                                                     "activation": "sigmoid"}],
                                               "loss": "binary_crossentropy", "fit": {"epochs": 100000}},
                      "grid": {"seed": [1, 2]}}, mode="streams", data="synthetic:binary", backend="cpu", quiet=True)
    assert time.monotonic() - start < 10
    assert multifit.run(SEED_PAIR, backend="cpu", quiet=True).exit_code == 0


def test_the_gil_is_released_while_a_fit_trains():
    # A fit on another thread for about half a second: this thread, which needs the GIL to count,
    # counts on. A fit that held the GIL would keep it from counting until the fit ended.
    model, x, y = long_task(threads=1)
    histories = []
    fitting = threading.Thread(target=lambda: histories.append(model.fit(x, y, epochs=50, verbose=0)))
    fitting.start()
    time.sleep(0.01)  # the fit has begun
    counted, start = 0, time.monotonic()
    while fitting.is_alive():
        counted += 1
    elapsed = time.monotonic() - start
    fitting.join()
    assert histories and histories[0].status == "ok"
    assert elapsed > 0.05, "the fit ended too soon to tell"
    assert counted > 100000 * elapsed, f"{counted} counts in {elapsed:.3f} s"  # a loop counts millions a second
