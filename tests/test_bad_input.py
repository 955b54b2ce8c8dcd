"""The catalogue of bad inputs (docs/bad-input.md): each with its documented outcome, on the CLI
(one clear line, exit 2 where nothing could be judged) and in the reader."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import RUNS, series
from tbwrite import record_offsets, scalar_event, write
from trainlint.core.findings import Level
from trainlint.discovery import discover
from trainlint.judge import judge_path
from trainlint.readers import open_source, read

CLI = [sys.executable, "-m", "trainlint.cli"]


def check(*paths: Path, user: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [*CLI, "check", *map(str, paths)]
    if user is not None:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def one_line_exit_2(r: subprocess.CompletedProcess[str], words: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    verdicts = [ln for ln in r.stdout.splitlines() if "NOT-CHECKED" in ln]
    assert verdicts and any(words in ln for ln in verdicts), r.stdout


def test_empty_file(tmp_path):
    p = tmp_path / "train.log"
    p.write_bytes(b"")
    one_line_exit_2(check(p), "the file is empty")


def test_binary_garbage(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_bytes(os.urandom(1 << 16).replace(b"\n", b"\x00") + b"\x00")
    one_line_exit_2(check(p), "a binary file, not a text log")


def test_a_50_mb_single_line_is_skipped_with_a_problem(tmp_path):
    p = tmp_path / "metrics.jsonl"
    with open(p, "wb") as f:
        f.write(b'{"step": 1, "loss": 2.0}\n')
        f.write(b'{"step": 2, "junk": "' + b"x" * (50 << 20) + b'"}\n')
        f.write(b'{"step": 3, "loss": 1.5}\n')
    log = read(str(p), "jsonl")
    assert list(series(log, "loss").steps) == [1, 3]
    assert [(pr.line, pr.message) for pr in log.problems] == [(2, "line 2 is longer than 8 MB; it was skipped")]


def test_invalid_utf8_is_reported_and_values_still_read(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_bytes(b'{"step": 1, "loss": 2.0, "note": "\xff\xfe"}\n{"step": 2, "loss": 1.0}\n')
    log = read(str(p))
    assert list(series(log, "loss").values) == [2.0, 1.0]
    assert any("not valid UTF-8" in pr.message for pr in log.problems)


def test_boolean_where_a_number_belongs(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text('{"step": 1, "loss": true}\n{"step": 2, "loss": 1.0}\n')
    log = read(str(p))
    assert len(series(log, "loss")) == 1 and "`loss` is bool True" in log.problems[0].message


def test_event_file_cut_mid_record_and_bad_crc(tmp_path):
    path = write(str(tmp_path), [scalar_event(s, "loss", 1.0) for s in range(5)])
    data = bytearray(open(path, "rb").read())
    offs = record_offsets(path)
    data[offs[2] + 13] ^= 0x10
    open(path, "wb").write(bytes(data[: offs[-1] + 7]))
    rep = judge_path(path)
    assert {f.id for f in rep.findings} >= {"TL-EVENTS-TRUNCATED"}
    assert any("data CRC" in p.message for p in rep.log.problems)
    r = check(Path(path))
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr


def test_file_vanishes_between_listing_and_reading(tmp_path):
    shutil.copytree(RUNS / "gallery-healthy", tmp_path / "run")
    found = discover(str(tmp_path)).found
    os.remove(found[0].path)
    rep = judge_path(found[0].path, fmt=found[0].format)
    assert rep.verdict == Level.NOT_CHECKED and "vanished" in rep.error


@pytest.mark.skipif(shutil.which("setpriv") is None and os.geteuid() == 0, reason="needs setpriv to drop root")
def test_permission_denied():
    base = Path(tempfile.mkdtemp())  # under /tmp, reachable by an unprivileged user once opened up
    os.chmod(base, 0o755)
    shutil.copytree(RUNS / "gallery-healthy", base / "run")
    os.chmod(base / "run", 0o755)
    p = base / "run" / "trainer_state.json"
    os.chmod(p, 0o000)
    try:
        if os.geteuid() == 0:
            probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                                    "-c", "import trainlint.cli"], capture_output=True, timeout=60)
            if probe.returncode != 0:
                pytest.skip("an unprivileged user cannot run this checkout's interpreter (it sits in a private "
                            "directory), so permission denied cannot be produced for real here")
        r = check(p, user="nobody") if os.geteuid() == 0 else check(p)
        one_line_exit_2(r, "permission denied")
    finally:
        os.chmod(p, 0o644)
        shutil.rmtree(base)


def test_symlink_loop_in_a_run_directory(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "gallery-lr_hot", run)
    (run / "loop").symlink_to(run)            # a directory loop: not followed
    (run / "a.log").symlink_to(run / "b.log")  # a file loop: unreadable, with the reason
    (run / "b.log").symlink_to(run / "a.log")
    d = discover(str(tmp_path))
    assert [Path(f.path).name for f in d.found] == ["trainer_state.json"]
    assert sorted(Path(p).name for p, _ in d.unreadable) == ["a.log", "b.log"]
    r = check(tmp_path)
    assert r.returncode == 1 and "TP-DIVERGE" in r.stdout and "cannot be read" in r.stderr


def test_a_directory_with_10000_files(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "gallery-lr_zero", run)
    media = run / "samples"
    media.mkdir()
    for i in range(10_000):
        (media / f"sample_{i:05d}.txt").write_text("an audio transcript, not a log\n")
    d = discover(str(tmp_path))
    assert [Path(f.path).name for f in d.found] == ["trainer_state.json"] and len(d.skipped) == 10_000
    r = check(tmp_path)
    assert r.returncode == 1 and "10000 files skipped" in r.stdout


def test_file_replaced_while_being_read(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text("".join(f'{{"step": {i}, "loss": 1.0}}\n' for i in range(100)))
    src = open_source(str(p))
    with open(p, "rb"):  # the old inode stays open while the writer swaps the file
        src.update()
        q = tmp_path / "new.jsonl"
        q.write_text('{"step": 0, "loss": 9.0}\n')
        os.replace(q, p)
        src.update()
    assert list(series(src.log, "loss").values) == [9.0]


def test_cli_never_shows_a_traceback_on_the_corpus_bad_inputs(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "trainer_state.json").write_text('{"log_history": [{"loss": 1.0, "step": 1}, {"lo')
    (bad / "metrics.csv").write_bytes(b"step,loss\n1,2.0\n2,\xff\xfe\n3,nan\n")
    (bad / "trainer_0_log.txt").write_bytes(b"\x1b[1m   --> TIME: 2026-01-01 00:00:00 -- STEP: 0/1 -- GLOBAL_STEP: 0\n"
                                            b"     | > loss: nan  (\n")
    r = check(bad)
    assert "Traceback" not in r.stdout + r.stderr and r.returncode in (0, 1, 2)
    assert "trainer_state.json" in r.stdout


def test_a_fifo_named_like_a_log_never_hangs_and_hides_nothing(tmp_path):
    """A FIFO named train.log (or a link to /dev/stdin) is not read: it is skipped with the reason, and the
    other run's FAIL still decides the exit code."""
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "lr_hot")
    os.mkfifo(tmp_path / "train.log")
    (tmp_path / "stdin.log").symlink_to("/dev/stdin")
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", str(tmp_path)], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.PIPE)  # a pipe on stdin: it must not be read
    assert r.returncode == 1 and "TP-DIVERGE [FAIL]" in r.stdout, (r.stdout, r.stderr)
    assert "train.log: cannot be read: not a regular file: a pipe (FIFO)" in r.stderr, r.stderr
    one = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--log-format", "text", "/dev/zero"],
                         capture_output=True, text=True, timeout=60)
    assert one.returncode == 2 and "not a regular file: a device" in one.stdout + one.stderr


