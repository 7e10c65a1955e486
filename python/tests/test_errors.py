"""Wrong inputs from Python: a ValueError or TypeError with the command line's text, never a crash."""
import json
import subprocess

import numpy as np
import pytest

import multifit
from conftest import small_model


def cli_error(program, spec, tmp_path):
    """The line `multifit train SPEC` prints for a bad spec, without "multifit: error: FILE: "."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run([program, "train", str(path), "--data", "synthetic:binary"], capture_output=True, text=True)
    assert done.returncode == 2
    return done.stderr.strip().split(f"{path}: ", 1)[1]


def test_a_bad_optimizer_is_the_command_lines_message(program, tmp_path):
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(1, activation="sigmoid")],
                                name="bad")
    with pytest.raises(ValueError) as error:
        model.compile(optimizer="adamx", loss="binary_crossentropy")
    spec = {"name": "bad", "input": 20, "layers": [{"type": "Dense", "units": 1, "activation": "sigmoid"}],
            "loss": "binary_crossentropy", "optimizer": "adamx"}
    assert str(error.value) == "bad: " + cli_error(program, spec, tmp_path)


def test_a_bad_layer_setting_is_a_value_error():
    model = multifit.Sequential([multifit.layers.Input(shape=(4,)), multifit.layers.Dropout(1.5),
                                 multifit.layers.Dense(1)])
    with pytest.raises(ValueError, match="rate"):
        model.compile(loss="mse")


@pytest.mark.parametrize("kwargs, match", [
    ({"backend": "gpu"}, "backend: 'gpu' is not one of auto, cpu, cuda, host-exec"),
    ({"graphs": "maybe"}, "graphs"),
    ({"threads": -1}, "threads -1"),
])
def test_bad_backend_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        multifit.Sequential([multifit.layers.Dense(1)]).compile(loss="mse", **kwargs)


def test_bad_arrays(binary_task):
    x, y = binary_task
    model = small_model()
    with pytest.raises(TypeError, match="dtype <U1"):
        model.fit(np.array([["a"]]), y)
    with pytest.raises(ValueError, match="x has 600 rows but y has 10"):
        model.fit(x, y[:10])
    with pytest.raises(ValueError, match=r"label that is not 0 or 1 \(y\[\d+\]: label 4\)"):
        model.fit(x, y + 3, verbose=0)
    model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="x has 3 features but the model's input is 20"):
        model.predict(x[:, :3])
    with pytest.raises(TypeError, match="validation_freq"):
        model.fit(x, y, validation_freq=2)


def test_nan_and_infinity_are_refused_where_they_are(binary_task):
    """Before any step trains (Keras trains on to a NaN loss): the first bad value by row and column."""
    x, y = binary_task
    model = small_model()
    broken = x.copy()
    broken[7, 3] = np.nan
    with pytest.raises(ValueError, match=r"x\[7, 3\] is NaN: a model cannot train"):
        model.fit(broken, y, epochs=1, verbose=0)
    labels = y.astype(np.float32)
    labels[2] = np.inf
    with pytest.raises(ValueError, match=r"y\[2\] is inf"):
        model.fit(x, labels, epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"validation_data's x\[7, 3\] is NaN"):
        model.fit(x, y, epochs=1, verbose=0, validation_data=(broken, y))
    model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"x\[7, 3\] is NaN"):
        model.predict(broken)


def test_what_is_not_a_callback_is_refused(binary_task):
    x, y = binary_task

    class Mine:  # a Keras callback is a subclass of Callback
        def on_epoch_end(self, epoch, logs=None):
            pass

    with pytest.raises(TypeError, match="callback Mine is not a multifit.callbacks.Callback"):
        small_model().fit(x, y, callbacks=[Mine()])


def test_over_the_memory_cap_is_a_memory_error(binary_task):
    model = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(4096),
                                 multifit.layers.Dense(1, activation="sigmoid")])
    with pytest.raises(MemoryError, match="memory.limit"):
        model.compile(loss="binary_crossentropy", memory_limit="64KiB")


def test_a_rejected_fit_leaves_the_model_as_it_was(binary_task):
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    before = model.predict(x)
    for bad, match in [({"epochs": -1}, "fit.epochs"), ({"batch_size": 0}, "fit.batch_size"),
                       ({"validation_split": 1.0}, "fit.validation_split")]:
        with pytest.raises(ValueError, match=match):
            model.fit(x, y, verbose=0, **bad)
        assert np.array_equal(model.predict(x), before)


def test_layer_arguments_go_to_the_specs_checks_as_given():
    model = multifit.Sequential([multifit.layers.Input(shape=(4,)), multifit.layers.Dense(2.5)])
    with pytest.raises(ValueError, match=r"units: got 2.5"):
        model.compile(loss="mse")


def test_no_rows_is_said():
    with pytest.raises(ValueError, match=r"x has no rows"):
        small_model().fit(np.empty((0, 20), np.float32), np.empty(0, np.float32))


def test_a_model_that_fails_in_a_run_warns_and_the_others_train(binary_task):
    x, y = binary_task
    worse = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(2, activation="sigmoid")],
                                name="worse")
    worse.compile(loss="binary_crossentropy")  # 2 outputs for 1 label column: it fails alone
    with pytest.warns(RuntimeWarning, match="1 of 2 models did not train: worse: .*2 units"):
        result = multifit.run([small_model("good"), worse], data=(x, y), backend="cpu", quiet=True)
    assert [m["status"] for m in result.models] == ["ok", "failed"]
    assert result.exit_code == 2


def test_what_is_not_a_model_is_refused_where_it_is_written(binary_task):
    with pytest.raises(TypeError, match="layers is str 'hello'; expected a list"):
        multifit.Sequential("hello")
    with pytest.raises(TypeError, match="entry 1 is str 'relu', not a multifit.layers layer"):
        multifit.Sequential([multifit.layers.Dense(2), "relu"])
    with pytest.raises(TypeError, match="entry 1 is int"):
        multifit.Sequential([multifit.layers.Dense(2)]).add(3)
    x, y = binary_task  # 20 features
    model = small_model()
    with pytest.raises(ValueError, match=r"x has samples of shape \(4, 5\), but the model's input is \(20,\)"):
        model.fit(x.reshape(-1, 4, 5), y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"validation_data's x has samples of shape \(4, 5\)"):
        model.fit(x, y, epochs=1, verbose=0, validation_data=(x.reshape(-1, 4, 5), y))
    images = multifit.Sequential([multifit.layers.Input(shape=(4, 5)), multifit.layers.Flatten(),
                                  multifit.layers.Dense(1, activation="sigmoid")])
    images.compile(loss="binary_crossentropy", backend="cpu", threads=1)
    images.fit(x.reshape(-1, 4, 5), y, epochs=1, verbose=0)  # its own shape: flattened, as Keras's Flatten
    assert images.predict(x.reshape(-1, 4, 5)).shape == (len(x), 1)


def test_load_model_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="load_model: .*missing.keras: no such file"):
        multifit.load_model(tmp_path / "missing.keras")
    with pytest.raises(FileNotFoundError, match="is a folder, not a .keras file"):
        multifit.load_model(tmp_path)


def test_a_wrong_or_damaged_file_is_named_with_its_fault(binary_task, tmp_path):
    """Every way of opening a Keras file says which file and what is wrong with it in one line: a
    FileNotFoundError for nothing or a folder, a ValueError for a damaged archive or HDF5 file, a
    weights file given as a model, or weights of another model; a file of another optimizer's
    starts the optimizer afresh with a warning, as Keras's does."""
    pytest.importorskip("h5py", reason=".keras files need h5py")
    x, y = binary_task
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    model.save(tmp_path / "m.keras")
    model.save_weights(tmp_path / "m.weights.h5")
    for opener in (multifit.from_keras, multifit.load_model):
        with pytest.raises(FileNotFoundError, match=r"missing\.keras: no such file"):
            opener(tmp_path / "missing.keras")
    (tmp_path / "folder.weights.h5").mkdir()
    with pytest.raises(FileNotFoundError, match=r"load_weights: .*folder\.weights\.h5: is a folder, not a weights file"):
        model.load_weights(tmp_path / "folder.weights.h5")
    with pytest.raises(ValueError, match=r"m\.weights\.h5: not a \.keras file nor .*a weights file loads with "
                                         r"model\.load_weights"):
        multifit.from_keras(tmp_path / "m.weights.h5")
    data = (tmp_path / "m.keras").read_bytes()
    (tmp_path / "cut.keras").write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match=r"cut\.keras: not a \.keras file: no readable zip archive \(damaged"):
        multifit.load_model(tmp_path / "cut.keras")
    middle = len(data) // 2
    (tmp_path / "crc.keras").write_bytes(data[:middle] + b"\xff" * 64 + data[middle + 64:])
    with pytest.raises(ValueError, match=r"crc\.keras: .*damaged"):
        multifit.load_model(tmp_path / "crc.keras")
    weights = (tmp_path / "m.weights.h5").read_bytes()
    (tmp_path / "cut.weights.h5").write_bytes(weights[:len(weights) // 2])
    with pytest.raises(ValueError, match=r"load_weights: .*cut\.weights\.h5: "):
        model.load_weights(tmp_path / "cut.weights.h5")
    wider = multifit.Sequential([multifit.layers.Input(shape=(20,)), multifit.layers.Dense(32, activation="relu"),
                                 multifit.layers.Dropout(0.1), multifit.layers.BatchNormalization(),
                                 multifit.layers.Dense(1, activation="sigmoid")])
    wider.compile(optimizer="rmsprop", loss="binary_crossentropy", backend="cpu")
    before = wider.get_weights()
    with pytest.raises(ValueError, match=r"load_weights: .*m\.weights\.h5: .*shape \(20, 16\), the model's is "
                                         r"\(20, 32\)"):
        wider.load_weights(tmp_path / "m.weights.h5")
    assert all(np.array_equal(a, b) for a, b in zip(wider.get_weights(), before))  # left as it was
    sgd = small_model()
    sgd.compile(optimizer="sgd", loss="binary_crossentropy", backend="cpu")
    sgd.save_weights(tmp_path / "sgd.weights.h5")
    with pytest.warns(UserWarning, match=r"skipping the optimizer's state: the file holds 2 variables"):
        model.load_weights(tmp_path / "sgd.weights.h5")
    twin = small_model()
    twin.load_weights(tmp_path / "m.keras")  # a .keras file's weights, as Keras's load_weights takes them
    assert all(np.array_equal(a, b) for a, b in zip(twin.get_weights(), multifit.load_model(
        tmp_path / "m.keras").get_weights()))


def test_compile_again_drops_the_last_fits_callbacks(binary_task):
    """A fit's callbacks watched its metrics: compile() with others starts without them, as Keras's
    compile does (each fit gives its own)."""
    x, y = binary_task
    model = small_model()
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"], backend="cpu")
    model.fit(x, y, epochs=1, validation_split=0.25, verbose=0,
              callbacks=[multifit.callbacks.EarlyStopping(monitor="val_auc")])
    trained = model.get_weights()
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"], backend="cpu")
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), trained))
    assert "accuracy" in model.fit(x, y, epochs=1, verbose=0).history


def test_a_generator_is_a_type_error_that_says_to_pass_arrays(binary_task):
    x, y = binary_task
    batches = ((x[i:i + 32], y[i:i + 32]) for i in range(0, len(x), 32))
    with pytest.raises(TypeError, match="fit: x is generator and no y is given; .*pass numpy arrays x and y"):
        small_model().fit(batches, epochs=1, verbose=0)
