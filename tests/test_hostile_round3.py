"""Issue 25, hostile input round three: each test reproduces one defect the attacker's pass found.

The server-side halves (a frozen server, the workspace's own code imported) are in ``test_lsp_hostile.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import RUNS

CLI = [sys.executable, "-m", "trainlint.cli"]

# The pattern: `(?:x+)+y` backtracks 2^n ways on n x's with no y (28 x: 23 s in Python's re).
CATASTROPHIC = r"^step (?P<step>\d+) (?:x+)+y loss=(?P<loss>\S+)"


def catastrophic_project(root: Path, xs: int = 40) -> Path:
    """A `formats:` pattern that backtracks exponentially, a log that triggers it, and a diverging run beside."""
    (root / "logs").mkdir(parents=True)
    (root / ".trainlint.yaml").write_text(
        "formats:\n  - files: 'logs/*.out'\n    lines:\n      - '" + CATASTROPHIC + "'\n")
    rows = [f"step {i} xxy loss={2.0 - i / 100:.3f}" for i in range(1, 30)]
    (root / "logs" / "job.out").write_text("\n".join([*rows[:10], "step 2 " + "x" * xs, *rows[10:]]) + "\n")
    shutil.copytree(RUNS / "gallery-lr_hot", root / "lr_hot")
    return root


def test_item1_a_catastrophic_user_pattern_cannot_hang_the_cli(tmp_path: Path) -> None:
    root = catastrophic_project(tmp_path / "p")
    r = subprocess.run([*CLI, "check", "--format", "json", "."], cwd=root, capture_output=True, text=True,
                       timeout=60)
    import json

    reports = {rep["path"].removeprefix("./"): rep for rep in json.loads(r.stdout)["reports"]}
    assert r.returncode == 1, r.stderr
    assert reports["lr_hot/trainer_state.json"]["verdict"] == "FAIL"
    job = reports["logs/job.out"]
    assert (job["format"], job["verdict"], job["series"][0]["points"]) == ("custom", "PASS", 29), job


def test_item1_a_pattern_re2_cannot_run_is_refused_on_its_yaml_line(tmp_path: Path) -> None:
    from trainlint.config import load

    (tmp_path / ".trainlint.yaml").write_text(
        "formats:\n  - files: '*.out'\n    lines:\n      - 'it=(?P<step>\\d+) loss=(?P<loss>\\S+)'\n"
        "      - 'it=(?P<step>\\d+) (?P<loss>\\S+)(?=x)'\n      - '(?P<step>\\d+) (?P<loss>\\d+) \\1'\n")
    cfg = load(str(tmp_path / ".trainlint.yaml"))
    assert [line for line, _ in cfg.placed] == [5, 6], cfg.placed
    assert all("cannot be run in linear time" in m for _, m in cfg.placed), cfg.placed
    assert len(cfg.formats) == 1 and len(cfg.formats[0].patterns) == 1
