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


class _Broken:
    """A metric whose numel() or item() raises what no trainer documents."""

    def __init__(self, where: str) -> None:
        self.where = where

    def numel(self) -> int:
        if self.where == "numel":
            raise KeyError("numel")
        return 1

    def item(self) -> float:
        raise LookupError("item")


def test_item3_a_full_disk_never_raises_into_training_and_judging_goes_on(caplog) -> None:
    import logging

    from trainlint.integrations.guardian import Guardian

    g = Guardian(jsonl="/dev/full")
    with caplog.at_level(logging.WARNING, logger="trainlint"):
        for step in range(1, 40):
            g.observe(step, {"loss": 2.0 - step / 100})
        found = g.observe(40, {"loss": float("nan")})
    assert "TP-NAN" in {f.id for f in found}
    written = [r for r in caplog.records if "/dev/full" in r.getMessage()]
    assert len(written) == 1 and "No space left" in written[0].getMessage()
    g.close()


def test_item3_a_jsonl_path_that_cannot_be_opened_is_logged_not_raised(tmp_path: Path, caplog) -> None:
    import logging

    from trainlint.integrations.guardian import Guardian

    with caplog.at_level(logging.WARNING, logger="trainlint"):
        g = Guardian(jsonl=tmp_path / "no" / "such" / "folder" / "metrics.jsonl")
        g.observe(1, {"loss": 1.0})
    assert len(g.reader.log.series) == 1
    assert sum("metrics.jsonl" in r.getMessage() for r in caplog.records) == 1


def test_item3_numpy_steps_and_metrics_that_raise_never_escape(tmp_path: Path) -> None:
    import json

    import numpy as np

    from trainlint.integrations.guardian import Guardian

    out = tmp_path / "m.jsonl"
    g = Guardian(jsonl=out)
    g.observe(np.int64(3), {"loss": np.float32(1.5)})
    g.observe(np.array(4), {"loss": np.array(1.25), "bad": _Broken("item")})
    g.observe(np.float64(5.0), {"loss": 1.0, "worse": _Broken("numel")})
    g.close()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"step": 3, "loss": 1.5}, {"step": 4, "loss": 1.25}, {"step": 5, "loss": 1.0}]


def _wal_database(db: Path):  # type: ignore[no-untyped-def]
    """The diverging MLflow run rewritten into a WAL-mode database by a writer that stays open (so nothing is
    checkpointed back into the main file): the live writer's state the issue found skipped."""
    import sqlite3

    from conftest import FIXTURES

    src = sqlite3.connect(f"file:{FIXTURES / 'live' / 'mlflow-db-diverge' / 'mlflow.db'}?mode=ro", uri=True)
    dst = sqlite3.connect(db, check_same_thread=False)  # the fault-injection test closes it from another thread
    assert dst.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    dst.execute("PRAGMA wal_autocheckpoint=0")
    for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL "
                              "AND name NOT LIKE 'sqlite_%'"):
        dst.execute(sql)
    for (name,) in src.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"):
        rows = src.execute(f'SELECT * FROM "{name}"').fetchall()
        if rows:
            dst.executemany(f'INSERT INTO "{name}" VALUES ({",".join("?" * len(rows[0]))})', rows)
    dst.commit()
    src.close()
    return dst


def _folder_state(folder: Path) -> dict[str, tuple[int, int, str]]:
    import hashlib

    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.iterdir())}


