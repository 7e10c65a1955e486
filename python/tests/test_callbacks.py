"""Keras's callbacks in multifit's fit: a Callback subclass's hooks run between epochs with Keras's
logs and order, stop_training ends the fit, and ModelCheckpoint, CSVLogger and LambdaCallback do what
Keras's do; a step's hook, and an error inside a hook, are handled as a user expects."""
import csv

import numpy as np
import pytest

import multifit
from multifit import keras

from conftest import small_model


class Recorder(keras.callbacks.Callback):
    """Every hook called, in order, with the logs it got."""

    def __init__(self, stop_after=None):
        super().__init__()
        self.calls, self.stop_after = [], stop_after

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", None))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, dict(logs)))
        if self.stop_after is not None and epoch + 1 == self.stop_after:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.calls.append(("train_end", dict(logs)))


def test_the_hooks_run_in_keras_order_with_the_history_as_logs(binary_task):
    x, y = binary_task
    model, recorder = small_model(), Recorder()
    history = model.fit(x, y, epochs=3, validation_split=0.25, callbacks=[recorder], verbose=0)
    names = [c[0] if c[0] in ("train_begin", "train_end") else f"{c[0]} {c[1]}" for c in recorder.calls]
    assert names == ["train_begin", "epoch_begin 0", "epoch_end 0", "epoch_begin 1", "epoch_end 1", "epoch_begin 2",
                     "epoch_end 2", "train_end"]
    logs = [c[2] for c in recorder.calls if c[0] == "epoch_end"]
    assert sorted(logs[0]) == sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    for key, values in history.history.items():
        assert [log[key] for log in logs] == values
    assert recorder.calls[-1][1] == logs[-1]  # on_train_end gets the last epoch's logs
    assert recorder.model is model and recorder.params["epochs"] == 3


def test_stop_training_ends_the_fit_after_that_epoch(binary_task):
    x, y = binary_task
    model = small_model()
    history = model.fit(x, y, epochs=6, callbacks=[Recorder(stop_after=2)], verbose=0)
    assert len(history.history["loss"]) == 2 and history.status == "ok"
    assert model.fit(x, y, epochs=1, verbose=0).history["loss"]  # trains again afterwards


def test_model_checkpoint_saves_the_best_epochs_as_they_were(binary_task, tmp_path):
    pytest.importorskip("h5py", reason=".keras files need h5py")
    x, y = binary_task
    model, kept = small_model(), {}
    keep = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: kept.update({epoch: model.get_weights()}))
    checkpoint = keras.callbacks.ModelCheckpoint(tmp_path / "checkpoints" / "m-{epoch:02d}.keras",
                                                 monitor="val_loss", save_best_only=True)  # the folder made
    history = model.fit(x, y, epochs=4, validation_split=0.25, callbacks=[keep, checkpoint], verbose=0)
    losses = history.history["val_loss"]
    best = [e for e in range(4) if losses[e] == min(losses[:e + 1])]  # the epochs that improved
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [f"m-{e + 1:02d}.keras" for e in best]
    saved = multifit.load_model(tmp_path / "checkpoints" / f"m-{best[-1] + 1:02d}.keras", backend="cpu")
    assert all(np.array_equal(a, b) for a, b in zip(saved.get_weights(), kept[best[-1]]))
    with pytest.raises(ValueError, match="a whole model is saved to a .keras file"):
        keras.callbacks.ModelCheckpoint(tmp_path / "m.h5")
    # auto mode takes each metric's direction, as Keras 3's: up for precision, down for the loss
    model.compile(optimizer="rmsprop", loss="binary_crossentropy", metrics=["precision"], backend="cpu", threads=1)
    by_precision = keras.callbacks.ModelCheckpoint(tmp_path / "p.weights.h5", monitor="val_precision",
                                                   save_best_only=True, save_weights_only=True)
    model.fit(x, y, epochs=1, validation_split=0.25, callbacks=[by_precision, checkpoint], verbose=0)
    assert by_precision.greater and not checkpoint.greater


