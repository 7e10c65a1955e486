"""multifit.run: the study's modes from Python, its Result against the command line's outputs."""
import csv
import re
import subprocess
import sys

import pytest

import multifit
from conftest import SEED_PAIR, small_model


def test_to_pandas_has_the_csvs_columns_and_a_row_per_model_and_run(program, tmp_path):
    pytest.importorskip("pandas", reason="to_pandas needs pandas")
    result = multifit.run(SEED_PAIR, mode="all", backend="cpu", quiet=True)
    frame = result.to_pandas()
    subprocess.run([program, "run", SEED_PAIR, "--backend", "cpu", "--quiet", "--csv",
                    str(tmp_path / "r.csv")], check=True, capture_output=True)
    with open(tmp_path / "r.csv") as f:
        header = next(csv.reader(f))
    assert list(frame.columns) == header
    assert len(frame) == 2 * 4 == len(result.models)
    assert list(frame["run_mode"].unique()) == ["serial", "streams", "processes", "packed"]
    assert re.search("sooner than serial|serial finished first", result.answer)


def test_models_built_in_python_on_numpy_data_in_every_mode(binary_task):
    x, y = binary_task
    models = [small_model(f"m{seed}", seed=seed) for seed in (1, 2, 3)]
    for mode in ("serial", "streams", "processes", "packed"):
        result = multifit.run(models, mode=mode, data=(x, y, x[:100], y[:100]), epochs=2, quiet=True,
                              backend="cpu", threads=1)
        assert result.exit_code == 0, mode
        assert [m["status"] for m in result.models] == ["ok"] * 3, mode
        # One copy of the data per process, shared by its models (processes: one each).
        assert len({m["data"]["source"] for m in result.models}) == 1
    # In every mode a model trains as it does alone: the serial run's numbers are the fit's.
    alone = small_model("m1", seed=1)
    history = alone.fit(x, y, epochs=2, verbose=0)
    serial = multifit.run(models[:1], mode="serial", data=(x, y), epochs=2, quiet=True, backend="cpu", threads=1)
    assert [e["loss"] for e in serial.models[0]["epochs"]] == history.history["loss"]


def test_best_follows_the_ranking(binary_task, tmp_path):
    """best(k) is a DataFrame of the ranking's first k, with the metric, the sweep's values and the
    files save_best kept; without validation rows or a test set the ranking is by the training loss
    (not by train_s, which would make the fastest model the best)."""
    pytest.importorskip("pandas", reason="best needs pandas")
    x, y = binary_task
    models = [small_model(f"m{seed}", seed=seed) for seed in (1, 2, 3, 4)]
    result = multifit.run(models, mode="streams", data=(x, y), epochs=2, quiet=True, backend="cpu",
                          save_best=(2, tmp_path / "best"))
    run = result.runs[0]
    assert run["rank_by"] == "loss"
    best = result.best(2)
    assert list(best["name"]) == run["ranking"][:2] and list(best["rank"]) == [1, 2]
    losses = {m["name"]: m["epochs"][-1]["loss"] for m in result.models}
    assert list(best["loss"]) == [losses[name] for name in run["ranking"][:2]]
    assert list(best["loss"]) == sorted(losses.values())[:2]
    for _, row in best.iterrows():
        assert row["weights"].endswith(row["name"] + ".weights") and (tmp_path / "best" / (row["name"] + ".weights")).exists()
        assert row["model"]["name"] == row["name"]
    timed = multifit.run(models, mode="serial", data=(x, y), epochs=1, quiet=True, backend="cpu", rank_by="train_s")
    assert list(timed.best(4)["name"]) == timed.runs[0]["ranking"] and timed.best(1)["weights"].isna().all()
    # a Result made from a document read back (a run's --json file) ranks the same, without files
    again = multifit.Result(result.document, "", 0)
    assert list(again.best(2)["name"]) == list(best["name"]) and again.best(2)["weights"].isna().all()


def test_auto_from_python_says_its_choice_and_quiet_prints_nothing(capfd):
    """run(mode="auto") gives the mode it chose and why in one sentence; quiet=True keeps the
    command line's notes (the backend line, auto's line) in Result.notes instead of printing them."""
    result = multifit.run(SEED_PAIR, mode="auto", quiet=True, calibration_steps=4)
    assert result.mode in ("serial", "streams", "processes", "packed")
    assert result.answer.startswith(f"auto chose {result.mode}, the shortest wall its calibration")
    assert "multifit: backend auto:" in result.notes and "multifit: auto:" in result.notes
    assert capfd.readouterr() == ("", "")


def test_report_writes_a_page(tmp_path):
    pytest.importorskip("matplotlib", reason="the report's charts need matplotlib")
    result = multifit.run(SEED_PAIR, mode="streams", backend="cpu", quiet=True)
    page = result.report(tmp_path / "r.html")
    assert "<html" in open(page).read()


def test_bad_run_arguments_are_the_command_lines_messages():
    with pytest.raises(ValueError, match=r"--mode: fast not in \{serial,streams,processes,packed,all,auto\}"):
        multifit.run(SEED_PAIR, mode="fast")
    with pytest.raises(ValueError, match=r"unknown flag --epoch \(did you mean --epochs\?\)"):
        multifit.run(SEED_PAIR, epoch=3)
    with pytest.raises(ValueError, match="missing.json: no such file"):
        multifit.run("missing.json")
    with pytest.raises(TypeError, match="sweep entry 0 is int"):
        multifit.run([3])


def test_a_runs_status_is_a_tqdm_bar_where_tqdm_is_installed(binary_task, capfd, monkeypatch):
    """Not quiet, with tqdm: a bar over the run's models in place of its status line; without it, the
    status line. Ten models: more than the run shows a line each for."""
    pytest.importorskip("tqdm", reason="the status bar needs tqdm")
    x, y = binary_task
    models = [small_model(f"m{seed}", seed=seed) for seed in range(10)]
    multifit.run(models, mode="streams", data=(x, y), epochs=1, backend="cpu")
    err = capfd.readouterr().err
    assert re.search(r"multifit: 100%.*10/10 .*10 ok; best loss", err), err
    assert "models ended" not in err
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # as where tqdm is not installed
    multifit.run(models, mode="streams", data=(x, y), epochs=1, backend="cpu")
    err = capfd.readouterr().err
    assert "multifit: 10/10 models ended (10 ok)" in err and "100%" not in err