def test_item4_an_mlflow_database_in_wal_mode_is_read_with_its_wal_and_nothing_is_written(tmp_path: Path) -> None:
    import json

    run = tmp_path / "run"
    run.mkdir()
    writer = _wal_database(run / "mlflow.db")
    try:
        assert (run / "mlflow.db-wal").stat().st_size > 0
        before = _folder_state(run)
        r = subprocess.run([*CLI, "check", "--format", "json", "."], cwd=run, capture_output=True, text=True,
                           timeout=120)
        assert _folder_state(run) == before  # nothing written, no -shm made, the WAL not checkpointed
        [rep] = json.loads(r.stdout)["reports"]
        assert (r.returncode, rep["format"], rep["verdict"]) == (1, "mlflow-db", "FAIL"), r.stdout + r.stderr
        assert "TP-NAN" in {f["id"] for f in rep["findings"]}
    finally:
        writer.close()
    # a WAL left by a writer that died (copied without its -shm): still read, and no -shm appears
    copy = tmp_path / "copy"
    copy.mkdir()
    writer = _wal_database(run / "again.db")
    for suffix in ("", "-wal"):
        (copy / ("mlflow.db" + suffix)).write_bytes((run / ("again.db" + suffix)).read_bytes())
    writer.close()
    before = _folder_state(copy)
    r = subprocess.run([*CLI, "check", "--format", "json", "."], cwd=copy, capture_output=True, text=True, timeout=120)
    assert _folder_state(copy) == before and sorted(before) == ["mlflow.db", "mlflow.db-wal"]
    assert json.loads(r.stdout)["reports"][0]["verdict"] == "FAIL", r.stdout


def _jsonl_run(path: Path, tail: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [f'{{"step": {i}, "loss": {2.0 - i / 100:.3f}, "lr": 0.001}}' for i in range(1, 41)]
    rows += [f'{{"step": {41 + i}, "loss": {v}, "lr": 0.001}}' for i, v in enumerate(tail)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_item5_nan_spelled_as_strings_or_a_run_of_nulls_in_jsonl_is_non_finite(tmp_path: Path) -> None:
    import json

    for spelling in ('"nan"', '"NaN"', '"inf"', '"-inf"', '"Infinity"'):
        _jsonl_run(tmp_path / spelling.strip('"') / "metrics.jsonl", [spelling] * 5)
    _jsonl_run(tmp_path / "null" / "metrics.jsonl", ["null"] * 5)
    r = subprocess.run([*CLI, "check", "--format", "json", "."], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    reports = {Path(rep["path"]).parent.name: rep for rep in json.loads(r.stdout)["reports"]}
    assert sorted(reports) == ["-inf", "Infinity", "NaN", "inf", "nan", "null"]
    for name, rep in reports.items():
        nan = [f for f in rep["findings"] if f["id"] == "TP-NAN"]
        assert rep["verdict"] == "FAIL" and nan and nan[0]["location"]["line"] == 41, (name, rep["findings"])
    assert r.returncode == 1
    from trainlint.readers import read

    log = read(str(tmp_path / "null" / "metrics.jsonl"))
    assert any("null" in p.message and "non-finite" in p.message for p in log.problems), log.problems


def test_item5_isolated_nulls_stay_absent_as_llamafactory_writes_them(tmp_path: Path) -> None:
    """LLaMA-Factory writes ``"eval_loss": null`` on every line and ``"loss": null`` on its closing summary line:
    a null that a number follows, or a single trailing one, is an absent value, not a NaN."""
    from trainlint.readers import read

    rows = [f'{{"current_steps": {i}, "loss": {2.0 - i / 100:.3f}, "eval_loss": null}}' for i in range(1, 41)]
    rows.insert(20, '{"current_steps": 20, "loss": null, "eval_loss": 1.5}')
    rows.append('{"current_steps": 40, "loss": null, "eval_loss": null, "epoch": 3.0}')
    (tmp_path / "trainer_log.jsonl").write_text("\n".join(rows) + "\n")
    log = read(str(tmp_path / "trainer_log.jsonl"))
    loss = next(s for s in log.series.values() if s.name == "loss")
    assert len(loss) == 40 and all(v == v for v in loss.values)


PREFLIGHT_LAYOUTS = {
    "alpaca_no_input": [{"instruction": "Name a colour.", "output": "Blue."},
                        {"instruction": "Name a fruit.", "output": "Pear."}],
    "dolly": [{"instruction": "Who wrote it?", "context": "A book by Ann.", "response": "Ann.", "category": "qa"},
              {"instruction": "Say hi.", "context": "", "response": "Hi.", "category": "open_qa"}],
    "trl_preference": [{"prompt": "2+2?", "chosen": "4", "rejected": "5"},
                       {"prompt": "3+3?", "chosen": "6", "rejected": "7"}],
    "trl_preference_chat": [
        {"prompt": [{"role": "user", "content": "2+2?"}], "chosen": [{"role": "assistant", "content": "4"}],
         "rejected": [{"role": "assistant", "content": "5"}]},
        {"prompt": [{"role": "user", "content": "3+3?"}], "chosen": [{"role": "assistant", "content": "6"}],
         "rejected": [{"role": "assistant", "content": "7"}]}],
    "trl_implicit_preference": [
        {"chosen": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
         "rejected": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "5"}]}],
    "multimodal": [
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                                   {"type": "image_url", "image_url": {"url": "a.png"}}]},
                      {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]}]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "And this?"},
                                                   {"type": "image_url", "image_url": {"url": "b.png"}}]},
                      {"role": "assistant", "content": [{"type": "text", "text": "A dog."}]}]}],
    "tool_calls": [
        {"messages": [{"role": "user", "content": "Weather in Oslo?"},
                      {"role": "assistant", "content": None, "tool_calls": [
                          {"id": "c1", "type": "function",
                           "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
                      {"role": "tool", "tool_call_id": "c1", "content": "4 C"},
                      {"role": "assistant", "content": "It is 4 C in Oslo."}]},
        {"messages": [{"role": "user", "content": "Weather in Rome?"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"id": "c2", "type": "function",
                           "function": {"name": "weather", "arguments": "{\"city\": \"Rome\"}"}}]},
                      {"role": "tool", "tool_call_id": "c2", "content": "20 C"},
                      {"role": "assistant", "content": "It is 20 C in Rome."}]}],
}