def test_csv_logger_writes_keras_rows(binary_task, tmp_path):
    x, y = binary_task
    path = tmp_path / "log.csv"
    history = small_model().fit(x, y, epochs=2, validation_split=0.25,
                                callbacks=[keras.callbacks.CSVLogger(path)], verbose=0)
    rows = list(csv.DictReader(open(path)))
    assert list(rows[0]) == ["epoch", "accuracy", "loss", "val_accuracy", "val_loss"]  # Keras's: sorted
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert [float(r["val_loss"]) for r in rows] == pytest.approx(history.history["val_loss"], rel=1e-12)
    small_model().fit(x, y, epochs=1, callbacks=[keras.callbacks.CSVLogger(path, append=True)], verbose=0)
    assert len(list(csv.DictReader(open(path)))) == 3  # appended under the same header


def test_a_step_hook_and_an_error_in_a_hook(binary_task):
    x, y = binary_task

    class PerStep(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            pass

    model = small_model()
    with pytest.raises(TypeError, match="defines on_train_batch_end: multifit calls the epoch and train hooks"):
        model.fit(x, y, callbacks=[PerStep()], verbose=0)
    with pytest.raises(TypeError, match="on_train_batch_end"):
        keras.callbacks.LambdaCallback(on_train_batch_end=print)

    def fail(epoch, logs):
        raise RuntimeError(f"the user's hook failed at epoch {epoch}")

    with pytest.raises(RuntimeError, match="the user's hook failed at epoch 0"):
        model.fit(x, y, epochs=3, callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=fail)], verbose=0)
    assert len(model.fit(x, y, epochs=2, verbose=0).history["loss"]) == 2  # the model trains on
    with pytest.raises(AttributeError, match="multifit's callbacks are Callback, EarlyStopping"):
        keras.callbacks.BackupAndRestore


def _scalars(folder):
    """{tag: [(step, value)]} of the event files in `folder`: TFRecords (a length, its CRC, the
    record, its CRC) of Event protos, read with tensorboardX's proto."""
    import glob
    import struct

    from tensorboardX.proto import event_pb2

    scalars = {}
    for path in sorted(glob.glob(f"{folder}/events.out.tfevents.*")):
        data, at = open(path, "rb").read(), 0
        while at < len(data):
            (length,) = struct.unpack_from("<Q", data, at)
            event = event_pb2.Event.FromString(data[at + 12:at + 12 + length])
            at += 12 + length + 4
            for value in event.summary.value:
                scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    return scalars


def test_tensorboard_writes_each_epochs_logs_where_keras_does(binary_task, tmp_path):
    """log_dir/train and log_dir/validation hold "epoch_loss", "epoch_accuracy"... at step epoch, the
    History's values (as float32, the event's simple_value), and train the learning rate; without
    validation rows no validation folder; what needs a step's hook is refused."""
    pytest.importorskip("tensorboardX", reason="TensorBoard writes through tensorboardX")
    x, y = binary_task
    history = small_model().fit(x, y, epochs=3, validation_split=0.25, verbose=0,
                                callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path / "logs")])
    train, validation = _scalars(tmp_path / "logs" / "train"), _scalars(tmp_path / "logs" / "validation")
    assert set(train) == {"epoch_loss", "epoch_accuracy", "epoch_learning_rate"}
    assert set(validation) == {"epoch_loss", "epoch_accuracy"}
    assert train["epoch_learning_rate"] == [(e, pytest.approx(0.001)) for e in range(3)]  # rmsprop's default
    for key in ("loss", "accuracy"):
        assert train["epoch_" + key] == [(e, pytest.approx(v, rel=1e-6)) for e, v in enumerate(history.history[key])]
        assert validation["epoch_" + key] == [(e, pytest.approx(v, rel=1e-6))
                                              for e, v in enumerate(history.history["val_" + key])]
    small_model().fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path / "alone")])
    assert sorted(p.name for p in (tmp_path / "alone").iterdir()) == ["train"]
    with pytest.raises(ValueError, match="TensorBoard: update_freq='batch'; multifit writes each epoch's logs only"):
        keras.callbacks.TensorBoard(update_freq="batch")