def test_a_yaml_alias_bomb_is_refused_on_its_line_quickly(tmp_path):
    """389 bytes of aliases used to expand to gigabytes once turned into strings: aliases are refused."""
    from trainlint.config import load

    bomb = ["roles:", '  a: &a ["x","x","x","x","x","x","x","x","x"]']
    for k in "bcdefghi":
        prev = chr(ord(k) - 1)
        bomb.append(f"  {k}: &{k} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    (tmp_path / ".trainlint.yaml").write_text("\n".join(bomb) + "\n")
    t = time.monotonic()
    cfg = load(str(tmp_path / ".trainlint.yaml"))
    assert time.monotonic() - t < 5
    assert len(cfg.errors) == 1 and "line 3: aliases (*name) are not allowed" in cfg.errors[0], cfg.errors


def test_a_configuration_above_the_project_never_silences_it(tmp_path, monkeypatch):
    """A stranger's .trainlint.yaml in a folder above the project (/tmp, /) is not read."""
    (tmp_path / ".trainlint.yaml").write_text("ignore: [TP]\n")     # would silence every TP rule
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    shutil.copytree(RUNS / "gallery-lr_hot", project / "lr_hot")
    monkeypatch.chdir(project)
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "-q", "lr_hot"], capture_output=True,
                       text=True, cwd=project, timeout=60)
    assert r.returncode == 1 and "TP-DIVERGE [FAIL]" in r.stdout
    (project / ".trainlint.yaml").write_text("ignore: [TP-GRAD-SPIKE]\n")  # the project's own is read
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "-q", "lr_hot"], capture_output=True,
                       text=True, cwd=project, timeout=60)
    assert "TP-DIVERGE [FAIL]" in r.stdout and "TP-GRAD-SPIKE" not in r.stdout


