"""``check`` judges the bytes (issue 30): the same files give the same report whatever their age. A fresh copy
(a ``git clone`` in CI, a ``cp``) used to read as runs still being written and got other verdicts than the same
files two hours later. Liveness comes only from ``--live`` (and from watch and the server, which measure it),
and a report judged as live says so in every output format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES

LIVE = FIXTURES / "live"
# Runs whose verdict depended on the file's age (a live run waits for progress: TP-DEAD-RUN, TP-FLAT,
# TL-LR-WARMUP; TP-DIVERGE is a WARN while young) and runs that never did, corpus and gallery.
RUNS = [
    LIVE / "hf-diverge", LIVE / "nanogpt-healthy", LIVE / "keras-diverge", LIVE / "fp16-collapse",
    LIVE / "tqdm-diverge", LIVE / "trl-nan", LIVE / "hf-warmup",
    CORPUS / "csv_logs" / "0Xero7__slm_training__lightning_logs__version_0__metrics.csv",
    CORPUS / "hf_trainer_state" / "aigoncharov__trainer_state_viz__trainer_state.json",
    CORPUS / "text_logs" / "HectorFCardenas__llm.c__gpt2_train.11672114.log",
    CORPUS / "trainproof" / "evidence" / "xtts_coqui_feb2026" / "trainer_0_log.txt",
]


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainlint.cli", "check", *args], capture_output=True, text=True,
                          cwd=FIXTURES.parent)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    missing = [p for p in RUNS if not p.exists()]
    if len(missing) > 4:
        pytest.skip(f"corpus files not available: {missing[:2]} (set TRAINLINT_CORPUS to ../shared/corpus)")
    for p in RUNS:
        if not p.exists():
            continue
        dst = root / f"{p.parent.name}__{p.name}"
        if p.is_dir():
            shutil.copytree(p, dst)  # copytree keeps mtimes (copy2): set them to now, as a fresh clone has them
        else:
            dst.mkdir()
            shutil.copy(p, dst / p.name)
    now = time.time()
    for f in root.rglob("*"):
        os.utime(f, (now, now))
    return root


def _age(root: Path, seconds: float) -> None:
    then = time.time() - seconds
    for f in root.rglob("*"):
        os.utime(f, (then, then))


def test_fresh_copy_and_old_files_give_identical_json(tmp_path):
    missing = [p for p in RUNS if not p.exists()]
    if missing:  # the corpus logs among the runs: without them 8 reports, under the 10 this test judges
        pytest.skip(f"corpus files not available: {missing[:2]} (set TRAINLINT_CORPUS to ../shared/corpus)")
    root = _copy(tmp_path)
    fresh = _check("--format", "json", str(root))
    _age(root, 2 * 3600)
    old = _check("--format", "json", str(root))
    assert fresh.returncode == old.returncode
    a, b = json.loads(fresh.stdout), json.loads(old.stdout)
    assert len(a["reports"]) >= 10
    assert a == b
    assert not any(r["live"] for r in a["reports"])
    # the ages did differ: a server or watch would have judged the fresh copy as live
    verdicts = {r["path"]: r["verdict"] for r in a["reports"]}
    assert verdicts[str(root / "live__hf-diverge" / "train.log")] == "FAIL"


def test_live_is_declared_and_said(tmp_path):
    root = _copy(tmp_path)
    _age(root, 2 * 3600)
    target = str(root / "live__nanogpt-healthy" / "train.log")
    live = json.loads(_check("--format", "json", "--live", target).stdout)
    assert [r["live"] for r in live["reports"]] == [True]
    stopped = json.loads(_check("--format", "json", target).stdout)
    assert [r["live"] for r in stopped["reports"]] == [False]
    text = _check("--live", target).stdout
    assert "[judged as a live run: rules that need progress wait]" in text
    assert "1 judged as live runs still being written" in text
    assert "judged as a live run" not in _check(target).stdout
    sarif = json.loads(_check("--format", "sarif", "--live", target).stdout)
    assert sarif["runs"][0]["properties"]["liveReports"] == [target]
    assert all(r["properties"].get("live") for r in sarif["runs"][0]["results"])
