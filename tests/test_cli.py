"""``trainlint check`` / ``series`` / ``events`` as whole processes: output shapes and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import LOGS, ROOT, RUNS

TRAINLINT = [sys.executable, "-m", "trainlint.cli"]


def run(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRAINLINT, *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=120)


def test_text_lines_like_ruff_and_exit_1_on_fail():
    r = run("check", "fixtures/runs/gallery-lr_hot")
    assert r.returncode == 1, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(
        "fixtures/runs/gallery-lr_hot/trainer_state.json:429:15: TP-DIVERGE [FAIL] `loss` (per-step):")
    # concise: the measurement only, in at most 160 characters (the asides and last clauses are in `full`)
    assert " — " not in first and first.endswith("end level 7.55681 is 3.22x the lowest level 2.35031 …")
    assert all(len(ln) <= 160 for ln in r.stdout.splitlines()), r.stdout
    full = run("check", "--output-format", "full", "fixtures/runs/gallery-lr_hot").stdout.splitlines()[0]
    assert full.endswith(
        "last point/minimum 5.36; judged over its noise: 44.9 level errors above the lowest level, where 5.73 were "
        "needed (log-loss noise 0.0248, from the MAD of its last 59 point-to-point changes; the lowest of 12 windows)")
    assert r.stdout.splitlines()[-1] == "Judged 1 log: 1 FAIL."


def _on_a_terminal(*args: str, env: dict[str, str]) -> bytes:
    """What the CLI writes when its stdout is a terminal (a pseudo-terminal)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execve(TRAINLINT[0], [*TRAINLINT, *args], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out


def test_colour_on_a_terminal_unless_no_color():
    always = run("check", "--color", "always", "fixtures/runs/gallery-lr_hot").stdout
    assert "\x1b[1;31m[FAIL]\x1b[0m" in always
    assert "\x1b[" not in run("check", "fixtures/runs/gallery-lr_hot").stdout  # auto: a pipe is not a terminal
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert b"\x1b[1;31m[FAIL]" in _on_a_terminal("check", "fixtures/runs/gallery-lr_hot", env=env)
    plain = _on_a_terminal("check", "fixtures/runs/gallery-lr_hot", env={**env, "NO_COLOR": "1"})
    assert b"TP-DIVERGE [FAIL]" in plain and b"\x1b[" not in plain


def test_full_output_marks_the_value_and_adds_the_interpretation_and_related_lines():
    lines = run("check", "--output-format", "full", "fixtures/runs/gallery-lr_hot").stdout.splitlines()
    assert lines[0].startswith("fixtures/runs/gallery-lr_hot/trainer_state.json:429:15: TP-DIVERGE [FAIL]")
    assert lines[1:4] == ["    |", '429 |       "loss": 7.492252349853516,', "    |               " + "^" * 17]
    assert lines[4].startswith("  = The loss ends well above")
    assert lines[5] == "  = minimum: fixtures/runs/gallery-lr_hot/trainer_state.json:16:15: lowest level 2.35031"


def test_exit_0_on_pass_and_warn_and_2_when_nothing_judged(tmp_path):
    assert run("check", "fixtures/runs/gallery-healthy").returncode == 0
    assert run("check", "fixtures/runs/gallery-overfit").returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("check", str(empty))
    assert r.returncode == 2 and "no training logs found" in r.stderr
    r = run("check", str(tmp_path / "nope.log"))
    assert r.returncode == 2 and "does not exist" in r.stdout
    r = run("check", "--bogus")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = run("check", str(LOGS / "gpt2_train.11672087.log"))  # OOM at start-up: no steps at all
    assert r.returncode == 2


def test_json_schema():
    r = run("check", "--format", "json", "fixtures/runs/gallery-overfit", "fixtures/runs/gallery-healthy")
    doc = json.loads(r.stdout)
    assert set(doc) >= {"schema_version", "trainlint_version", "reports", "worst_verdict", "error"}
    assert doc["schema_version"] == 1 and doc["worst_verdict"] == "WARN"
    rep = doc["reports"][0]
    assert set(rep) >= {"path", "format", "verdict", "series", "findings", "checks"}
    assert set(rep["series"][0]) >= {"name", "role", "points", "first_step", "last_step"}
    f = rep["findings"][0]
    assert set(f) >= {"id", "level", "series", "message", "evidence", "location", "related"}
    assert set(f["evidence"]) == {"text", "values"} and f["location"]["line"] == 586
    assert set(f["location"]) >= {"path", "line", "column", "end_line", "end_column"}
    assert set(f["related"][0]) >= {"role", "path", "line", "column", "message"}
    assert set(rep["checks"]) >= {"ran", "skipped"}
    assert rep["checks"]["skipped"]["throughput"]["reason"] == "no-series"


def test_sarif_points_at_real_lines_with_relative_uris():
    r = run("check", "--format", "sarif", "fixtures/runs/gallery-lr_hot")
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0"
    res = doc["runs"][0]["results"]
    div = [x for x in res if x["ruleId"] == "TP-DIVERGE"][0]
    loc = div["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "fixtures/runs/gallery-lr_hot/trainer_state.json"
    assert loc["region"]["startLine"] == 429 and loc["region"]["startColumn"] == 15
    assert div["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 16
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert all(rule["helpUri"].endswith(f"{rule['id']}.md") for rule in rules)


def test_select_ignore_and_quiet():
    r = run("check", "-q", "--ignore", "TP-GRAD-SPIKE", "fixtures/runs/gallery-lr_hot")
    assert "TP-GRAD-SPIKE" not in r.stdout and "TP-DIVERGE" in r.stdout and "Judged" not in r.stdout
    r = run("check", "--select", "TP-ZERO-LR", "fixtures/runs/gallery-lr_hot")
    assert r.returncode == 0 and "TP-DIVERGE" not in r.stdout


def test_series_json_shape_and_lines():
    r = run("series", "--format", "json", "fixtures/runs/gallery-healthy/trainer_state.json")
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1
    [f] = doc["files"]
    assert set(f) >= {"path", "format", "series", "events", "problems"}
    loss = [s for s in f["series"] if s["name"] == "loss"][0]
    assert set(loss) >= {"name", "role", "aggregation", "points", "first", "last", "min"}
    assert loss["last"] == {"step": 300, "value": 1.0645489692687988, "line": 429, "column": 15}
    assert f["events"][0]["kind"] == "end-of-run"


def test_series_on_event_file_gives_records_and_unreadable_exit_2(tmp_path):
    r = run("series", "--format", "json", str(LOGS / "events.out.tfevents.1737181496.DESKTOP-STTNOT7.18524.0"))
    s = json.loads(r.stdout)["files"][0]["series"][0]
    assert s["first"]["line"] is None and isinstance(s["first"]["record"], int)
    junk = tmp_path / "x.log"
    junk.write_bytes(b"\x00\x01\x02" * 100)
    r = run("series", str(junk))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_events_view_prints_one_scalar_per_line():
    r = run("events", str(RUNS / "modded-nanogpt-tb" / "tensorboard_logs" /
                          "events.out.tfevents.1736552800.hopper-h100-0.403928.0"))
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[0].startswith("# trainlint view of")
    step, tag, value, wall, record = lines[1].split("\t")
    assert tag in ("Loss/Train", "Loss/Validation") and float(value) > 0 and int(record) >= 1


def test_series_works_on_every_corpus_file_without_a_traceback():
    from conftest import CORPUS

    if not CORPUS.exists():
        import pytest

        pytest.skip(f"corpus not available: {CORPUS}")
    paths = sorted(str(p) for p in CORPUS.rglob("*") if p.is_file())
    r = subprocess.run([*TRAINLINT, "series", *paths], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert r.returncode == 2  # some corpus files are not training logs, each said in one line
    for line in r.stderr.splitlines():
        assert line.startswith("trainlint: ") and ("not a training log" in line or "cannot be read" in line)
