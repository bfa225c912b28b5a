"""The wheel works from anywhere: built from this tree, installed into a fresh virtual environment,
run from an empty directory, it finds its bank and budgets inside the package and writes its
report where it is told. Offline: the wheel is built with this environment's setuptools and its
dependencies are this environment's packages (a .pth file), so nothing downloads."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from helpers import REPO

# What a build does not read: version control, environments, build outputs, generated reports.
NOT_SOURCE = shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__", "runs", "latest")


def _run(args, cwd, env=None, timeout=300) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(map(str, args))}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, nbx script, clean environment) of a fresh venv holding the wheel of this tree."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=NOT_SOURCE)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", tmp / "dist", src], cwd=tmp)
    wheel, = (tmp / "dist").glob("nbx-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp)
    py = venv / "bin" / "python"
    purelib = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).stdout.strip())
    (purelib / "nbx-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=tmp)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBX_BANK", "NBX_DATA")}
    return py, venv / "bin" / "nbx", env, purelib, wheel


def test_the_wheel_holds_the_data_the_license_and_the_plugin(installed):
    *_, wheel = installed
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read("nbx-0.1.0.dist-info/METADATA").decode()
        entry = z.read("nbx-0.1.0.dist-info/entry_points.txt").decode()
        top = z.read("nbx-0.1.0.dist-info/top_level.txt").decode().split()
    bank = {n for n in names if n.startswith("nbx/data/reference_bank/")}
    committed = sum(1 for _ in (REPO / "reference_bank").glob("*/*.txt")) + 1
    assert len(bank) == committed and "nbx/data/reference_bank/MANIFEST.json" in bank
    assert {f"nbx/data/reports/budgets/{p.name}" for p in (REPO / "reports" / "budgets").glob("*.json")} <= names
    assert "nbx/harness/report/templates/report.html.j2" in names
    # the float32 hard-case tables the kernels settle from (kernels/hard32.py)
    tables = {f"nbx/kernels/hard32_cases/{p.name}" for p in (REPO / "nbx" / "kernels" / "hard32_cases").glob("*.json")}
    assert len(tables) >= 30 and tables <= names
    assert "License-Expression: Apache-2.0" in meta and "nbx-0.1.0.dist-info/licenses/LICENSE" in names
    assert "[pytest11]\nnbx = nbx.pytest_plugin" in entry
    assert top == ["nbx"], f"top-level packages {top}: only nbx is installed"


def test_the_installed_harness_runs_from_an_empty_directory(installed, tmp_path):
    py, nbx, env, purelib, _ = installed
    work = tmp_path / "empty"
    work.mkdir()
    run = _run([nbx, "run", "--op", "exp", "--dtype", "float32", "--profile", "ci", "--suite", "bank",
                "--out", "here"], cwd=work, env=env)
    print(run.stdout)
    assert "0 raised" in run.stdout and "gate: PASS" in run.stdout
    assert (work / "here" / "report.json").is_file()
    gate = _run([nbx, "gate", "--report", "here"], cwd=work, env=env)
    print(gate.stdout)
    assert str(purelib / "nbx" / "data" / "reports" / "budgets") in gate.stdout
    assert not (purelib / "reports").exists() and not (purelib / "nbx" / "reports").exists()
    imp = _run([py, "-c", "import nbx.oracles, nbx; from nbx.oracles import ORACLES; print(nbx.__file__, len(ORACLES))"],
               cwd=work, env=env)
    assert imp.stdout.startswith(str(purelib / "nbx"))
    no_top = subprocess.run([py, "-c", "import oracles"], cwd=work, env=env, capture_output=True, text=True)
    assert no_top.returncode == 1 and "No module named 'oracles'" in no_top.stderr


def test_nbx_data_names_another_data_folder(installed, tmp_path):
    """$NBX_DATA: a folder of the checkout's layout (a copy of the budgets here) replaces the packaged one."""
    py, nbx, env, purelib, _ = installed
    data = tmp_path / "data"
    shutil.copytree(REPO / "reports" / "budgets", data / "reports" / "budgets")
    shutil.copytree(REPO / "reference_bank", data / "reference_bank")
    out = _run([py, "-c", "from nbx.harness.gate import budgets; from nbx.harness.suites.bank import storage; "
                "print(budgets.ROOT); print(storage.root())"], cwd=tmp_path, env={**env, "NBX_DATA": str(data)})
    assert out.stdout.split() == [str(data / "reports" / "budgets"), str(data / "reference_bank")]


def test_the_installed_kernels_settle_from_their_tables(installed, tmp_path):
    """sigmoid(0xb6c60000), a float32 hard case (float64's value is the midpoint's even side), comes
    back correctly rounded from the installed package: its table ships and is found there."""
    py, _, env, purelib, _ = installed
    code = ("import numpy as np, nbx; x = np.full(8, 0xb6c60000, np.uint32).view(np.float32); "
            "import nbx.kernels.hard32; print(nbx.kernels.hard32.CASES_DIR); "
            "print(hex(nbx.sigmoid(nbx.from_numpy(x)).numpy().view(np.uint32)[0]))")
    out = _run([py, "-c", code], cwd=tmp_path, env=env).stdout.split()
    assert out[0].startswith(str(purelib)) and out[1] == "0x3effffcf", out


def test_the_installed_harness_fails_without_budgets(installed, tmp_path):
    """A data folder with the bank and no budgets: `nbx run` and `nbx gate` both fail (exit 1) and
    name the missing budgets file; nothing passes for want of a budget."""
    py, nbx, env, purelib, _ = installed
    data = tmp_path / "data"
    shutil.copytree(REPO / "reference_bank", data / "reference_bank")
    env = {**env, "NBX_DATA": str(data)}
    run = subprocess.run([str(nbx), "run", "--op", "exp", "--dtype", "float32", "--profile", "ci", "--suite", "bank",
                          "--out", "here"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "gate: PASS" not in run.stdout and str(data / "reports" / "budgets") in run.stdout + run.stderr
    gate = subprocess.run([str(nbx), "gate", "--report", "here"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert gate.returncode == 1 and str(data / "reports" / "budgets") in gate.stdout + gate.stderr, \
        gate.stdout + gate.stderr
