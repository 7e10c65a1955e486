"""multifit.run: a sweep trained in one of the study's modes, in this process, and its Result.

run() is the command line's `multifit run` called in this process (the binding's cli()): its modes,
options, checks and messages are that command's by construction, and its result document and CSV
are read back into a Result. Keyword arguments are its flags by name (save_best=(3, "best") is
--save-best 3 best); a bad one is a ValueError with the command line's text.
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

from . import _multifit
from ._arrays import features_and_targets
from .models import Sequential


def _data_source(data, folder):
    """(the data source's name, x, y) for run()'s `data`: a source's name as it is; numpy arrays
    (x, y) or (x, y, x_test, y_test) written once into `folder` as .npy files (npy:X,Y[,XT,YT]),
    which every model of the run reads: one copy in each process, not one per model."""
    if data is None or isinstance(data, str):
        return data, None, None
    if not isinstance(data, (tuple, list)) or len(data) not in (2, 4):
        raise TypeError("run: data is a data source's name, or (x, y) or (x, y, x_test, y_test) numpy arrays")
    arrays = []
    for i in range(0, len(data), 2):
        arrays += features_and_targets(data[i], data[i + 1])
    paths = []
    for name, array in zip(["x", "y", "x_test", "y_test"], arrays):
        paths.append(os.path.join(folder, name + ".npy"))
        np.save(paths[-1], array)
    return "npy:" + ",".join(paths), arrays[0], arrays[1]


def _spec_of(model, x, y, what):
    """A sweep's entry as a spec dict: a compiled Sequential's spec (its input's and targets' widths
    from x and y where given), or a spec dict as it is (a copy); a TypeError naming `what`
    otherwise."""
    if isinstance(model, Sequential):
        if x is not None:
            model.see_data(x, y)
        return model.spec()
    if isinstance(model, dict):
        return dict(model)
    raise TypeError(f"{what} is {type(model).__name__}; expected a multifit.Sequential (compiled) or a spec dict")


def _sweep_file(sweep, folder, x=None, y=None):
    """The sweep as a file the command line reads: a path as it is; a dict, or a list of models
    (Sequential or spec dicts), written into `folder` as JSON. A Sequential takes its input's and
    targets' widths from x and y where given."""
    if isinstance(sweep, (str, os.PathLike)):
        return os.fspath(sweep)
    if isinstance(sweep, dict):
        document = sweep
    elif isinstance(sweep, (list, tuple)):
        document = {"name": "sweep", "models": [_spec_of(model, x, y, f"run: sweep entry {i}")
                                                for i, model in enumerate(sweep)]}
    else:
        raise TypeError(f"run: sweep is {type(sweep).__name__}; expected a sweep file's path, a sweep dict, or a "
                        f"list of models")
    path = os.path.join(folder, f"{document.get('name', 'sweep')}.json")
    with open(path, "w") as f:
        json.dump(document, f)
    return path


def _flags(options):
    """Keyword arguments as the command line's flags: name_with_underscores=value is --name-with-
    underscores value; True is the flag alone, False and None leave it out; a tuple or list gives
    its values one after another."""
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag] + [str(v) for v in value]
        else:
            args += [flag, str(value)]
    return args


def cli(*args):
    """`multifit ARGS...` in this process: its exit code. A mistake in the arguments raises
    ValueError with the command line's line; Ctrl-C stops the run (its models report, its
    document is written) and raises KeyboardInterrupt."""
    return _cli(args)[0]


def _cli(args, capture=False, judge=None, status=None):
    """(exit code, what it printed on standard output and on standard error when `capture`, else
    "" and ""). `judge` rules on a run's trials after each epoch (the binding's judge.h); `status`
    takes the run's status as each model ends, in place of its status lines."""
    code, mistake, printed, notes = _multifit.cli([os.fspath(a) for a in args], capture, judge, status)
    if mistake:
        raise ValueError(mistake)
    return code, printed, notes


def _metric_value(model, metric):
    """The model's value of the ranking's metric (study/report/ranking.h): its last epoch's
    validation metric or training loss, its test metric, or its train_s."""
    if metric in ("train_s", "test_loss", "test_accuracy"):
        return model.get(metric)
    epochs = model.get("epochs") or []
    return epochs[-1].get(metric) if epochs else None


