"""The install a user gets without a package index entry: `python -m build` makes a wheel and an sdist without
warnings, and the wheel installed into a fresh virtual environment runs `trainlint check`."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import ROOT, RUNS

pytestmark = pytest.mark.slow


def test_wheel_builds_cleanly_installs_and_checks(tmp_path: Path):
    pytest.importorskip("build", reason="the build package is not installed (pip install -e '.[test]')")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as a user's machine has it
    out = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    warnings = [ln for ln in (r.stdout + r.stderr).splitlines() if "warning" in ln.lower()]
    assert not warnings, warnings
    wheel = next(out.glob("trainlint-*.whl"))
    assert next(out.glob("trainlint-*.tar.gz"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([str(env_dir / "bin" / "trainlint"), "check", str(RUNS / "gallery-lr_hot")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 1 and "TP-DIVERGE [FAIL]" in r.stdout, r.stdout + r.stderr
    nvim = subprocess.run([str(env_dir / "bin" / "trainlint"), "editor-config", "nvim"], capture_output=True, text=True)
    assert Path(nvim.stdout.strip()).is_file()  # the Neovim config ships in the wheel
