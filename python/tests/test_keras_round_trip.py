"""A Keras model into multifit and back: from_keras -> fit -> save / to_keras, opened by Keras 3,
evaluates to multifit's metrics. Needs Keras (the peers' environment, benchmarks/peers/); skipped
with the reason elsewhere."""

import numpy as np
import pytest

import multifit

keras = pytest.importorskip("keras", reason="the round trip needs Keras 3 (benchmarks/peers/requirements.txt)")
pytest.importorskip("h5py", reason=".keras files need h5py")


def keras_model():
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dropout(0.1), keras.layers.BatchNormalization(),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.002), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


def data():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(512, 20)).astype(np.float32)
    return x, (x[:, 0] - x[:, 2] > 0).astype(np.float32)


@pytest.mark.parametrize("through", ["object", "file"])
def test_from_keras_fit_save_and_keras_evaluates_the_same(through, tmp_path):
    x, y = data()
    original = keras_model()
    if through == "file":
        original.save(tmp_path / "original.keras")
        source = tmp_path / "original.keras"
    else:
        source = original
    model = multifit.from_keras(source, backend="cpu")
    assert model.spec()["optimizer"]["name"] == "rmsprop"
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), original.get_weights()))
    model.fit(x, y, epochs=3, batch_size=32, verbose=0)
    loss, accuracy = model.evaluate(x, y)
    model.save(tmp_path / "trained.keras")
    reloaded = keras.saving.load_model(tmp_path / "trained.keras")
    k_loss, k_accuracy = reloaded.evaluate(x, y, batch_size=32, verbose=0)
    assert k_loss == pytest.approx(loss, rel=1e-5)
    assert k_accuracy == pytest.approx(accuracy, abs=1e-6)
    np.testing.assert_allclose(reloaded.predict(x, verbose=0), model.predict(x), rtol=1e-5, atol=1e-6)
    back = model.to_keras()
    assert all(np.array_equal(a, b) for a, b in zip(back.get_weights(), model.get_weights()))


def test_an_unsupported_layer_is_named():
    conv = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(2, 3, name="conv"), keras.layers.Flatten(),
                             keras.layers.Dense(1)])
    with pytest.raises(ValueError, match=r"config\.layers\[1\]\.class_name: Conv2D is not a layer multifit trains"):
        multifit.from_keras(conv)


def float32s(value):
    """A config with each number as the float32 Keras computes with (multifit keeps float32 settings)."""
    if isinstance(value, dict):
        return {key: float32s(item) for key, item in value.items()}
    if isinstance(value, list):
        return [float32s(item) for item in value]
    if isinstance(value, float):
        return float(np.float32(value))
    return value


COMPILED = {
    "Lion, CosineDecay with warm-up": lambda: dict(
        optimizer=keras.optimizers.Lion(learning_rate=keras.optimizers.schedules.CosineDecay(
            0.01, 100, alpha=0.1, warmup_target=0.02, warmup_steps=10), beta_2=0.98), loss="mse", metrics=["mae"]),
    "AdamW, clipnorm, amsgrad": lambda: dict(
        optimizer=keras.optimizers.AdamW(learning_rate=0.003, weight_decay=0.01, clipnorm=1.0, amsgrad=True),
        loss="log_cosh", metrics=[keras.metrics.MeanSquaredError(name="err")]),
    "SGD, PiecewiseConstantDecay": lambda: dict(
        optimizer=keras.optimizers.SGD(learning_rate=keras.optimizers.schedules.PiecewiseConstantDecay(
            [10, 20], [0.1, 0.05, 0.01]), momentum=0.9, nesterov=True), loss="msle"),
    "RMSprop, ExponentialDecay": lambda: dict(
        optimizer=keras.optimizers.RMSprop(learning_rate=keras.optimizers.schedules.ExponentialDecay(
            0.01, 50, 0.9, staircase=True), rho=0.8, centered=True),
        loss=keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1), metrics=["accuracy"]),
}