def _auto_answer(auto):
    """--mode auto's answer in one sentence: the mode it chose, and what its calibration predicted
    of each mode's wall."""
    predicted = sorted(auto["calibration"], key=lambda c: c["predicted_wall_s"])
    walls = ", ".join(f"{c['mode']} {c['predicted_wall_s']:.3g} s" for c in predicted)
    return (f"auto chose {auto['mode']}, the shortest wall its calibration of at most "
            f"{auto['calibration_steps']} steps per model predicted ({walls})")


class _StatusBar:
    """A run's status as a tqdm.auto bar (in a notebook, its widget): the models ended of the run's,
    their statuses counted and the best so far; a new bar for each run of several (mode="all",
    repeat)."""

    def __init__(self, tqdm):
        self.tqdm, self.bar = tqdm, None

    def __call__(self, ended, models, statuses, best):
        if self.bar is None or ended < self.bar.n:
            self.close()
            self.bar = self.tqdm(total=models, unit="model", desc="multifit")
        self.bar.n = ended
        self.bar.set_postfix_str("; ".join(part for part in (statuses, best) if part))

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _status_bar(quiet):
    """The run's status bar where tqdm is installed and the run is not quiet; else None, and the
    run says its status in lines of its own."""
    if quiet:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return _StatusBar(tqdm)


class Result:
    """What a run measured: `document` (the result document, study/report/report.h's fields), `runs`
    (each mode's run, in order), `models` (every model of every run, each with its run's "mode"
    and "repeat"), `mode` (the mode it ran: auto's choice, or "all"), `answer` (in one sentence: the
    comparison of modes where modes were compared, auto's choice and why), `exit_code` (the command
    line's: 0, 1 a model failed or diverged, 2 a mistake, 130 interrupted), `tables` and `notes`
    (the command line's tables and its lines on stderr, as run(quiet=True) kept them rather than
    print them), `save_best_folder` (save_best's folder, where the run kept its best models)."""

    def __init__(self, document, csv_text, exit_code, tables="", notes="", save_best_folder=None):
        self.document = document
        self.runs = document["runs"] if "runs" in document else [document]
        self.mode = document.get("mode")
        auto = document.get("auto")
        self.answer = document.get("answer") or (_auto_answer(auto) if auto else None)
        self.exit_code = exit_code
        self.tables = tables
        self.notes = notes
        self.save_best_folder = save_best_folder
        self._csv = csv_text
        self.models = [dict(m, mode=run.get("mode"), repeat=run.get("repeat")) for run in self.runs
                       for m in run.get("models", [])]

    def to_pandas(self):
        """The CSV's rows as a DataFrame: one row per model and run, the CSV's columns (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.to_pandas needs pandas: pip install pandas") from e
        return pd.read_csv(io.StringIO(self._csv)) if self._csv.strip() else pd.DataFrame()

    def best(self, k=1):
        """The k best models of the last run by its ranking (--rank-by, or the run's default), best
        first, as a DataFrame (needs pandas): `rank`, `name`, the ranking's metric under its name
        (its last epoch's, or the test's), one column per sweep value (learning_rate, seed...),
        `status`, `params`, `train_s`, and `weights` and `spec`, the files save_best kept (empty
        where the run kept none). Each row's `model` is the document's model dict."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.best needs pandas: pip install pandas") from e
        run = self.runs[-1]
        by_name = {m["name"]: m for m in run.get("models", [])}
        metric = run.get("rank_by")
        kept = self._kept_files()
        rows = []
        for rank, name in enumerate(run.get("ranking", [])[:k], 1):
            m = by_name[name]
            row = {"rank": rank, "name": name, metric: _metric_value(m, metric), **m.get("values", {}),
                   "status": m.get("status"), "params": m.get("params"), "train_s": m.get("train_s"),
                   "weights": kept.get(name, {}).get("weights"), "spec": kept.get(name, {}).get("spec"),
                   "model": m}
            rows.append(row)
        return pd.DataFrame(rows)

    def _kept_files(self):
        """{name: {"weights", "spec"}} of save_best's folder (its best.json), where the run kept one."""
        folder = self.save_best_folder
        path = os.path.join(folder, "best.json") if folder else None
        if not path or not os.path.exists(path):
            return {}
        with open(path) as f:
            listed = json.load(f)
        return {e["name"]: {key: os.path.join(folder, e[key]) if e.get(key) else None
                            for key in ("weights", "spec")} for e in listed.get("models", [])}

    def report(self, path, title=None):
        """The run as one HTML page (scripts/report.py's, with matplotlib's charts) at `path`."""
        with tempfile.TemporaryDirectory() as folder:
            doc = os.path.join(folder, "result.json")
            with open(doc, "w") as f:
                json.dump(self.document, f)
            command = [sys.executable, "-m", "multifit.report_page", doc, "-o", os.fspath(path)]
            if title:
                command += ["--title", title]
            subprocess.run(command, check=True)
        return os.fspath(path)

    def __repr__(self):
        modes = ", ".join(str(r.get("mode")) for r in self.runs)
        return f"Result({len(self.models)} models; {modes}; exit code {self.exit_code})"


