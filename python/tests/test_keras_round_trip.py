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
    with pytest.raises(ValueError, match=r"layer 'conv' \(Conv2D\) is not supported"):
        multifit.from_keras(conv)
