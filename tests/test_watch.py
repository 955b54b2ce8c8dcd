"""`trainlint watch`: the judge in a terminal while a run writes its log."""

from __future__ import annotations

import io
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, LOGS


def start(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "trainlint.cli", "watch", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def first_line(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()  # the first status line: the initial judgement is done
    assert line, proc.stderr.read()
    return line


def test_until_fail_exits_1_within_2_seconds_of_a_nan_appended_to_a_real_log(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    log = run / "gpt2_train.log"
    shutil.copy(LOGS / "gpt2_train.11672114.log", log)  # a real llm.c log (Slurm stdout)
    proc = start("--until-fail", ".", cwd=run)
    try:
        status = first_line(proc)
        assert status.startswith("[trainlint] ") and "last step 750" in status, status
        with open(log, "a") as f:
            f.write("step  751/19560 | loss nan (+0.00z)| norm 0.5812 (-1.13z)| lr 6.00e-04 | 4212.08 ms\n")
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == 1 and took < 2.0, (proc.returncode, took, out, err)
    assert "gpt2_train.log" in out and "TP-NAN [FAIL] `loss`: 1 of 751 logged values are non-finite" in out, out


def test_ctrl_c_on_a_healthy_run_exits_0(tmp_path: Path):
    shutil.copy(FIXTURES / "live" / "hf-healthy" / "train.log", tmp_path / "train.log")
    proc = start(str(tmp_path), cwd=tmp_path)
    try:
        assert "PASS" in first_line(proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err, err


def test_json_lines_and_a_resolved_finding(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n" for i in range(1, 41)) + "step 41, loss: nan\n")
    proc = start("--format", "json", str(tmp_path), cwd=tmp_path)
    try:
        first = json.loads(first_line(proc))
        assert (first["event"], first["id"], first["line"]) == ("finding", "TP-NAN", 41)
        assert json.loads(proc.stdout.readline())["event"] == "status"
        log.write_text("".join(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n" for i in range(1, 43)))  # rewritten
        events = [json.loads(proc.stdout.readline()) for _ in range(2)]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=10)
    assert events[0]["event"] == "resolved" and events[0]["id"] == "TP-NAN"
    assert events[1]["event"] == "status" and events[1]["verdict"] == "PASS"


class _CtrlCAfterStatus(io.StringIO):
    """A terminal whose user presses Ctrl-C the moment the first status line is shown.

    The signal lands wherever the watcher is at that instant; raising it from the write of the status line puts
    it at the earliest such point, deterministically (the subprocess test above hits it 1 time in 5).
    """

    def __init__(self) -> None:
        super().__init__()
        self.fired = False

    def write(self, s: str) -> int:
        n = super().write(s)
        if not self.fired and "[trainlint]" in self.getvalue() and s.endswith("\n"):
            self.fired = True
            raise KeyboardInterrupt
        return n


def test_ctrl_c_at_any_point_after_the_first_status_line_exits_by_the_verdict(tmp_path: Path):
    from trainlint import config
    from trainlint.watch import run

    shutil.copy(FIXTURES / "live" / "hf-healthy" / "train.log", tmp_path / "train.log")
    out = _CtrlCAfterStatus()
    try:
        code = run([str(tmp_path)], config.for_path(str(tmp_path)), out=out)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C right after the status line escaped watch (the CLI turns that into exit 2)")
    assert code == 0
    assert out.fired and "PASS" in out.getvalue()
