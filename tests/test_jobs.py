"""``check --jobs N`` judges in N processes and prints exactly what one process prints."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import LOGS, ROOT

TRAINLINT = [sys.executable, "-m", "trainlint.cli", "check"]


@pytest.mark.parametrize("fmt", ["json", "sarif", "full", "github"])
def test_jobs_2_output_equals_serial(fmt: str):
    paths = ["fixtures/runs", str(LOGS / "gpt2_train.11672114.log"), "fixtures/logs/does-not-exist.log"]
    serial = subprocess.run([*TRAINLINT, "--output-format", fmt, *paths], capture_output=True, text=True,
                            cwd=ROOT, timeout=300)
    parallel = subprocess.run([*TRAINLINT, "--jobs", "2", "--output-format", fmt, *paths], capture_output=True,
                              text=True, cwd=ROOT, timeout=300)
    assert serial.returncode == parallel.returncode == 1
    assert parallel.stdout == serial.stdout and parallel.stderr == serial.stderr
    assert serial.stdout.count("TP-DIVERGE") >= 2  # a real judgement, several logs
