"""Shared fixtures of the fp4train Python tests.

Run by test/Python/pytest.test with PYTHONPATH=<build>/python_packages and
FP4TRAIN_TOOLS_DIR=<build>/bin; by hand:

    PYTHONPATH=build/python_packages FP4TRAIN_TOOLS_DIR=build/bin \\
        /usr/bin/python3 -m pytest python/test
"""

import os
import pathlib

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = SOURCE_ROOT / "examples"


@pytest.fixture(scope="session")
def tools_dir():
    path = pathlib.Path(os.environ.get("FP4TRAIN_TOOLS_DIR",
                                       SOURCE_ROOT / "build" / "bin"))
    if not (path / "fp4-opt").exists():
        pytest.fail(f"no fp4-opt in {path}: set FP4TRAIN_TOOLS_DIR")
    return path


@pytest.fixture(scope="session")
def ctx():
    import fp4train
    return fp4train.Context()


def read_example(name):
    return (EXAMPLES / name).read_text()
