#!/usr/bin/env bash
# The Python package in a virtual environment of its own: makes .venv (MULTIFIT_VENV names another)
# with what python/requirements.txt lists, when it lacks them, then `pip install .` into it (the
# binding and the multifit program, built in build/python/, which a second run reuses). With
# --test, runs the package's pytest suite (python/tests/) and executes the lab's notebook there.
# MULTIFIT_CUDA=ON|OFF as for scripts/build.sh; the tests build the CPU package (OFF) unless told.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv=${MULTIFIT_VENV:-.venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r python/requirements.txt
cuda=${MULTIFIT_CUDA:-}
[ "${1:-}" != --test ] || cuda=${MULTIFIT_CUDA:-OFF}
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation ${cuda:+-Ccmake.define.MULTIFIT_CUDA=$cuda} .
"$venv/bin/python" -c "import multifit; print('python:', multifit.build_info()['description'])"
if [ "${1:-}" = --test ]; then
  "$venv/bin/python" -m pytest -q python/tests
fi