@pytest.mark.parametrize("case", list(COMPILED))
def test_a_compiled_models_settings_go_through_multifit_and_back(case, tmp_path):
    keras.utils.set_random_seed(2)
    model = keras.Sequential([
        keras.Input((6,)),
        keras.layers.Dense(8, activation="mish", kernel_regularizer=keras.regularizers.L2(1e-3),
                           kernel_initializer=keras.initializers.RandomNormal(stddev=0.1)),
        keras.layers.BatchNormalization(momentum=0.9, center=False), keras.layers.Dropout(0.2),
        keras.layers.Dense(2)])
    model.compile(**COMPILED[case]())
    multifit.from_keras(model, backend="cpu").save(tmp_path / "m.keras")
    back = keras.saving.load_model(tmp_path / "m.keras")
    unnamed = lambda config: {key: value for key, value in float32s(config).items() if key != "name"}
    assert unnamed(back.optimizer.get_config()) == unnamed(model.optimizer.get_config())
    loss = (lambda l: l if isinstance(l, str) else unnamed(l.get_config()))
    assert loss(back.loss) == loss(model.loss)
    for layer, again in zip(model.layers, back.layers):
        assert unnamed(again.get_config()) == unnamed(layer.get_config()), layer.name
    assert all(np.array_equal(a, b) for a, b in zip(back.get_weights(), model.get_weights()))


def test_from_keras_reads_what_keras_config_drops_and_a_warm_up_from_zero():
    """Keras 3's Huber.get_config() drops delta: from_keras reads it from the live loss. And
    CosineDecay(0.0, ..., warmup_target, warmup_steps), Keras's warm-up from nothing, converts. The
    first epoch then trains as Keras's does (the same weights, batches in order)."""
    keras.utils.set_random_seed(4)
    original = keras.Sequential([keras.Input((20,)), keras.layers.Dense(16, activation="relu"),
                                 keras.layers.Dense(1)])
    schedule = keras.optimizers.schedules.CosineDecay(0.0, 40, warmup_target=0.01, warmup_steps=10)
    original.compile(optimizer=keras.optimizers.Adam(learning_rate=schedule), loss=keras.losses.Huber(delta=0.7))
    model = multifit.from_keras(original, backend="cpu")
    assert model.spec()["loss"] == {"name": "huber", "delta": pytest.approx(0.7)}
    assert model.spec()["optimizer"]["learning_rate"]["config"]["initial_learning_rate"] == 0.0
    x, y = data()
    y = 3 * y - 1  # errors past delta, where Huber is linear
    ours = model.fit(x, y, epochs=1, batch_size=32, shuffle=False, verbose=0).history["loss"][0]
    theirs = original.fit(x, y, epochs=1, batch_size=32, shuffle=False, verbose=0).history["loss"][0]
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_summary_prints_keras_table(capsys):
    """The same layers, built by Keras and by multifit.keras, print the same summary."""
    from multifit import keras as mf_keras

    def layers(k):
        return [k.Input((28, 28)), k.layers.Flatten(), k.layers.Dense(128, activation="relu"),
                k.layers.BatchNormalization(center=False), k.layers.Dropout(0.2), k.layers.Dense(64),
                k.layers.Dense(10, activation="softmax", use_bias=False)]

    keras.backend.clear_session()  # Keras numbers its layers' names across the session; multifit per model
    keras.Sequential(layers(keras), name="mlp").summary()
    expected = capsys.readouterr().out
    mf_keras.Sequential(layers(mf_keras), name="mlp").summary()
    assert capsys.readouterr().out == expected


def test_weights_h5_files_open_in_both(tmp_path):
    """model.save_weights("NAME.weights.h5") in Keras's layout: Keras loads multifit's file, multifit
    loads Keras's, every weight the same (a BatchNormalization's moving statistics too)."""
    x, _ = data()
    original = keras_model()
    model = multifit.from_keras(original, backend="cpu")
    model.fit(x, (x[:, 1] > 0).astype(np.float32), epochs=1, verbose=0)  # weights of its own now
    model.save_weights(tmp_path / "multifit.weights.h5")
    original.load_weights(tmp_path / "multifit.weights.h5")
    assert all(np.array_equal(a, b) for a, b in zip(original.get_weights(), model.get_weights()))
    fresh = keras_model()
    fresh.save_weights(tmp_path / "keras.weights.h5")
    model.load_weights(tmp_path / "keras.weights.h5")
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), fresh.get_weights()))


