"""Test configuration: the tests directory is importable (tests/helpers.py), and tests marked `cuda`
are skipped unless nbx chose the CUDA backend."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import nbx  # noqa: E402  (chooses the backend before any test module defines a kernel)


def pytest_collection_modifyitems(config, items):
    if nbx.backend_info()["backend"] == "cuda":
        return
    skip = pytest.mark.skip(reason="needs nbx's CUDA backend (NBX_BACKEND=cuda and a visible device)")
    for item in items:
        if item.get_closest_marker("cuda") is not None:
            item.add_marker(skip)