def test_verbose_prints_keras_epoch_lines(binary_task, capsys):
    """verbose=2 and 1 print Keras 3's lines: "Epoch i/N", then the steps, the time and the logs in
    Keras's order (each metric, the val_ ones, in name order), 4 decimals; verbose=0 nothing."""
    import re

    x, y = binary_task
    model = small_model()
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy", "mse"], backend="cpu")
    history = model.fit(x, y, epochs=2, batch_size=30, validation_split=0.25, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    step = r"\d+(us|ms|s)/step"
    values = " - ".join(f"{k}: {history.history[k][1]:.4f}" for k in
                        ["accuracy", "loss", "mse", "val_accuracy", "val_loss", "val_mse"])
    assert re.fullmatch(rf"15/15 - \d+s - {step} - " + re.escape(values), lines[3]), lines[3]
    model.fit(x, y, epochs=1, batch_size=30, verbose=1)  # one epoch: Keras prints no "Epoch 1/1"
    assert re.fullmatch(rf"20/20 ━{{20}} \d+s {step} - accuracy: .*", capsys.readouterr().out.splitlines()[0])
    model.fit(x, y, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""
    # While an epoch runs, verbose 1 redraws its bar over itself, at most every 50 ms: steps of 2048
    # rows through Dense(1024) take longer than that on any CPU
    wide = keras.Sequential([keras.Input(shape=(1024,)), keras.layers.Dense(1024, activation="relu"),
                             keras.layers.Dense(1, activation="sigmoid")])
    wide.compile(optimizer="sgd", loss="binary_crossentropy", backend="cpu", threads=1)
    rows = np.random.default_rng(1).normal(size=(8192, 1024)).astype(np.float32)
    wide.fit(rows, (rows[:, 0] > 0).astype(np.float32), epochs=1, batch_size=2048, verbose=1)
    drawn = capsys.readouterr().out
    assert re.fullmatch(r"(\r[123]/4 ━{5,15} {5,15} \d+s \d+(us|ms|s)/step)+\r4/4 ━{20} \d+s .*\n", drawn), drawn
    loss, accuracy, mse = model.evaluate(x, y)  # Keras's default: its bar's last line, 32 rows a step
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(rf"19/19 ━{{20}} \d+s {step} - accuracy: {accuracy:.4f} - loss: {loss:.4f} - mse: {mse:.4f}",
                        line), line
    model.predict(x)
    assert re.fullmatch(rf"19/19 ━{{20}} \d+s {step}", capsys.readouterr().out.strip())
    model.evaluate(x, y, verbose=0), model.predict(x, verbose=0), model(x)
    assert capsys.readouterr().out == ""


def test_the_epoch_a_cpp_callback_ends_with_reaches_the_hooks_and_logs_are_shared(binary_task, tmp_path):
    """EarlyStopping (in C++) ends the fit after an epoch: that epoch's on_epoch_end still runs, then
    on_train_end with its logs. The callbacks share each epoch's logs, as Keras's do: a key one adds
    reaches those after it (CSVLogger) and the History."""
    x, y = binary_task

    class AddF1(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_f1"] = 0.5 + epoch

    recorder = Recorder()
    stop = keras.callbacks.EarlyStopping("loss", patience=1, min_delta=10.0)  # monitor by position
    history = small_model().fit(x, y, epochs=10, validation_split=0.25, verbose=0,
                                callbacks=[stop, AddF1(), recorder, keras.callbacks.CSVLogger(tmp_path / "log.csv")])
    ends = [c[1] for c in recorder.calls if c[0] == "epoch_end"]
    assert ends == history.epoch == [0, 1] and recorder.calls[-1][0] == "train_end"
    assert recorder.calls[-1][1]["val_f1"] == 1.5 and history.history["val_f1"] == [0.5, 1.5]
    assert [float(r["val_f1"]) for r in csv.DictReader(open(tmp_path / "log.csv"))] == [0.5, 1.5]


def test_train_on_batch_carries_the_optimizer(binary_task):
    """Batches no larger than the fit's batch size are steps of one optimizer: two of 16 rows give the
    weights of a fit of those 32 rows at batch size 16."""
    x, y = binary_task
    steps, fitted = small_model(), small_model()
    steps.train_on_batch(x[:16], y[:16])
    steps.train_on_batch(x[16:32], y[16:32])
    fitted.fit(x[:32], y[:32], batch_size=16, epochs=1, shuffle=False, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(steps.get_weights(), fitted.get_weights()))


def test_a_rejected_call_leaves_the_model_usable_and_steps_count_the_trained_rows(binary_task):
    x, y = binary_task
    onehot = np.eye(2, dtype=np.float32)[y.astype(int)]
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(2, activation="softmax")])
    model.compile(loss="categorical_crossentropy", metrics=["accuracy", "mse"], backend="cpu")
    model.fit(x, onehot, verbose=0)
    with pytest.raises(ValueError, match="mse compares each output"):
        model.evaluate(x, y)  # class indices
    assert model.predict(x).shape == (600, 2) and len(model.evaluate(x, onehot)) == 3
    history = model.fit(x[:121], onehot[:121], batch_size=32, validation_split=0.2, verbose=0)
    assert history.params["steps"] == 3  # 96 rows trained, Keras's split


def test_hooks_around_a_fit_with_nothing_to_train(binary_task):
    x, y = binary_task
    recorder = Recorder()
    small_model().fit(x, y, epochs=2, initial_epoch=2, callbacks=[recorder], verbose=0)
    assert [c[0] for c in recorder.calls] == ["train_begin", "train_end"]  # as Keras calls them


def test_learning_rate_scheduler_trains_as_setting_the_rate_between_fits(binary_task):
    """LearningRateScheduler sets each epoch's rate before it trains and logs it: the same weights as
    one-epoch fits with model.optimizer.learning_rate set before each (no shuffle, no dropout, so
    the epochs see the same batches); Keras's older schedule(epoch) form is taken too."""
    x, y = binary_task
    rates = [0.01, 0.005, 0.0025]
    scheduled = small_model(dropout=0.0)
    seen = []

    def schedule(epoch, rate):
        seen.append(rate)
        return rates[epoch]
    history = scheduled.fit(x, y, epochs=3, shuffle=False, verbose=0,
                            callbacks=[keras.callbacks.LearningRateScheduler(schedule)])
    assert history.history["learning_rate"] == pytest.approx(rates, rel=1e-7)  # float32's
    assert seen[0] == pytest.approx(0.001) and seen[1:] == pytest.approx(rates[:2], rel=1e-7)
    stepped = small_model(dropout=0.0)
    for rate in rates:
        stepped.optimizer.learning_rate = rate
        stepped.fit(x, y, epochs=1, shuffle=False, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(scheduled.get_weights(), stepped.get_weights()))
    old_form = small_model(dropout=0.0)
    old_form.fit(x, y, epochs=3, shuffle=False, verbose=0,
                 callbacks=[keras.callbacks.LearningRateScheduler(lambda epoch: rates[epoch])])
    assert all(np.array_equal(a, b) for a, b in zip(scheduled.get_weights(), old_form.get_weights()))


def test_the_learning_rate_is_kept_and_refused_where_keras_refuses_it(binary_task):
    """model.optimizer is None before compile; a rate set before a fit is the one it trains with (0:
    the kernel does not move); a schedule's output that is not a float, a negative rate, and a rate
    that is a schedule are ValueErrors."""
    x, y = binary_task
    assert multifit.Sequential([multifit.layers.Dense(1)]).optimizer is None
    model = small_model(dropout=0.0)
    kernel = model.layers[0].get_weights()[0]
    model.optimizer.learning_rate = 0.0
    model.fit(x, y, epochs=1, verbose=0)
    assert model.optimizer.learning_rate == 0.0
    assert np.array_equal(model.layers[0].get_weights()[0], kernel)
    with pytest.raises(ValueError, match="should be a float. Got: 1"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(lambda e, r: 1)])
    with pytest.raises(ValueError, match="expected a finite number >= 0"):
        model.optimizer.learning_rate = -1.0
    decaying = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(1)])
    decaying.compile(optimizer=keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(0.01, 10, 0.9)),
                     loss="mse", backend="cpu")
    with pytest.raises(ValueError, match=r"rate is a schedule \(ExponentialDecay\)"):
        decaying.optimizer.learning_rate = 0.1
