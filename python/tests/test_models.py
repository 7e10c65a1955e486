"""Sequential from Python against the command line: the same spec, seed and data give the same
numbers bit for bit; the data is read in place; Keras's History, evaluate, predict and weights."""
import resource

import numpy as np
import pytest

import multifit
from conftest import program_epochs, small_model


def test_build_info_says_what_the_build_is():
    info = multifit.build_info()
    assert set(info) == {"version", "commit", "cuda", "mpi", "description"}
    assert info["version"] == multifit.__version__
    assert ("with CUDA" in info["description"]) == info["cuda"]


def test_fit_gives_the_command_lines_numbers_bit_for_bit(binary_task, program, tmp_path):
    x, y = binary_task
    model = small_model()
    history = model.fit(x, y, epochs=3, batch_size=32, validation_split=0.25, verbose=0)
    epochs = program_epochs(program, model, x, y, tmp_path)  # the same spec and rows, by `multifit train`
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        assert history.history[key] == [e[key] for e in epochs], key


def test_history_has_kerass_keys_and_early_stopping_stops(binary_task):
    x, y = binary_task
    model = small_model()
    stop = multifit.callbacks.EarlyStopping(monitor="val_loss", patience=0, min_delta=10.0)
    history = model.fit(x, y, epochs=5, validation_split=0.2, callbacks=[stop], verbose=0)
    assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]  # Keras 3's order
    # The first epoch improves on nothing yet; the second does not improve by 10: Keras stops there.
    assert history.epoch == [0, 1] and history.stopped_epoch == 2


def test_a_second_fit_goes_on_from_the_first(binary_task):
    x, y = binary_task
    once = small_model()
    once.fit(x, y, epochs=2, verbose=0)
    twice = small_model()
    twice.fit(x, y, epochs=1, verbose=0)
    twice.fit(x, y, epochs=1, verbose=0)
    # Not the same numbers (each fit's epochs shuffle from epoch 0), but trained on: not the initial weights.
    fresh = small_model().get_weights()
    assert not np.array_equal(twice.get_weights()[0], fresh[0])
    assert twice.evaluate(x, y) < small_model().evaluate(x, y)


def test_float32_rows_are_read_in_place(binary_task):
    # 256 MiB of rows: a copy anywhere (in numpy's conversion or in C++) would raise the peak RSS by it.
    rows = 1 << 20
    x = np.ones((rows, 64), np.float32)
    y = np.zeros(rows, np.float32)
    model = multifit.Sequential([multifit.layers.Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", backend="cpu")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    model.fit(x, y, epochs=1, batch_size=4096, verbose=0)
    model.evaluate(x, y)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert grown < x.nbytes // 4, f"the peak grew by {grown} bytes for {x.nbytes} bytes of rows"


def test_other_dtypes_are_converted_and_give_the_same_numbers(binary_task):
    x, y = binary_task
    a = small_model().fit(x, y, epochs=1, verbose=0).history
    b = small_model().fit(x.astype(np.float64), y.astype(np.int64), epochs=1, verbose=0).history
    assert a == b


def test_evaluate_predict_and_weights(binary_task):
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=2, verbose=0)
    loss, accuracy = model.evaluate(x, y)
    p = model.predict(x)
    assert p.shape == (600, 1) and p.dtype == np.float32
    # The accuracy is that of the predictions thresholded at 0.5, as Keras's binary accuracy.
    assert accuracy == pytest.approx(np.mean((p[:, 0] > 0.5) == (y > 0.5)), abs=1e-12)
    # The loss is the mean binary cross-entropy of the predictions (Keras clips them at 1e-7).
    q = np.clip(p[:, 0].astype(np.float64), 1e-7, 1 - 1e-7)
    assert loss == pytest.approx(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)), rel=1e-4)
    weights = model.get_weights()
    assert [w.shape for w in weights] == [(20, 16), (16,), (16,), (16,), (16,), (16,), (16, 1), (1,)]
    other = small_model(seed=9)
    other.set_weights(weights)
    assert np.array_equal(other.predict(x), p)


def test_save_weights_round_trip(binary_task, tmp_path):
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    model.save_weights(tmp_path / "m.weights")
    other = small_model(seed=5)
    other.load_weights(tmp_path / "m.weights")
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), other.get_weights()))


