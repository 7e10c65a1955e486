"""multifit.keras, shaped like keras: Keras users' snippets run with only the import changed, each
Keras object gives the spec its string or dict form gives (so the same numbers), and a name or an
argument multifit does not take is refused saying what it takes."""
import pickle

import numpy as np
import pytest

import multifit
from multifit import keras


@pytest.fixture
def rows():
    """1024 x 20 random rows and a binary label, as the Keras snippets' classifier takes them."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(1024, 20)).astype(np.float32)
    return x, (x[:, :3].sum(axis=1) > 0).astype(np.float32)


def test_a_binary_classifier_in_two_configs_with_saves(rows, tmp_path):
    pytest.importorskip("h5py", reason=".keras files need h5py")
    x, y = rows
    keras.utils.set_random_seed(42)
    for units, rate in ((32, 1e-3), (64, 3e-3)):
        model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(units, activation="relu"),
                                  keras.layers.Dense(1, activation="sigmoid")])
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=rate), loss="binary_crossentropy",
                      metrics=["accuracy"], backend="cpu")
        history = model.fit(x, y, epochs=3, batch_size=32, validation_split=0.2, verbose=0)
        assert history.history["val_accuracy"][-1] > 0.8, history.history
        model.save(tmp_path / f"m{units}.keras")
        loaded = keras.saving.load_model(tmp_path / f"m{units}.keras", backend="cpu")
        assert np.array_equal(loaded.predict(x), model.predict(x))


def test_a_keras_mlp_with_dropout_and_early_stopping(rows):
    x, y = rows
    y = np.where(np.random.default_rng(3).random(len(y)) < 0.3, 1 - y, y)  # noisy: the validation loss turns
    model = keras.models.Sequential([
        keras.Input(shape=(20,)),
        keras.layers.Dense(64, activation="relu", kernel_initializer=keras.initializers.HeNormal(),
                           kernel_regularizer=keras.regularizers.l2(1e-4)),
        keras.layers.Dropout(0.3),
        keras.layers.Dense(1, activation="sigmoid")])
    schedule = keras.optimizers.schedules.ExponentialDecay(3e-3, 50, 0.9)
    model.compile(optimizer=keras.optimizers.RMSprop(schedule), loss=keras.losses.BinaryCrossentropy(),
                  metrics=[keras.metrics.BinaryAccuracy(name="acc")], backend="cpu")
    stop = keras.callbacks.EarlyStopping(monitor="val_loss", patience=1, restore_best_weights=True)
    history = model.fit(x, y, epochs=30, batch_size=64, validation_split=0.25, callbacks=[stop], verbose=0)
    assert 1 < len(history.history["loss"]) < 30 and "val_acc" in history.history


def test_keras_objects_give_the_numbers_of_their_spec_forms(rows):
    """Each object's {"class_name", "config"} is read by the spec reader as its name or dict form: the
    same model trains to the same history and weights, bit for bit."""
    x, y = rows

    def trained(regularizer, initializer, optimizer, loss, metric):
        model = multifit.Sequential([multifit.layers.Input(shape=(20,)),
                                     multifit.layers.Dense(16, activation="tanh", kernel_regularizer=regularizer,
                                                           kernel_initializer=initializer),
                                     multifit.layers.Dense(1, activation="sigmoid")], seed=5)
        model.compile(optimizer=optimizer, loss=loss, metrics=[metric], backend="cpu", threads=1)
        return model.fit(x, y, epochs=2, validation_split=0.25, verbose=0).history, model.get_weights()

    objects = trained(keras.regularizers.L1L2(l1=1e-4), keras.initializers.RandomNormal(0.0, 0.1),
                      keras.optimizers.Nadam(2e-3, beta_2=0.99),
                      keras.losses.binary_crossentropy, keras.metrics.BinaryAccuracy())
    forms = trained({"name": "l1_l2", "l1": 1e-4, "l2": 0.0}, {"name": "random_normal", "mean": 0.0, "stddev": 0.1},
                    {"name": "nadam", "learning_rate": 2e-3, "beta_2": 0.99}, "binary_crossentropy", "binary_accuracy")
    assert objects[0] == forms[0]
    assert all(np.array_equal(a, b) for a, b in zip(objects[1], forms[1]))


def test_what_multifit_does_not_take_is_refused_saying_what_it_takes():
    with pytest.raises(AttributeError, match="multifit's metrics are AUC, BinaryAccuracy, CategoricalAccuracy"):
        keras.metrics.TopKCategoricalAccuracy()
    with pytest.raises(AttributeError, match="multifit's layers are Dense, Dropout, BatchNormalization"):
        keras.layers.Conv2D(8, 3)
    with pytest.raises(TypeError, match=r"Adam\(\) takes 1 positional argument\(s\) \(learning_rate\)"):
        keras.optimizers.Adam(1e-3, 0.9)
    with pytest.raises(TypeError, match="computed in multifit's kernels"):
        keras.losses.mean_squared_error(np.zeros(2), np.ones(2))
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="learning_rate"):  # the spec reader's "did you mean"
        model.compile(optimizer=keras.optimizers.Adam(lr=0.1), loss="mse", backend="cpu")


def test_set_random_seed_draws_the_same_initial_weights():
    def first_kernel():
        model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3)])
        model.compile(loss="mse", backend="cpu")
        return model.get_weights()[0]

    keras.utils.set_random_seed(7)
    a, b = first_kernel(), first_kernel()
    keras.utils.set_random_seed(8)
    c = first_kernel()
    keras.utils.set_random_seed(0)  # the package's default again, for the tests after this one
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_summary_is_keras_table_with_the_models_parameter_counts(capsys):
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.BatchNormalization(center=False), keras.layers.Dropout(0.2),
                              keras.layers.Dense(1, activation="sigmoid", use_bias=False)], name="clf")
    model.summary()  # before compile, as Keras allows
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == 'Model: "clf"' and "┃ Layer (type)" in lines[2] and "Param # ┃" in lines[2]
    rows = [line for line in lines if line.startswith("│") and line.split("│")[3].strip()]  # a row's first line
    assert [r.split("│")[1].strip() for r in rows] == ["dense (Dense)", "batch_normalization", "dropout (Dropout)",
                                                        "dense_1 (Dense)"]
    assert "│ (BatchNormalization)  " in text  # wrapped in its cell, as Keras's table wraps it
    assert [r.split("│")[2].strip() for r in rows] == ["(None, 64)"] * 3 + ["(None, 1)"]
    assert [int(r.split("│")[3].replace(",", "")) for r in rows] == [20 * 64 + 64, 64 * 3, 0, 64]
    # the totals against the model's own weights (the session's, in Keras's order)
    model.compile(loss="binary_crossentropy", backend="cpu")
    sizes = [w.size for w in model.get_weights()]
    assert sum(sizes) == model.count_params() == 20 * 64 + 64 + 64 * 3 + 64  # gamma and the moving statistics
    assert f" Total params: {sum(sizes):,} (" in text
    assert " Non-trainable params: 128 (512.00 B)" in text  # the moving mean and variance


def test_pickle_deepcopy_and_clone_model(rows):
    import copy
    import pickle

    x, y = rows
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")], seed=4)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu")
    initial = model.get_weights()
    model.fit(x, y, epochs=2, verbose=0)
    restored = pickle.loads(pickle.dumps(model))
    assert np.array_equal(restored.predict(x), model.predict(x))
    assert restored.evaluate(x, y) == model.evaluate(x, y)
    twin = copy.deepcopy(model)
    twin.fit(x, y, epochs=1, verbose=0)  # trains apart: the original keeps its weights
    assert np.array_equal(restored.predict(x), model.predict(x))
    assert not np.array_equal(twin.predict(x), model.predict(x))
    clone = keras.models.clone_model(model)
    clone.compile(optimizer="adam", loss="binary_crossentropy", backend="cpu")
    assert all(np.array_equal(a, b) for a, b in zip(clone.get_weights(), initial))  # drawn anew, same seed


@pytest.mark.parametrize("optimizer", [
    keras.optimizers.Adam(learning_rate=0.01, amsgrad=True),
    keras.optimizers.Nadam(learning_rate=0.01),
    keras.optimizers.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    keras.optimizers.SGD(learning_rate=keras.optimizers.schedules.ExponentialDecay(0.05, 10, 0.5), momentum=0.9),
    keras.optimizers.Adagrad(learning_rate=0.05)], ids=lambda o: type(o).__name__)
def test_saved_files_and_copies_carry_the_optimizers_state(rows, tmp_path, optimizer):
    """A .keras file, a .weights.h5 file and a pickle hold the optimizer's state (its slots, step
    count, rate and Nadam's product): each copy's next epoch is the model's own, bit for bit. A
    fresh optimizer's is not (Adam's first steps are lr-sized)."""
    pytest.importorskip("h5py", reason=".keras files need h5py")
    x, y = rows
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(1, activation="sigmoid")], seed=3)
    model.compile(optimizer=optimizer, loss="binary_crossentropy", backend="cpu")
    model.fit(x, y, epochs=2, batch_size=64, shuffle=False, verbose=0)
    model.save(tmp_path / "m.keras")
    model.save_weights(tmp_path / "m.weights.h5")
    from_weights = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8, activation="tanh"),
                                     keras.layers.BatchNormalization(), keras.layers.Dense(1, activation="sigmoid")])
    from_weights.compile(optimizer=optimizer, loss="binary_crossentropy", backend="cpu")
    from_weights.load_weights(tmp_path / "m.weights.h5")
    fresh = keras.models.clone_model(model)
    fresh.compile(optimizer=optimizer, loss="binary_crossentropy", backend="cpu")
    fresh.set_weights(model.get_weights())
    copies = [keras.saving.load_model(tmp_path / "m.keras"), from_weights, pickle.loads(pickle.dumps(model))]
    for twin in [model, *copies, fresh]:
        twin.fit(x, y, epochs=1, batch_size=64, shuffle=False, verbose=0)
    for twin in copies:
        assert all(np.array_equal(a, b) for a, b in zip(twin.get_weights(), model.get_weights()))
    assert not all(np.array_equal(a, b) for a, b in zip(fresh.get_weights(), model.get_weights()))


def test_a_one_hot_classifiers_file_goes_on_from_its_state_before_any_data(rows, tmp_path):
    """from_keras reads the optimizer's state before it sees data, so before it knows the target
    columns that its metrics (mse beside one-hot categorical cross-entropy) are read against."""
    pytest.importorskip("h5py", reason=".keras files need h5py")
    x, labels = rows
    y = np.eye(2, dtype=np.float32)[labels.astype(int)]
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(2, activation="softmax")], seed=5)
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["mse"], backend="cpu")
    model.fit(x, y, epochs=1, shuffle=False, verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = multifit.from_keras(tmp_path / "m.keras", backend="cpu")
    for twin in (model, loaded):
        twin.fit(x, y, epochs=1, shuffle=False, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.get_weights(), model.get_weights()))


def test_the_optimizers_variables_are_laid_out_as_keras_lays_them(rows, tmp_path):
    """optimizer/vars of a .keras file: the step count, the rate, then per trainable variable Adam's
    momentum and velocity side by side, as Keras 3 writes them; a file of another optimizer's is
    skipped with a warning and the model starts afresh."""
    h5py = pytest.importorskip("h5py", reason=".keras files need h5py")
    import io
    import zipfile
    x, y = rows
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8), keras.layers.Dense(1)], seed=2)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="mse", backend="cpu")
    model.fit(x, y, epochs=1, batch_size=256, verbose=0)
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        h5 = h5py.File(io.BytesIO(archive.read("model.weights.h5")))
        group = h5["optimizer/vars"]
        variables = [np.array(group[str(i)]) for i in range(len(group))]
    assert group.attrs["name"] == "adam"
    assert [v.shape for v in variables] == [(), (), (20, 8), (20, 8), (8,), (8,), (8, 1), (8, 1), (1,), (1,)]
    assert variables[0] == 4 and variables[0].dtype == np.int64  # 1024 rows in batches of 256
    assert variables[1] == np.float32(0.01)
    assert np.all(variables[3] > 0) and not np.array_equal(variables[2], variables[3])  # m, then v (squares)
    other = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8), keras.layers.Dense(1)], seed=2)
    other.compile(optimizer="rmsprop", loss="mse", backend="cpu")
    with pytest.warns(UserWarning, match=r"load_weights: skipping the optimizer's state: the file holds 10 variables "
                                         r"whereas this model's rmsprop has 6"):
        model.save_weights(tmp_path / "m.weights.h5")
        other.load_weights(tmp_path / "m.weights.h5")


def test_initial_epoch_and_the_batch_calls(rows):
    """initial_epoch resumes a fit as Keras's does; train_on_batch is one step whose loss is that of a
    fit of one batch; model(x) is predict(x)."""
    x, y = rows

    def model():
        m = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")], seed=6)
        m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu")
        return m

    whole, resumed = model(), model()
    straight = whole.fit(x, y, epochs=4, shuffle=False, verbose=0)
    resumed.fit(x, y, epochs=2, shuffle=False, verbose=0)
    seen = []
    rest = resumed.fit(x, y, epochs=4, initial_epoch=2, shuffle=False, verbose=0,
                       callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))])
    assert rest.epoch == seen == [2, 3]
    assert rest.history["loss"] == straight.history["loss"][2:]  # the same steps, the optimizer carried on
    assert resumed.fit(x, y, epochs=3, initial_epoch=3, verbose=0).history == {}
    with pytest.raises(ValueError, match="initial_epoch=-1"):
        resumed.fit(x, y, initial_epoch=-1)

    a, b = model(), model()
    loss, accuracy = a.train_on_batch(x[:64], y[:64])
    expected = b.fit(x[:64], y[:64], batch_size=64, epochs=1, shuffle=False, verbose=0).history
    assert [loss, accuracy] == [expected["loss"][0], expected["accuracy"][0]]
    assert np.array_equal(a(x[:5]), a.predict(x[:5])) and np.array_equal(a.predict_on_batch(x), a.predict(x))
    assert a.test_on_batch(x, y) == a.evaluate(x, y)


def test_keras_positional_arguments_utils_and_pickled_objects():
    import pickle

    assert keras.losses.Huber(0.5).get_config() == {"delta": 0.5}
    assert keras.losses.BinaryCrossentropy(True).get_config() == {"from_logits": True}
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9)
    assert pickle.loads(pickle.dumps(schedule)).get_config() == schedule.get_config()
    assert keras.callbacks.ReduceLROnPlateau("loss", factor=0.5).get_config()["monitor"] == "loss"
    one_hot = keras.utils.to_categorical([[2], [0], [1]])
    assert one_hot.dtype == np.float32 and one_hot.tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    assert keras.utils.to_categorical([1], num_classes=4).shape == (1, 4)
    keras.utils.set_random_seed(3)
    drawn = np.random.rand()
    keras.utils.set_random_seed(3)
    assert np.random.rand() == drawn  # NumPy seeded as Keras seeds it
    keras.utils.set_random_seed(0)


def test_what_a_new_user_tried(rows, tmp_path):
    """A model built, not compiled, predicts and loads weights (clone_model, then load_weights); fit
    and evaluate before compile are ValueErrors; one callback needs no list; EarlyStopping says where
    it stopped; History's keys come in Keras's order; Input(shape=20) is refused in Keras's words."""
    x, y = rows
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu")
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0)
    history = model.fit(x, y, epochs=5, validation_split=0.25, callbacks=stop, verbose=0)
    assert stop.stopped_epoch == 1 and len(history.epoch) == 2
    assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    model.save_weights(tmp_path / "w.weights.h5")
    clone = keras.models.clone_model(model)
    assert clone.predict(x[:3]).shape == (3, 1)
    clone.load_weights(tmp_path / "w.weights.h5")
    assert np.array_equal(clone.predict(x), model.predict(x))
    with pytest.raises(ValueError, match="You must call compile"):
        clone.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="You must call compile"):
        clone.evaluate(x, y)
    clone.compile(optimizer="adam", loss="binary_crossentropy", backend="cpu")  # the weights kept
    assert np.array_equal(clone.predict(x), model.predict(x))
    with pytest.raises(ValueError, match="Cannot convert '20' to a shape"):
        keras.Input(shape=20)
    named = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3), keras.layers.Dense(2, name="dense_1"),
                              keras.layers.Dropout(0.1), keras.layers.Dense(1)])
    # as Keras names them; model.layers leaves the InputLayer out, as Keras's does
    assert [layer.name for layer in named.layers] == ["dense", "dense_1", "dropout", "dense_2"]
    assert "os" not in dir(keras.callbacks) and "np" not in dir(keras.utils)  # only Keras's names there


