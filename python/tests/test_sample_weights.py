"""Keras's sample_weight and class_weight in fit and evaluate: a row's loss times its weight, the sum
over the batch's rows (keras/src/losses/loss.py), the metrics unweighted; the same numbers as the
command line's fit.sample_weight on a y.npy whose last column is the weight; class weights as the
sample weights Keras makes of them; what Keras refuses, refused."""

import numpy as np
import pytest

import multifit
from conftest import program_epochs, small_model


def _weights(rows):
    return (np.arange(rows) % 4 * 0.5).astype(np.float32)  # 0, 0.5, 1, 1.5, ...


def test_evaluate_weighs_each_rows_loss_and_divides_by_the_rows(binary_task):
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    w = _weights(len(x))
    p = model.predict(x, verbose=0)[:, 0].astype(np.float64)
    row_loss = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    got = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    assert got["loss"] == pytest.approx((w * row_loss).sum() / len(x), rel=1e-5)
    assert got["accuracy"] == pytest.approx(((p > 0.5) == y).mean(), abs=1e-7)  # unweighted, as Keras's
    assert model.evaluate(x, y, verbose=0)[0] == pytest.approx(row_loss.mean(), rel=1e-5)


def test_fit_with_sample_weight_gives_the_command_lines_numbers_bit_for_bit(binary_task, program, tmp_path):
    x, y = binary_task
    w = _weights(len(x))
    model = small_model()
    history = model.fit(x, y, sample_weight=w, epochs=2, batch_size=32, validation_split=0.25, verbose=0)
    assert model.spec()["fit"]["sample_weight"] is True
    epochs = program_epochs(program, model, x, np.column_stack([y, w]), tmp_path)  # the weight after the target
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        assert history.history[key] == [e[key] for e in epochs], key
    plain = small_model().fit(x, y, epochs=2, batch_size=32, validation_split=0.25, verbose=0)
    assert history.history["loss"] != plain.history["loss"]


def test_class_weight_is_the_sample_weight_of_each_rows_class(binary_task):
    x, y = binary_task
    by_class = small_model().fit(x, y, class_weight={0: 3.0, 1: 0.5}, epochs=2, verbose=0)
    by_sample = small_model().fit(x, y, sample_weight=np.where(y == 0, 3.0, 0.5), epochs=2, verbose=0)
    assert by_class.history == by_sample.history
    one_hot = np.eye(2, dtype=np.float32)[y.astype(int)]  # a one-hot row's class: its largest column

    def softmax_model():
        model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(2, activation="softmax")],
                                    seed=3)
        model.compile(optimizer="sgd", loss="categorical_crossentropy", backend="cpu", threads=1)
        return model
    by_class = softmax_model().fit(x, one_hot, class_weight={1: 2.0}, epochs=2, verbose=0)
    by_sample = softmax_model().fit(x, one_hot, sample_weight=np.where(y == 1, 2.0, 1.0), epochs=2, verbose=0)
    assert by_class.history == by_sample.history


def test_validation_rows_are_weighted_by_their_sample_weight_not_by_class(binary_task):
    x, y = binary_task
    xt, yt, xv, yv = x[:450], y[:450], x[450:], y[450:]
    wv = _weights(len(xv))
    model = small_model()
    history = model.fit(xt, yt, validation_data=(xv, yv, wv), epochs=1, verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(
        model.evaluate(xv, yv, sample_weight=wv, verbose=0)[0], rel=1e-6)
    model = small_model()
    history = model.fit(x, y, class_weight={0: 5.0}, validation_split=0.25, epochs=1, verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(model.evaluate(xv, yv, verbose=0)[0], rel=1e-6)


@pytest.mark.parametrize("arguments, words", [
    ({"sample_weight": np.ones(600), "class_weight": {0: 1.0}}, "You cannot `class_weight` and `sample_weight`"),
    ({"sample_weight": np.ones(599)}, "sample_weight has shape (599,); expected (600,)"),
    ({"sample_weight": -np.ones(600)}, "sample_weight[0] is -1"),
    ({"sample_weight": np.full(600, np.nan)}, "sample_weight[0] is NaN"),
    ({"class_weight": [1.0, 2.0]}, "class_weight must be a dict"),
    ({"class_weight": {"a": 1.0}}, "class_weight has the key 'a'"),
    ({"class_weight": {0: -2.0}}, "fit.class_weight.0: got -2"),
    ({"sample_weight": np.ones(500), "validation_data": (np.ones((10, 20)), np.ones(10))},
     "fit: sample_weight has shape (500,); expected (600,)"),
    ({"validation_data": (np.ones((10, 20)), np.ones(10), np.ones((10, 2)))},
     "fit: validation_data's sample weight has shape (10, 2); expected (10,)"),
])
def test_weights_keras_would_refuse_or_that_mean_nothing_are_refused(binary_task, arguments, words):
    x, y = binary_task
    with pytest.raises(ValueError, match=None) as raised:
        small_model().fit(x, y, epochs=1, verbose=0, **arguments)
    assert words in str(raised.value)


def test_the_batch_calls_take_weights_as_fit_and_evaluate_do(binary_task):
    x, y = binary_task
    w = _weights(32)
    model = small_model()
    before = model.test_on_batch(x[:32], y[:32], sample_weight=w, return_dict=True)
    assert before["loss"] == pytest.approx(model.evaluate(x[:32], y[:32], sample_weight=w, verbose=0)[0], rel=1e-6)
    twin = small_model()
    step = model.train_on_batch(x[:32], y[:32], sample_weight=w, return_dict=True)
    same = twin.fit(x[:32], y[:32], sample_weight=w, batch_size=32, epochs=1, shuffle=False, verbose=0)
    assert step["loss"] == same.history["loss"][0]


def test_a_fit_with_weights_after_one_without_goes_on_with_the_optimizers_state(binary_task):
    """The weight column changes the batch's plan, so the model is built again: its weights and its
    optimizer's state go on, as Keras's do. Weights of 1 then train as no weights: bit for bit."""
    x, y = binary_task
    weighted, plain = small_model(), small_model()
    for model in (weighted, plain):
        model.fit(x, y, epochs=1, shuffle=False, verbose=0)
    weighted.fit(x, y, sample_weight=np.ones(len(x), np.float32), epochs=1, shuffle=False, verbose=0)
    plain.fit(x, y, epochs=1, shuffle=False, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(weighted.get_weights(), plain.get_weights()))