def test_one_hot_targets_and_softmax(binary_task):
    x, y = binary_task
    onehot = np.eye(2, dtype=np.float32)[y.astype(int)]
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(2, activation="softmax")])
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"], backend="cpu")
    model.fit(x, onehot, epochs=2, verbose=0)
    p = model.predict(x)
    assert p.shape == (600, 2) and np.allclose(p.sum(axis=1), 1, atol=1e-6)


def test_a_metric_read_against_each_target_waits_for_the_data(binary_task):
    """Keras takes categorical cross-entropy's labels one-hot, so mse beside it compares each output
    with its own column; a spec without "targets" takes class indices, where mse cannot be read. The
    model, compiled before any data, builds, predicts and trains on one-hot labels, and its mse is
    the mean squared difference of the probabilities and the labels."""
    x, y = binary_task
    onehot = np.eye(2, dtype=np.float32)[y.astype(int)]
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(2, activation="softmax")])
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy", "mse"], backend="cpu")
    assert model.predict(x).shape == (600, 2)
    model.fit(x, onehot, epochs=1, verbose=0)
    loss, accuracy, mse = model.evaluate(x, onehot)
    assert mse == pytest.approx(float(np.mean((model.predict(x) - onehot) ** 2)), rel=1e-5)
    with pytest.raises(ValueError, match="mse compares each output with its own target"):
        model.evaluate(x, y)  # class indices: mse has nothing to compare an output with


def test_a_keras_file_round_trip_without_keras(binary_task, tmp_path):
    pytest.importorskip("h5py", reason=".keras files need h5py")
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = multifit.load_model(tmp_path / "m.keras", backend="cpu", threads=1)
    assert [l["type"] for l in loaded.spec()["layers"]] == [l["type"] for l in model.spec()["layers"]]
    assert all(np.array_equal(a, b) for a, b in zip(loaded.get_weights(), model.get_weights()))
    assert np.array_equal(loaded.predict(x), model.predict(x))
    with pytest.raises(ValueError, match="give a .keras file name"):
        model.save(tmp_path / "m.h5")


def test_validation_data_is_the_split_of_the_rows_put_together(binary_task):
    x, y = binary_task
    joined = small_model().fit(x, y, epochs=2, validation_split=0.25, verbose=0).history
    apart = small_model().fit(x[:450], y[:450], epochs=2, validation_data=(x[450:], y[450:]), verbose=0).history
    assert apart == joined
    for rows in range(1, 600, 37):  # the split takes exactly the validation rows, whatever the rounding
        history = small_model().fit(x[:rows], y[:rows], epochs=1, validation_data=(x[rows:], y[rows:]), verbose=0)
        assert history.samples == rows and "val_loss" in history.history
    with pytest.raises(ValueError, match=r"validation_data must be \(x_val, y_val\) or \(x_val, y_val, val_sample_weight\)"):
        small_model().fit(x, y, validation_data=(x, y, y, y))


def test_compile_again_keeps_the_weights(binary_task):
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    before = model.predict(x)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu", threads=1)
    assert np.array_equal(model.predict(x), before)


def test_unnamed_models_are_named_as_keras_names_them():
    a, b = multifit.Sequential(), multifit.Sequential()
    assert a.name.startswith("sequential") and b.name.startswith("sequential_") and a.name != b.name


def test_an_image_input_of_one_channel_and_a_first_layers_input_shape():
    rng = np.random.default_rng(2)
    x = rng.random((64, 6, 6), dtype=np.float32)
    y = rng.integers(0, 3, 64)
    for first in ([multifit.layers.Input(shape=(6, 6)), multifit.layers.Flatten()],
                  [multifit.layers.Flatten(input_shape=(6, 6))]):
        model = multifit.Sequential(first + [multifit.layers.Dense(3, activation="softmax")])
        model.compile(loss="sparse_categorical_crossentropy", backend="cpu")
        assert model.spec()["input"] == 36 and model.spec()["input_shape"] == [6, 6, 1]
        assert list(model.fit(x, y, verbose=0).history) == ["loss"]  # no metrics asked: none, as in Keras


def test_a_fit_that_diverges_warns():
    # finite inputs whose squared error overflows float32 (NaN itself is refused: test_errors.py)
    x, y = np.full((64, 4), 1e20, np.float32), np.ones(64, np.float32)
    model = multifit.Sequential([multifit.layers.Input(shape=(4,)), multifit.layers.Dense(1)])
    model.compile(loss="mse", optimizer="sgd", backend="cpu", threads=1)
    with pytest.warns(RuntimeWarning, match="diverged: .*the training loss is inf"):
        history = model.fit(x, y, epochs=1, verbose=0)
    assert history.status == "diverged"