def test_learning_rate_scheduler_trains_as_keras_does():
    """keras.callbacks.LearningRateScheduler and multifit's, the same schedule on a from_keras copy
    (the same weights, batches in order): the same rates logged and the same losses, epoch by epoch."""
    keras.utils.set_random_seed(5)
    original = keras.Sequential([keras.Input((20,)), keras.layers.Dense(16, activation="tanh"),
                                 keras.layers.Dense(1, activation="sigmoid")])
    original.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9), loss="binary_crossentropy")
    model = multifit.from_keras(original, backend="cpu")
    x, y = data()
    schedule = lambda epoch, rate: rate if epoch == 0 else rate * 0.5  # noqa: E731
    ours = model.fit(x, y, epochs=3, batch_size=32, shuffle=False, verbose=0,
                     callbacks=[multifit.callbacks.LearningRateScheduler(schedule)]).history
    theirs = original.fit(x, y, epochs=3, batch_size=32, shuffle=False, verbose=0,
                          callbacks=[keras.callbacks.LearningRateScheduler(schedule)]).history
    assert ours["learning_rate"] == pytest.approx(theirs["learning_rate"], rel=1e-6)
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-5)


@pytest.mark.parametrize("optimizer", [
    lambda: keras.optimizers.Nadam(learning_rate=0.01),
    lambda: keras.optimizers.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    lambda: keras.optimizers.Adam(learning_rate=0.01, amsgrad=True)], ids=["nadam", "rmsprop", "amsgrad"])
def test_a_fit_goes_on_from_the_others_file_with_its_optimizer(tmp_path, optimizer):
    """Keras trains and saves a .keras file; multifit opens it and trains on, as Keras does from the
    same file: the same losses and weights (the optimizer's slots, step count and Nadam's product
    carried). Then the reverse: Keras opens multifit's file without skipping its optimizer, and both
    go on alike."""
    import warnings
    x, y = data()
    keras.utils.set_random_seed(2)
    original = keras.Sequential([keras.Input((20,)), keras.layers.Dense(16, activation="tanh"),
                                 keras.layers.BatchNormalization(), keras.layers.Dense(1, activation="sigmoid")])
    original.compile(optimizer=optimizer(), loss="binary_crossentropy")
    original.fit(x, y, epochs=2, batch_size=32, shuffle=False, verbose=0)
    original.save(tmp_path / "keras.keras")
    model = multifit.from_keras(tmp_path / "keras.keras", backend="cpu")
    theirs = keras.saving.load_model(tmp_path / "keras.keras")
    ours_loss = model.fit(x, y, epochs=1, batch_size=32, shuffle=False, verbose=0).history["loss"]
    their_loss = theirs.fit(x, y, epochs=1, batch_size=32, shuffle=False, verbose=0).history["loss"]
    assert ours_loss == pytest.approx(their_loss, rel=1e-5)
    for a, b in zip(model.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

    model.save(tmp_path / "multifit.keras")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reopened = keras.saving.load_model(tmp_path / "multifit.keras")
    assert not [w for w in caught if "Skipping variable loading" in str(w.message)]
    assert int(reopened.optimizer.iterations.numpy()) == 3 * 16
    ours_loss = model.fit(x, y, epochs=1, batch_size=32, shuffle=False, verbose=0).history["loss"]
    their_loss = reopened.fit(x, y, epochs=1, batch_size=32, shuffle=False, verbose=0).history["loss"]
    assert ours_loss == pytest.approx(their_loss, rel=1e-5)


def test_auc_is_kerass_and_from_keras_takes_it():
    """A Keras model compiled with keras.metrics.AUC() converts; multifit's AUC of its predictions over
    every row is keras.metrics.AUC's of the same predictions, as the model's evaluate gives it."""
    x, y = data()
    keras.utils.set_random_seed(4)
    original = keras.Sequential([keras.Input((20,)), keras.layers.Dense(8, activation="relu"),
                                 keras.layers.Dense(1, activation="sigmoid")])
    original.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(name="area")])
    model = multifit.from_keras(original, backend="cpu")
    model.fit(x, y, epochs=2, batch_size=32, verbose=0)
    metric = keras.metrics.AUC()
    metric.update_state(y, model.predict(x))
    assert model.evaluate(x, y, return_dict=True)["area"] == pytest.approx(float(metric.result()), rel=1e-6)