def test_item6_common_dataset_layouts_pass_preflight(tmp_path: Path) -> None:
    import json

    from trainlint.core.findings import Level
    from trainlint.preflight import preflight

    for name, rows in PREFLIGHT_LAYOUTS.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        [rep] = preflight([str(path)])
        bad = [(f.id, f.evidence.text) for f in rep.findings if f.level in (Level.FAIL, Level.WARN)]
        assert not bad, (name, bad)


def test_item6_the_new_layouts_still_catch_what_is_wrong(tmp_path: Path) -> None:
    import json

    from trainlint.preflight import preflight

    rows = [{"prompt": "2+2?", "chosen": "4", "rejected": "5"}, {"prompt": "3+3?", "chosen": " ", "rejected": "7"},
            {"prompt": "2+2?", "chosen": "4", "rejected": "5"}]
    (tmp_path / "pref.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    [rep] = preflight([str(tmp_path / "pref.jsonl")])
    assert sorted((f.id, f.location.line) for f in rep.findings if f.id != "TL-PRE-PASS") == [
        ("TL-PRE-DUPLICATE", 3), ("TL-PRE-EMPTY-TEXT", 2)], rep.findings
    chat = [{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text",
                                                                                               "text": " "}]}]}]
    (tmp_path / "chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in chat))
    [rep] = preflight([str(tmp_path / "chat.jsonl")])
    assert any(f.id == "TL-PRE-CHAT-TURNS" and "empty" in f.evidence.text for f in rep.findings), rep.findings


def test_item8_an_oversized_configuration_is_refused_with_a_message(tmp_path: Path) -> None:
    max_config_bytes = 1 << 20
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "lr_hot")
    with (tmp_path / ".trainlint.yaml").open("w") as f:
        f.write("select:\n")
        while f.tell() <= max_config_bytes:
            f.write("  - TP-NAN\n" * 10_000)
    r = subprocess.run([*CLI, "check", "-q", "."], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "over the 1 MB a configuration may have; it was not read" in r.stderr, r.stderr
    assert r.returncode == 1 and "TP-DIVERGE" in r.stdout  # judged with the defaults (select would hide it)


def test_item8_a_tokenizer_that_is_too_large_or_not_a_regular_file_is_said_so(tmp_path: Path) -> None:
    import os

    from trainlint import preflight as pf

    big = tmp_path / "big" / "tokenizer.json"
    big.parent.mkdir()
    with big.open("wb") as f:
        f.write(b'{"model": {"vocab": {')
        f.truncate((256 << 20) + 1)  # as a JSON document: over 256 MB is not read
    why = pf.load_tokenizer(str(big))
    assert isinstance(why, str) and "over the 256 MB" in why and "not read" in why, why
    fifo = tmp_path / "tokenizer.json"
    os.mkfifo(fifo)
    why = pf.load_tokenizer(str(fifo))
    assert isinstance(why, str) and "not a regular file: a pipe (FIFO)" in why, why
    assert "not a regular file: a device" in str(pf.load_tokenizer("/dev/zero"))


def _stdout_log(nan_at: int = 45) -> str:
    rows = [f"step {i}, loss: {3.0 - 0.02 * i:.4f}" for i in range(1, 61)]
    rows[nan_at - 1] = f"step {nan_at}, loss: nan"
    return "\n".join(rows) + "\n"


def test_item9_utf16_logs_with_a_bom_are_decoded(tmp_path: Path) -> None:
    import json

    for enc, name in (("utf-16", "le"), ("utf-16-be", "be")):
        data = _stdout_log().encode(enc)
        if enc == "utf-16-be":
            data = b"\xfe\xff" + data
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_bytes(data)
    # Windows PowerShell's `>` writes UTF-16LE with a BOM and CRLF line ends
    (tmp_path / "ps").mkdir()
    (tmp_path / "ps" / "train.log").write_bytes(_stdout_log().replace("\n", "\r\n").encode("utf-16"))
    r = subprocess.run([*CLI, "check", "--format", "json", "."], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    reports = {Path(rep["path"]).parent.name: rep for rep in json.loads(r.stdout)["reports"]}
    assert sorted(reports) == ["be", "le", "ps"], r.stdout
    for name, rep in reports.items():
        nan = [f for f in rep["findings"] if f["id"] == "TP-NAN"]
        assert rep["verdict"] == "FAIL" and nan[0]["location"]["line"] == 45, (name, rep)
        assert rep["series"][0]["points"] == 60, (name, rep["series"])


def test_item9_a_stray_nul_byte_is_tolerated_with_a_problem_noted(tmp_path: Path) -> None:
    from trainlint.readers import read

    text = _stdout_log()
    (tmp_path / "train.log").write_bytes(text.replace("step 3,", "step 3,\x00", 1).encode())
    log = read(str(tmp_path / "train.log"))
    loss = next(s for s in log.series.values() if s.name == "loss")
    assert len(loss) == 60
    assert [p.message for p in log.problems if "NUL" in p.message] == [
        "line 3 holds NUL bytes (a crash or a full disk mid-write?); they were ignored"]


def test_item10_series_json_does_work_linear_in_the_keys_not_a_regex_and_a_read_per_point(tmp_path, monkeypatch):
    """`trainlint series --format json` on a JSONL with a new key per line (issue: 43 s at 20,000 keys): each
    located point compiled its key's regex and read 64 KB around its line. The work is counted, not timed
    (bench/series_keys.py times it): regex compilations and file opens stay constant as keys grow."""
    import json

    from trainlint.core import model
    from trainlint.output import series as series_out
    from trainlint.readers import read

    keys = 2000
    path = tmp_path / "metrics.jsonl"
    with path.open("w") as f:
        for i in range(keys):
            f.write(json.dumps({"step": i, "loss": 2 - i / keys, f"key_{i}": 0.5}) + "\n")
    log = read(str(path))
    assert len(log.series) == keys + 1
    opens = []
    real_open = model.open_regular
    monkeypatch.setattr(model, "open_regular", lambda p: opens.append(p) or real_open(p))
    before = model._compiled.cache_info().misses
    out = series_out.file_dict(log)
    compiled = model._compiled.cache_info().misses - before
    assert compiled <= 4 and len(opens) <= 4, (compiled, len(opens))
    key = next(s for s in out["series"] if s["name"] == "key_1500")
    assert key["first"]["line"] == 1501 and key["first"]["column"] == 42  # the value's column, still exact


def test_item11_a_rotated_log_stays_part_of_the_run_in_watch(tmp_path: Path) -> None:
    """train.log (with a NaN) rotated to train.log.1 and a new train.log started: the FAIL is still the run's,
    never "resolved"."""
    import json
    import os
    import signal
    import time

    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n" for i in range(1, 41)) + "step 41, loss: nan\n")
    proc = subprocess.Popen([*CLI, "watch", "--format", "json", str(tmp_path)], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = json.loads(proc.stdout.readline())
        assert (first["event"], first["id"], first["line"]) == ("finding", "TP-NAN", 41), first
        assert json.loads(proc.stdout.readline())["event"] == "status"
        os.rename(log, tmp_path / "train.log.1")  # what logrotate and RotatingFileHandler do
        log.write_text("".join(f"step {i}, loss: {2.0 - 0.01 * i:.4f}\n" for i in range(42, 60)))
        events = []
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            events.append(json.loads(line))
            if events[-1]["event"] == "status":
                break
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert not [e for e in events if e["event"] == "resolved"], events
    assert events[-1]["event"] == "status" and events[-1]["verdict"] == "FAIL", events
    assert proc.returncode == 1, err


def test_item12_an_unknown_rule_id_in_select_or_ignore_is_named(tmp_path: Path) -> None:
    from trainlint.config import load
    from trainlint.lsp.settings import Settings

    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "lr_hot")
    (tmp_path / ".trainlint.yaml").write_text("select:\n  - TP-DIVREGE\n  - ' '\nignore: [TP-GRAD]\n")
    cfg = load(str(tmp_path / ".trainlint.yaml"))
    assert [line for line, _ in cfg.placed] == [2, 3], cfg.placed
    assert "'TP-DIVREGE' is not a rule ID" in cfg.placed[0][1] and "TP-DIVERGE" in cfg.placed[0][1]
    assert cfg.select == [] and cfg.ignore == ["TP-GRAD"]  # a prefix of real IDs is fine
    r = subprocess.run([*CLI, "check", "-q", "--ignore", "TP-THROUGHPT", "."], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert "'TP-DIVREGE' is not a rule ID" in r.stderr and "'TP-THROUGHPT' is not a rule ID" in r.stderr, r.stderr
    assert r.returncode == 1 and "TP-DIVERGE [FAIL]" in r.stdout, r.stdout  # the rest still runs
    _, errors = Settings.parse({"trainlint": {"select": ["TL-NOPE"]}})
    assert any("'TL-NOPE' is not a rule ID" in e for e in errors), errors


def test_item13_invalid_utf8_inside_a_dataset_line_is_reported_on_its_line(tmp_path: Path) -> None:
    from trainlint.preflight import preflight

    rows = [b'{"text": "a fine example"}', b'{"text": "bad \xff\xfe bytes"}', b'{"text": "another \xe2\x9c\x93"}']
    (tmp_path / "data.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    [rep] = preflight([str(tmp_path / "data.jsonl")])
    bad = [(f.id, f.location.line, f.evidence.text) for f in rep.findings if f.id == "TP-PRE-MALFORMED-JSONL"]
    assert len(bad) == 1 and bad[0][1] == 2 and "not valid UTF-8" in bad[0][2], rep.findings


def test_item14_preflight_refuses_a_max_len_that_is_not_positive(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text('{"text": "x"}\n')
    for value in ("-1", "0"):
        r = subprocess.run([*CLI, "preflight", "--max-len", value, str(tmp_path / "data.jsonl")], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and "--max-len" in r.stderr and "positive" in r.stderr, (value, r.stderr)


def test_item15_a_log_history_that_is_not_a_list_says_so(tmp_path: Path) -> None:
    from trainlint.readers import read

    for name, value in (("dict", '{"0": {"loss": 1.0, "step": 1}, "x": [1]}'), ("str", '"[{\\"loss\\": 1.0}]"')):
        path = tmp_path / name / "trainer_state.json"
        path.parent.mkdir()
        path.write_text('{"global_step": 1,\n "log_history": ' + value + "}\n")
        log = read(str(path))
        msgs = [p.message for p in log.problems]
        assert any(f"`log_history` is {'an object' if name == 'dict' else 'a string'}, not a list" in m
                   for m in msgs), msgs
        assert not log.series