def run(sweep, mode="serial", repeat=1, *, data=None, backend="auto", quiet=False, json_path=None, **options):
    """Trains a sweep in `mode` (serial, streams, processes, packed, all or auto), `repeat` times,
    and returns its Result. `sweep`: a sweep file's path, a sweep dict (as a file holds it), or a
    list of compiled Sequential models or spec dicts (specs to train: run() does not change the
    models' weights). `data`: for every model, a data source (fashion-mnist, csv:TRAIN[,TEST],
    synthetic:KIND, ...) or numpy arrays (x, y) or (x, y, x_test, y_test), given once and shared by
    the models (one copy per process). Other keywords are `multifit run`'s flags (epochs=2,
    concurrency=4, rank_by="val_loss", save_best=(3, "best"), verbose=True...). `quiet` prints no
    progress and keeps the tables in Result.tables rather than print them; notes and errors still go
    to stderr. Not quiet, where tqdm is installed, the run's status is a tqdm.auto bar (a widget in a
    notebook) in place of its status lines. `json_path` keeps the result document there too.

    Raises ValueError for a mistake in the sweep or the options (the command line's message),
    KeyboardInterrupt after Ctrl-C (the run's models stopped and reported). A model that fails (a
    bad entry of the sweep, data that does not fit it) fails alone, as in the command line: the run
    goes on, its Result says why, and a RuntimeWarning names the first.
    """
    return _run(sweep, mode, repeat, data, backend, quiet, json_path, options)


def _run(sweep, mode, repeat, data, backend, quiet, json_path, options, judge=None):
    """run()'s work; `judge` (None: none) rules on each trial after each epoch in place of a
    scheduler: an object with `metric`, `name` and `judge(trial, epochs, value) -> stop`
    (multifit.integration.optuna's pruner)."""
    with tempfile.TemporaryDirectory(prefix="multifit-run-") as folder:
        document_path = json_path or os.path.join(folder, "result.json")
        csv_path = os.path.join(folder, "result.csv")
        source, x, y = _data_source(data, folder)
        args = ["run", _sweep_file(sweep, folder, x, y), "--mode", mode, "--repeat", str(repeat), "--backend", backend,
                "--json", document_path, "--csv", csv_path]
        if source is not None:
            args += ["--data", source]
        args += _flags(dict(options, quiet=quiet))
        bar = _status_bar(quiet)
        try:
            code, tables, notes = _cli(args, capture=quiet, judge=judge, status=bar)
        finally:
            if bar is not None:
                bar.close()
        with open(document_path) as f:
            document = json.load(f)
        csv_text = ""
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                csv_text = f.read()
    save_best = options.get("save_best")
    result = Result(document, csv_text, code, tables, notes,
                    os.fspath(save_best[1]) if isinstance(save_best, (list, tuple)) else None)
    if quiet:  # its errors and warnings still said
        said = [line for line in notes.splitlines() if "error" in line or "warning" in line]
        if said:
            print("\n".join(said), file=sys.stderr)
    failed = [m for m in result.models if m.get("status") not in ("ok", "stopped")]
    if failed:  # the run went on and its document says why; a notebook should see it too
        warnings.warn(f"multifit.run: {len(failed)} of {len(result.models)} models did not train: "
                      f"{failed[0]['name']}: {failed[0].get('error')}", RuntimeWarning, stacklevel=3)
    return result