def test_weights_files_by_name(binary_task, tmp_path):
    """NAME.weights.h5 is Keras 3's layout (h5py opens it), another name multifit's file; another
    .h5 name is refused, as Keras refuses it."""
    pytest.importorskip("h5py", reason="Keras's weights files need h5py")
    import h5py

    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    model.save_weights(tmp_path / "m.weights.h5")
    with h5py.File(tmp_path / "m.weights.h5") as h5:
        assert sorted(h5["layers"]) == ["batch_normalization", "dense", "dense_1", "dropout"]
        assert np.array_equal(h5["layers/dense/vars/0"][()], model.get_weights()[0])
    other = small_model(seed=9)
    other.load_weights(tmp_path / "m.weights.h5")
    assert all(np.array_equal(a, b) for a, b in zip(other.get_weights(), model.get_weights()))
    with pytest.raises(ValueError, match="Keras 3's weights file is named NAME.weights.h5"):
        model.save_weights(tmp_path / "m.h5")
    with pytest.raises(FileNotFoundError, match="no such file"):
        model.load_weights(tmp_path / "missing.weights.h5")


def test_precision_and_recall_are_ratios_of_counts_over_every_row(binary_task):
    """keras.metrics.Precision and Recall at 0.5: true positives over predicted (precision) or actual
    (recall) positives, counted over all the rows evaluated, not a mean of batches' ratios."""
    from multifit import keras
    x, y = binary_task
    model = small_model()
    model.compile(optimizer="rmsprop", loss="binary_crossentropy", backend="cpu", threads=1,
                  metrics=["precision", keras.metrics.Recall(name="rec")])
    model.fit(x, y, epochs=1, verbose=0)
    predicted = model.predict(x, verbose=0)[:, 0] > 0.5
    got = model.evaluate(x, y, verbose=0, return_dict=True)
    true_positives = float(np.sum(predicted & (y == 1)))
    assert got["precision"] == true_positives / predicted.sum()
    assert got["rec"] == true_positives / (y == 1).sum()


def _keras_auc(y, p):
    """keras.metrics.AUC()'s formula in numpy: Keras's bucket per prediction (ceil(199 p) - 1, in
    float32), the counts at or above each of the 200 thresholds, the ROC's trapezoids."""
    buckets = np.maximum(np.ceil(np.clip(p, 0, 1).astype(np.float32) * np.float32(199)) - 1, 0).astype(int)
    positives = np.bincount(buckets[y != 0], minlength=200)[::-1].cumsum()[::-1]
    negatives = np.bincount(buckets[y == 0], minlength=200)[::-1].cumsum()[::-1]
    recall, fpr = positives / positives[0], negatives / negatives[0]
    return float(np.sum((fpr[:-1] - fpr[1:]) * (recall[:-1] + recall[1:]) / 2))


def test_auc_is_kerass_roc_area_over_every_row(binary_task, tmp_path):
    """keras.metrics.AUC(): the area under the ROC curve at Keras's 200 thresholds, over all the
    rows evaluated (a histogram of the predictions kept beside the sums, not a mean of batches');
    auto mode maximizes it; a model of several outputs is refused by name."""
    from multifit import keras
    x, y = binary_task
    model = small_model()
    model.compile(optimizer="rmsprop", loss="binary_crossentropy", backend="cpu", threads=1,
                  metrics=[keras.metrics.AUC(), "accuracy"])
    by_auc = keras.callbacks.ModelCheckpoint(tmp_path / "m.weights.h5", monitor="val_auc", save_best_only=True,
                                             save_weights_only=True)
    history = model.fit(x, y, epochs=2, batch_size=16, validation_split=0.25, callbacks=[by_auc], verbose=0)
    assert by_auc.greater  # auto mode: AUC goes up, as Keras's _direction says
    assert all(0.5 < auc <= 1 for auc in history.history["auc"] + history.history["val_auc"])
    got = model.evaluate(x, y, verbose=0, return_dict=True)
    assert got["auc"] == pytest.approx(_keras_auc(y, model.predict(x, verbose=0)[:, 0]), rel=1e-12)
    wide = keras.Sequential([keras.Input(shape=(x.shape[1],)), keras.layers.Dense(2, activation="sigmoid")])
    with pytest.raises(ValueError, match=r"auc reads one output \(a binary classifier's\), but the model has 2"):
        wide.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"], backend="cpu")
        wide.fit(x, np.column_stack([y, y]), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="curve"):
        model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(curve="PR")])
