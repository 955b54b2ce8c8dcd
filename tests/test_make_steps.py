"""`make test` runs every step and fails overall when one failed (issue 25 item 17)."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

RUNNER = ROOT / "tests" / "run_steps.py"


def test_a_failing_step_does_not_stop_the_later_ones(tmp_path):
    marker = tmp_path / "later-step-ran"
    r = subprocess.run([sys.executable, str(RUNNER), "unit=exit 3", f"editors=touch {marker}", "lint=true"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert marker.exists(), "the step after the failing one did not run"
    assert "make test: failed steps: unit" in r.stdout
    assert re.search(r"FAILED\s+unit\s+exit 3", r.stdout) and re.search(r"ok\s+editors\s+exit 0", r.stdout)


def test_every_step_succeeding_exits_0(tmp_path):
    r = subprocess.run([sys.executable, str(RUNNER), "a=true", "b=true"], capture_output=True, text=True)
    assert r.returncode == 0 and "every step succeeded" in r.stdout


def test_make_test_goes_through_the_runner_with_each_step():
    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "tests/run_steps.py" in recipe
    for step in ("lint=", "unit=", "extension=", "editors="):
        assert step in recipe, f"make test has no {step} step"