def test_one_hostile_file_never_hides_the_other_runs_findings(tmp_path, request):
    """JSON nested 1,000 deep, a folder tree 1,100 deep, `.inf` for an integer threshold: each is reported
    where it is, and the other run's FAIL is still printed and still decides the exit code."""
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "lr_hot")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "trainer_state.json").write_text('{"log_history": ' + "[" * 1000 + "]" * 1000 + "}")
    d = tmp_path / "tree"
    d.mkdir()
    chain = []
    for _ in range(1100):  # deeper than Python's recursion limit (os.walk recurses in 3.11)
        d = d / "d"
        os.mkdir(d)
        chain.append(d)
    request.addfinalizer(lambda: [os.rmdir(x) for x in reversed(chain)])  # shutil.rmtree would recurse too
    (tmp_path / ".git").mkdir()
    (tmp_path / ".trainlint.yaml").write_text("thresholds:\n  min_points_for_trend: .inf\n")
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", str(tmp_path)], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert "internal error" not in r.stderr, r.stderr
    assert r.returncode == 1 and "TP-DIVERGE [FAIL]" in r.stdout, (r.stdout[-2000:], r.stderr[-2000:])
    assert "min_points_for_trend' must be a finite non-negative int" in r.stderr
    assert "deep/trainer_state.json: NOT-CHECKED" in r.stdout and "RecursionError" in r.stdout


def test_the_discovery_limit_counts_log_candidates_not_data_files(tmp_path):
    """A dataset folder of images sorted before runs/ used to use up the file limit: "no training logs found"."""
    data = tmp_path / "a_dataset"
    data.mkdir()
    for i in range(60):
        (data / f"{i:05d}.jpg").write_bytes(b"\xff\xd8")
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "runs" / "lr_hot")
    d = discover(str(tmp_path), max_files=50)
    assert [Path(f.path).name for f in d.found] == ["trainer_state.json"]
    assert not d.skipped


def test_a_2_gb_sparse_trainer_state_is_refused_unread(tmp_path):
    """A 2 GB sparse trainer_state.json reached 4.1 GB RSS and was re-read whole on every change."""
    import resource

    big = tmp_path / "big" / "trainer_state.json"
    big.parent.mkdir()
    with big.open("wb") as f:
        f.write(b'{"log_history": [' + b",".join(b'{"loss": 1.0, "step": %d}' % i for i in range(5000)))
        f.truncate(2 << 30)                                                 # then 2 GB of holes
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "hot")
    r = subprocess.run([*CLI, "check", str(tmp_path), "--format", "json"], capture_output=True, text=True,
                       timeout=120)
    import json

    reports = {Path(rep["path"]).parent.name: rep for rep in json.loads(r.stdout)["reports"]}
    assert reports["hot"]["verdict"] == "FAIL" and r.returncode == 1
    assert reports["big"]["verdict"] == "NOT-CHECKED"
    assert "a JSON document of 2147483648 bytes, over the 256 MB trainlint reads whole" in r.stdout
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 500 << 10  # KB: the file was never read


