"""keras.callbacks, by Keras's names, arguments and defaults.

EarlyStopping and ReduceLROnPlateau are the spec's "fit.callbacks" entries: they run in C++ at each
epoch's end with Keras's rules (nn/callbacks.h), in packs and sweeps too. A subclass of Callback
(Keras's way of writing one's own) runs in Python between epochs, with the GIL held: its
on_train_begin, on_epoch_begin, on_epoch_end and on_train_end get Keras's `logs` ("loss", each
metric, the "val_" ones, "learning_rate" with ReduceLROnPlateau), `self.model` is the model being
trained (it may be read and saved), and `self.model.stop_training = True` ends the fit after the
epoch. Batch hooks would run at every step, which multifit keeps in C++: a callback that defines
one is refused. ModelCheckpoint, CSVLogger, LambdaCallback, LearningRateScheduler and TerminateOnNaN
are such subclasses.
"""
import csv as _csv  # underscored: the module is keras.callbacks too, which names only callbacks
import math as _math
import os as _os
import time as _time
import warnings as _warnings

import numpy as _np


class Callback:
    """keras.callbacks.Callback: override the epoch and train hooks."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass


# Keras's per-step hooks, which multifit does not call (a refusal names the one defined)
BATCH_HOOKS = ("on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end",
               "on_test_batch_begin", "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end")


class SpecCallback(Callback):
    """A callback the C++ fit runs (the spec's fit.callbacks entry): its Keras class and arguments."""

    kind = None

    def __init__(self, **config):
        super().__init__()
        self.config = config

    def get_config(self):
        return {"type": self.kind, **self.config}

    def __repr__(self):
        return f"{self.kind}({', '.join(f'{k}={v!r}' for k, v in self.config.items())})"


class EarlyStopping(SpecCallback):
    """keras.callbacks.EarlyStopping; after a fit, `stopped_epoch` is the epoch (from 0) it stopped
    the fit after, 0 where it did not, as Keras's."""

    kind = "EarlyStopping"

    def __init__(self, monitor="val_loss", **config):  # monitor by position too, as in Keras
        super().__init__(monitor=monitor, **config)
        self.stopped_epoch = 0


class ReduceLROnPlateau(SpecCallback):
    kind = "ReduceLROnPlateau"

    def __init__(self, monitor="val_loss", **config):
        super().__init__(monitor=monitor, **config)


class ModelCheckpoint(Callback):
    """keras.callbacks.ModelCheckpoint, at each epoch's end: `filepath` may name the epoch and the
    logs ("m-{epoch:02d}-{val_loss:.3f}.keras"); a whole model to a .keras file, or with
    save_weights_only its weights (model.save_weights). save_best_only saves when `monitor`
    improves (mode "min", "max", or "auto": as Keras 3, the metric's own direction, up for the
    accuracies, precision and recall, down for the loss and the errors)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        self.filepath = _os.fspath(filepath)
        if save_freq != "epoch":
            raise ValueError(f"ModelCheckpoint: save_freq={save_freq!r}; multifit saves at each epoch's end "
                             f"(save_freq='epoch')")
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"ModelCheckpoint: mode={mode!r}; expected 'auto', 'min' or 'max'")
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError(f"ModelCheckpoint: {self.filepath}: a whole model is saved to a .keras file "
                             f"(or give save_weights_only=True)")
        if save_weights_only and self.filepath.endswith(".h5") and not self.filepath.endswith(".weights.h5"):
            raise ValueError(f"ModelCheckpoint: {self.filepath}: Keras 3's weights file is named NAME.weights.h5 "
                             f"(any other name but an .h5 one is multifit's weights file)")
        self.monitor, self.verbose = monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.greater = None if mode == "auto" else mode == "max"  # auto: at the first fit, from the model
        self.best = initial_value_threshold

    def on_train_begin(self, logs=None):
        if self.greater is None:  # the spec reader's rule, which EarlyStopping's auto mode follows too
            self.greater = self.model._ensure_session().maximizes(self.monitor)
        if self.best is None:
            self.best = -_math.inf if self.greater else _math.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        said = f"\nEpoch {epoch + 1}: "  # Keras's messages, with verbose
        if self.save_best_only:
            value = logs.get(self.monitor)
            if value is None or _math.isnan(value):
                _warnings.warn(f"Can save best model only with {self.monitor} available, skipping.", stacklevel=2)
                return
            if not (value > self.best if self.greater else value < self.best):
                if self.verbose:
                    print(f"{said}{self.monitor} did not improve from {self.best:.5f}")
                return
            said += f"{self.monitor} improved from {self.best:.5f} to {value:.5f}, "
            self.best = value
        if self.verbose:
            print(f"{said}saving model to {path}")
        if _os.path.dirname(path):  # Keras makes the folder
            _os.makedirs(_os.path.dirname(path), exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class CSVLogger(Callback):
    """keras.callbacks.CSVLogger: a row per epoch, "epoch" then the logs' keys sorted, as Keras writes."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.separator, self.append = _os.fspath(filename), separator, append
        self.keys, self.header, self.file, self.writer = None, True, None, None

    def on_train_begin(self, logs=None):
        # a file appended to keeps its header, unless it is empty
        self.header = not (self.append and _os.path.exists(self.filename) and _os.path.getsize(self.filename) > 0)
        self.file = open(self.filename, "a" if self.append else "w", newline="", encoding="utf-8")
        self.writer = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.writer is None:
            self.keys = sorted(logs)
            if not any(k.startswith("val_") for k in self.keys):  # Keras's: val_ columns, "NA" without validation
                self.keys += ["val_" + k for k in self.keys]
            self.writer = _csv.DictWriter(self.file, fieldnames=["epoch"] + self.keys, delimiter=self.separator)
            if self.header:
                self.writer.writeheader()
        self.writer.writerow({"epoch": epoch, **{k: logs.get(k, "NA") for k in self.keys}})
        self.file.flush()

    def on_train_end(self, logs=None):
        if self.file:
            self.file.close()
        self.file, self.writer = None, None


class LambdaCallback(Callback):
    """keras.callbacks.LambdaCallback of the epoch and train hooks (functions of (epoch, logs) and
    (logs))."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None, **batch):
        super().__init__()
        if batch:
            raise TypeError(f"LambdaCallback: {', '.join(sorted(batch))}: multifit calls the epoch and train "
                            f"hooks only (a step's hook would run in every step)")
        for name, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_train_begin", on_train_begin), ("on_train_end", on_train_end)):
            if fn is not None:
                setattr(self, name, fn)


class ProgbarLogger(Callback):
    """keras.callbacks.ProgbarLogger, which fit adds for verbose 1 ("auto") and 2 where the callbacks
    have none: "Epoch 1/5" as an epoch begins (of several), and as it ends Keras 3's line of the
    epoch (progbar_line); verbose 1 as a bar redrawn over itself while the epoch runs (`on_step`,
    from the C++ fit at most every 50 ms: the steps, the time left and a step's time; the logs come
    with the epoch's end), then finished."""

    def __init__(self, verbose=1):
        super().__init__()
        self.verbose = verbose
        self.started, self.drawn = 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        if self.params["epochs"] > 1:  # Keras says the epoch only when there are several
            print(f"Epoch {epoch + 1}/{self.params['epochs']}", flush=True)
        self.started, self.drawn = _time.perf_counter(), 0  # drawn: the widest line drawn over

    def on_step(self, step, steps):
        """Keras's Progbar while an epoch runs: "\r7/19 ━━━━━━━              6s 508ms/step"."""
        if self.verbose != 1:
            return
        seconds = _time.perf_counter() - self.started
        left = int(seconds / step * (steps - step))  # the time left, whole seconds
        shown = (f"{left // 3600}:{left % 3600 // 60:02}:{left % 60:02}" if left >= 3600 else
                 f"{left // 60}:{left % 60:02}" if left > 60 else f"{left}s")  # Keras's forms
        filled = 20 * step // steps
        line = f"{step}/{steps} {'━' * filled}{' ' * (20 - filled)} {shown}{_per_step(seconds / step)}"
        print("\r" + line.ljust(self.drawn), end="", flush=True)  # over all of the last one
        self.drawn = max(self.drawn, len(line))

    def on_epoch_end(self, epoch, logs=None):
        line = progbar_line(self.params["steps"], _time.perf_counter() - self.started, logs or {}, self.verbose)
        print(("\r" + line.ljust(self.drawn)) if self.drawn else line, flush=True)


def keras_order(keys):
    """Keras 3's order of a fit's logs: each metric and the loss in name order, then the "val_"
    ones, then the learning rate."""
    trained = sorted(k for k in keys if not k.startswith("val_") and k != "learning_rate")
    return trained + sorted(k for k in keys if k.startswith("val_")) + [k for k in keys if k == "learning_rate"]


def progbar_line(steps, seconds, logs, verbose):
    """keras.utils.Progbar's last line of `steps` steps that took `seconds`: verbose 2's "24/24 - 0s -
    12ms/step - accuracy: 0.9100 - loss: 0.2500", verbose 1's with the finished bar in place of the
    first dash; the logs in Keras's order, 4 decimals (4 significant digits below 1e-3)."""
    steps = max(1, steps)
    values = "".join(f" - {k}: {logs[k]:.4f}" if abs(logs[k]) > 1e-3 else f" - {k}: {logs[k]:.4e}"
                     for k in keras_order(logs))
    if verbose == 2:
        return f"{steps}/{steps} - {seconds:.0f}s -{_per_step(seconds / steps)}{values}"
    return f"{steps}/{steps} {'━' * 20} {seconds:.0f}s{_per_step(seconds / steps)}{values}"


def _per_step(seconds):
    """keras.utils.Progbar's time per step: " 12ms/step", " 2s/step", " 850us/step"."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/step"
    return f" {seconds * 1e6:.0f}us/step"


class LearningRateScheduler(Callback):
    """keras.callbacks.LearningRateScheduler: at each epoch's start the optimizer's learning rate
    becomes schedule(epoch, rate) (or schedule(epoch), Keras's older form), a float; each epoch's
    logs get the rate it trained with ("learning_rate"). Not with a rate that is a schedule."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            rate = self.schedule(epoch, optimizer.learning_rate)
        except TypeError:  # schedule(epoch): Keras's older API
            rate = self.schedule(epoch)
        if not isinstance(rate, (float, _np.floating)):  # Keras's check and words
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {rate}")
        optimizer.learning_rate = rate
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {rate}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = self.model.optimizer.learning_rate


class TensorBoard(Callback):
    """keras.callbacks.TensorBoard of the epochs: each epoch's logs and the optimizer's learning rate
    as scalars in event files that TensorBoard reads, where Keras 3 writes them (log_dir/train and,
    with validation, log_dir/validation; tags "epoch_loss", "epoch_accuracy", "epoch_learning_rate",
    ..., the val_ ones without their prefix; step the epoch), written by tensorboardX (pip install
    tensorboardX). What needs a step's hook or TensorFlow's graph
    (update_freq other than "epoch", profiling, histograms, images, embeddings, the steps per second)
    is refused; write_graph is taken and draws nothing (multifit has no graph to show)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        unsupported = {"histogram_freq": (histogram_freq, 0), "write_images": (write_images, False),
                       "write_steps_per_second": (write_steps_per_second, False),
                       "update_freq": (update_freq, "epoch"), "profile_batch": (profile_batch, 0),
                       "embeddings_freq": (embeddings_freq, 0), "embeddings_metadata": (embeddings_metadata, None)}
        for name, (given, default) in unsupported.items():
            if given != default:
                raise ValueError(f"TensorBoard: {name}={given!r}; multifit writes each epoch's logs only, so "
                                 f"{name} must stay {default!r}")
        self.log_dir, self.writers = _os.fspath(log_dir), {}

    def on_train_begin(self, logs=None):
        try:
            from tensorboardX import SummaryWriter
        except ImportError as e:
            raise ImportError("TensorBoard needs tensorboardX to write its event files: pip install tensorboardX") from e
        self._writer_class = SummaryWriter

    def _writer(self, side):
        if side not in self.writers:  # made at its first scalar, as Keras's
            self.writers[side] = self._writer_class(_os.path.join(self.log_dir, side))
        return self.writers[side]

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        if self.model is not None and self.model.optimizer is not None:  # Keras's _collect_learning_rate
            logs["learning_rate"] = self.model.optimizer.learning_rate
        for key, value in logs.items():
            side, name = ("validation", key[4:]) if key.startswith("val_") else ("train", key)
            self._writer(side).add_scalar("epoch_" + name, float(value), epoch)
        for writer in self.writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        for writer in self.writers.values():
            writer.close()
        self.writers = {}


class TerminateOnNaN(Callback):
    """keras.callbacks.TerminateOnNaN: multifit's fit always ends a model whose loss or weights are
    not finite, at that epoch's end, with status "diverged" and a RuntimeWarning naming where; taken
    for Keras's scripts, it adds nothing to that."""


_ALL = ("Callback", "EarlyStopping", "ReduceLROnPlateau", "ModelCheckpoint", "CSVLogger", "LambdaCallback",
        "LearningRateScheduler", "ProgbarLogger", "TensorBoard", "TerminateOnNaN")


def __getattr__(name):  # keras.callbacks.BackupAndRestore and the like: say what multifit has
    raise AttributeError(f"module '{__name__}' has no attribute '{name}': multifit's callbacks are {', '.join(_ALL)}")