def test_a_layers_weights_are_its_slice_of_the_models_in_keras_order():
    """layer.get_weights()/set_weights() and model.get_layer(): each layer's arrays are its part of
    model.get_weights() (a Dense without bias has its kernel alone, a BatchNormalization without
    center no beta), and setting them sets the model's; a layer in no model, or in one whose input
    is not known yet, has none."""
    layers = keras.layers
    model = keras.Sequential([keras.Input((6,)), layers.Dense(5, activation="relu"),
                              layers.BatchNormalization(center=False), layers.Dropout(0.1),
                              layers.Dense(3, use_bias=False), layers.Dense(2)])
    shapes = [[w.shape for w in layer.get_weights()] for layer in model.layers]
    assert shapes == [[(6, 5), (5,)], [(5,), (5,), (5,)], [], [(5, 3)], [(3, 2), (2,)]]
    every = model.get_weights()
    assert [w.shape for w in every] == [s for layer in shapes for s in layer]
    assert all(np.array_equal(a, b) for a, b in zip(every, [w for l in model.layers for w in l.get_weights()]))
    kernel = np.arange(15, dtype=np.float32).reshape(5, 3)
    model.get_layer("dense_1").set_weights([kernel])
    assert np.array_equal(model.get_weights()[5], kernel)
    assert np.array_equal(model.get_weights()[0], every[0])  # the others untouched
    assert model.get_layer(index=-1) is model.layers[-1]
    with pytest.raises(ValueError, match="no layer named 'dense_9'; the model's layers: dense, batch_normalization"):
        model.get_layer("dense_9")
    with pytest.raises(ValueError, match="the layer has 1 weights, given 2"):
        model.get_layer("dense_1").set_weights([kernel, kernel])
    copied = pickle.loads(pickle.dumps(model))  # its layers belong to the copy
    assert np.array_equal(copied.get_layer("dense_1").get_weights()[0], kernel)
    assert layers.Dense(3).get_weights() == []
    assert keras.Sequential([layers.Dense(3)]).layers[0].get_weights() == []