def test_a_malformed_sqlite_file_is_skipped_with_its_reason_and_hides_nothing(tmp_path):
    """A file with SQLite's header and a damaged body raised DatabaseError out of detection: the server's
    scan of the whole folder stopped there (found by tests/test_fault_injection.py)."""
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "hot")
    (tmp_path / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\x10\x00\x01\x01" + os.urandom(4096))
    d = discover(str(tmp_path))
    assert [Path(f.path).name for f in d.found] == ["trainer_state.json"]
    assert [Path(p).name for p, _ in d.skipped] == ["broken.db"]


def test_the_server_workspace_contains_a_file_that_breaks_its_reader(tmp_path):
    """JSON nested 1,000 deep: `check` said NOT-CHECKED, the server's refresh raised RecursionError and the
    rest of that batch of changes was never judged (found by tests/test_fault_injection.py)."""
    from trainlint.lsp.workspace import Workspace

    (tmp_path / "deep").mkdir()
    deep = tmp_path / "deep" / "trainer_state.json"
    deep.write_text('{"log_history": [{"loss": 1.0, "step": 1}]}')
    ws = Workspace()
    ws.roots = [str(tmp_path)]
    assert ws.discover(str(tmp_path)) == [str(deep)]
    ws.refresh(str(deep))
    deep.write_text('{"log_history": ' + "[" * 1000 + "]" * 1000 + "}")
    assert ws.refresh(str(deep))
    rep = ws.tracked[str(deep)].report
    assert rep is not None and rep.verdict == Level.NOT_CHECKED and "RecursionError" in (rep.error or "")
    assert rep.error == judge_path(str(deep)).error


def test_an_integer_beyond_the_double_range_hides_no_other_run(tmp_path):
    """A JSON integer of 401 digits: json.loads reads it, float() of it raises OverflowError, which the check did
    not count among a file's read errors: "internal error", and the other run's FAIL was never printed. (The file
    itself is read: test_one_jsonl_line_beyond_the_decoder_leaves_the_rest_read.)"""
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "lr_hot")
    (tmp_path / "huge").mkdir()
    (tmp_path / "huge" / "trainer_log.jsonl").write_text(
        '{"current_steps": 1, "loss": 1' + "0" * 400 + '}\n{"current_steps": 2, "loss": 0.5}\n')
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", str(tmp_path)], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert "internal error" not in r.stderr, r.stderr
    assert r.returncode == 1 and "TP-DIVERGE [FAIL]" in r.stdout, (r.stdout[-2000:], r.stderr[-2000:])
    assert "huge/trainer_log.jsonl: NOT-CHECKED" not in r.stdout, r.stdout[-2000:]


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_one_jsonl_line_beyond_the_decoder_leaves_the_rest_read(tmp_path: Path, pure: bool) -> None:
    """One line nested 100,000 deep (json.loads raises RecursionError) or holding an integer past a double's range
    (float() of it raises OverflowError) made the whole log NOT-CHECKED: its 98 other lines unread, the run unjudged.
    The deep line is skipped with its problem on its line; the integer reads as float() reads its digits (inf), as
    the CSV and text readers read the same number."""
    good = [f'{{"current_steps": {i}, "loss": {2.0 / i}}}' for i in range(1, 100)]
    deep = tmp_path / "deep.jsonl"
    deep.write_text("\n".join([*good[:49], '{"loss": ' + "[" * 100000 + "]" * 100000 + "}", *good[49:]]) + "\n")
    huge = tmp_path / "huge.jsonl"
    huge.write_text("\n".join([*good[:49], '{"current_steps": 50, "loss": -1' + "0" * 400 + "}", *good[50:]]) + "\n")
    env = {**os.environ, "TRAINLINT_PURE": "1" if pure else "0"}
    code = ("import sys; from trainlint.readers import read\n"
            "for p in sys.argv[1:]:\n"
            "    log = read(p, 'jsonl'); s = [s for s in log.series.values() if s.name == 'loss'][0]\n"
            "    print(len(s), s.values[49], s.lines[49], [(p.line, p.message) for p in log.problems])")
    r = subprocess.run([sys.executable, "-c", code, str(deep), str(huge)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = r.stdout.splitlines()
    assert got[0].startswith(f"99 {2.0 / 50} 51 [(50, 'line 50 is nested deeper than"), got[0]
    assert got[1] == "99 -inf 50 []", got[1]


def test_an_integer_beyond_the_double_range_in_trainer_state_is_read_as_its_digits(tmp_path: Path) -> None:
    """The same integer in a trainer_state.json's log_history made the whole file NOT-CHECKED: the entry's loss now
    reads as float() reads its digits, and the other 58 entries are judged."""
    import json

    entries = [{"step": i, "loss": 2.0 / i} for i in range(1, 60)]
    text = json.dumps({"log_history": entries, "global_step": 59}).replace('"loss": 0.04', '"loss": 1' + "0" * 400)
    (tmp_path / "trainer_state.json").write_text(text)
    log = read(str(tmp_path / "trainer_state.json"))
    loss = series(log, "loss")
    assert len(loss) == 59 and loss.values[49] == math.inf and loss.steps[49] == 50.0, list(loss.values)
    assert judge_path(str(tmp_path / "trainer_state.json")).verdict != Level.NOT_CHECKED


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_a_csv_cell_past_the_field_limit_skips_its_row_not_the_check(tmp_path: Path, pure: bool) -> None:
    """A quoted CSV cell longer than csv's field limit (131,072 characters) made csv.reader raise `_csv.Error`, which
    ended the whole check ("internal error: Error: field larger than field limit") and hid every other run's
    findings, on both paths. The row is skipped with a problem on its line; the other rows and runs are read."""
    run = tmp_path / "run"
    run.mkdir()
    rows = [f'0,{i},{1.0 / (i + 1)},"{"x" * 200_000 if i == 25 else "ok"}"' for i in range(50)]
    (run / "metrics.csv").write_text("epoch,step,train_loss,note\n" + "\n".join(rows) + "\n")
    other = tmp_path / "other"
    shutil.copytree(RUNS / "gallery-fp16_nan", other)
    env = {**os.environ, "TRAINLINT_PURE": "1" if pure else "0"}
    code = ("import sys; from trainlint.readers import read; log = read(sys.argv[1], 'csv'); "
            "s = [s for s in log.series.values() if s.name == 'train_loss'][0]; "
            "print(len(s), list(s.lines)[24:27], [(p.line, p.message) for p in log.problems])")
    r = subprocess.run([sys.executable, "-c", code, str(run / "metrics.csv")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ('49 [26, 28, 29] [(2, "column `note` holds \'ok\', not a number; such cells are '
                                'ignored"), (27, "line 27: a cell is longer than csv\'s field limit '
                                '(131,072 characters); the row was skipped")]'), r.stdout
    c = subprocess.run([*CLI, "check", str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert "internal error" not in c.stdout + c.stderr, c.stdout + c.stderr
    assert "TP-DIVERGE [FAIL]" in c.stdout and c.returncode == 1, c.stdout


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_a_csv_header_cell_past_the_field_limit_leaves_that_file_not_checked(tmp_path: Path, pure: bool) -> None:
    """The header's own cells went through csv.reader too: one past the field limit ended the whole check as above.
    Without a header no column has a name, so the file is NOT-CHECKED with the reason and the other run judged."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.csv").write_text(
        'step,loss,"' + "x" * 200_000 + '"\n' + "".join(f"{i},{1 / (i + 1)},a\n" for i in range(30)))
    shutil.copytree(RUNS / "gallery-fp16_nan", tmp_path / "other")
    env = {**os.environ, "TRAINLINT_PURE": "1" if pure else "0"}
    c = subprocess.run([*CLI, "check", str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert "internal error" not in c.stdout + c.stderr, c.stdout + c.stderr
    mine = [ln for ln in c.stdout.splitlines() if "metrics.csv" in ln]
    assert mine and all("NOT-CHECKED" in ln for ln in mine), c.stdout
    assert any("field limit" in ln for ln in mine), c.stdout
    assert "TP-DIVERGE [FAIL]" in c.stdout and c.returncode == 1, c.stdout


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_jsonl_lines_that_are_not_one_object_each_are_not_read_as_the_batch_joined_them(tmp_path: Path,
                                                                                         pure: bool) -> None:
    """A batch of lines is decoded as one JSON array, its lines joined by commas. A structure or a string carried from
    one line into the next, with a line holding two objects beside it, decoded to as many objects as lines: the values
    landed on other lines (loss 3.0 on line 4 read as line 5's, 9.0 from lines 2-3 as line 3's...) and no line was
    reported. Each such line is not valid JSON on its own: it is skipped with its problem, as one alone would be."""
    p = tmp_path / "metrics.jsonl"
    p.write_text('{"step": 0, "loss": 1.0}\n'
                 '{"step": 1, "a": [{"b": 1}\n'
                 '{"c": 2}], "loss": 9.0}\n'
                 '{"step": 3, "loss": 3.0}, {"step": 4, "loss": 4.0}\n'
                 '{"step": 5, "loss": "x}\n'
                 '{y", "loss": 8.0}\n'
                 '{"step": 6, "loss": 6.0}\n'
                 '{"step": 7, "loss": 7.0}, {"step": 8, "loss": 7.5}\n'
                 '{"step": 9, "loss": 0.5}\n')
    env = {**os.environ, "TRAINLINT_PURE": "1" if pure else "0"}
    code = ("import sys; from trainlint.readers import read; log = read(sys.argv[1], 'jsonl'); "
            "s = [s for s in log.series.values() if s.name == 'loss'][0]; "
            "print(list(s.steps), list(s.values), list(s.lines)); print(sorted({p.line for p in log.problems}))")
    r = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[0.0, 6.0, 9.0] [1.0, 6.0, 0.5] [1, 7, 9]", "[2, 3, 4, 5, 6, 8]"], r.stdout
