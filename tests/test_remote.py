"""Logs on object storage and web servers, through fsspec, against real servers on loopback: an S3-compatible
server (moto's server mode) and a plain HTTP server. Never a stubbed filesystem."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import LOGS, ROOT, RUNS
from s3server import S3Server

TRAINLINT = [sys.executable, "-m", "trainlint.cli"]


@pytest.fixture(scope="module")
def s3():
    server = S3Server()
    fs = server.filesystem()
    fs.mkdir("runs-bucket")
    yield server, fs
    server.stop()


def tl(*args: str, env: dict[str, str], cwd: Path | str = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRAINLINT, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_check_an_s3_run_folder_as_the_same_folder_on_disk(s3, tmp_path: Path):
    server, fs = s3
    local = tmp_path / "runs"
    shutil.copytree(RUNS, local)
    fs.put(str(local) + "/", "runs-bucket/fleet/", recursive=True)
    now = time.time()  # the objects were just written: the disk copy is made as fresh, so both are judged alike
    for p in local.rglob("*"):
        os.utime(p, (now, now))
    # `full`: concise lines are cut at 160 characters, and a URL is longer than the disk path
    remote = tl("check", "--output-format", "full", "s3://runs-bucket/fleet", env=server.env)
    disk = tl("check", "--output-format", "full", str(local), env=server.env, cwd=tmp_path)
    assert remote.returncode == disk.returncode == 1, remote.stdout + remote.stderr
    assert remote.stdout.replace("s3://runs-bucket/fleet", "runs") == disk.stdout
    assert "s3://runs-bucket/fleet/gallery-lr_hot/trainer_state.json:429:15: TP-DIVERGE [FAIL]" in remote.stdout
    assert "s3://runs-bucket/fleet/modded-nanogpt-tb/tensorboard_logs: PASS" in remote.stdout  # event files too
    # forked workers, their own loop
    jobs = tl("check", "--output-format", "full", "--jobs", "2", "s3://runs-bucket/fleet", env=server.env)
    assert (jobs.returncode, jobs.stdout) == (remote.returncode, remote.stdout), jobs.stdout


def test_findings_are_located_by_url_in_every_output(s3):
    server, fs = s3
    fs.put(str(RUNS / "gallery-lr_hot" / "trainer_state.json"), "runs-bucket/one/trainer_state.json")
    url = "s3://runs-bucket/one/trainer_state.json"
    doc = json.loads(tl("check", "--format", "json", "s3://runs-bucket/one", env=server.env).stdout)
    [rep] = doc["reports"]
    div = [f for f in rep["findings"] if f["id"] == "TP-DIVERGE"][0]
    assert rep["path"] == url and div["location"]["path"] == url and div["location"]["line"] == 429
    assert div["related"][0]["path"] == url and div["related"][0]["line"] == 16
    sarif = json.loads(tl("check", "--format", "sarif", url, env=server.env).stdout)
    loc = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TP-DIVERGE"][0]["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"] == {"uri": url}
    gh = tl("check", "--output-format", "github", url, env=server.env).stdout
    assert gh.startswith("::error file=s3%3A//runs-bucket/one/trainer_state.json,line=429,")
    full = tl("check", "--output-format", "full", url, env=server.env).stdout.splitlines()
    assert full[2] == '429 |       "loss": 7.492252349853516,'  # the line read back from the object


def test_missing_objects_credentials_and_extras_are_not_checked_with_the_reason(s3):
    server, _ = s3
    r = tl("check", "s3://runs-bucket/nothing-here", env=server.env)
    assert r.returncode == 2 and "NOT-CHECKED" in r.stdout and "does not exist" in r.stdout
    no_s3fs = subprocess.run([sys.executable, "-c", "import sys; sys.modules['s3fs'] = None\n"
                              "from trainlint.cli import main; sys.exit(main(sys.argv[1:]))",
                              "check", "s3://runs-bucket/one"], capture_output=True, text=True, env=server.env,
                             timeout=60)
    assert no_s3fs.returncode == 2 and "Traceback" not in no_s3fs.stderr
    assert "reading s3:// URLs needs s3fs: pip install 'trainlint[s3]'" in no_s3fs.stdout, no_s3fs.stdout


def test_a_growing_log_on_s3_is_read_with_ranged_reads_from_where_it_was_left(s3, monkeypatch):
    server, fs = s3
    for k, v in server.env.items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    from trainlint.core import remote
    from trainlint.readers import open_source

    monkeypatch.setattr(remote, "_filesystems", {})
    text = (LOGS / "gpt2_train.11672114.log").read_bytes()
    fs.pipe("runs-bucket/live/train.log", text)
    asked: list[tuple[int, int]] = []
    opened = remote.open_binary

    def counting(url: str):  # type: ignore[no-untyped-def]
        f = opened(url)
        real_fetch = f._fetch_range

        def fetch(start: int, end: int) -> bytes:
            got = real_fetch(start, end)
            asked.append((start, start + len(got)))
            return got

        f._fetch_range = fetch
        f.cache.fetcher = fetch
        return f

    monkeypatch.setattr(remote, "open_binary", counting)
    src = open_source("s3://runs-bucket/live/train.log", "text")
    assert src.update()
    [loss] = [s for s in src.log.series.values() if s.name == "loss" and len(s)]
    n = len(loss)
    asked.clear()
    more = b"step  751/19560 | loss nan (+0.00z)| norm 0.5812 (-1.13z)| lr 6.00e-04 | 4212.08 ms\n"
    fs.pipe("runs-bucket/live/train.log", text + more)  # S3 has no append: the writer uploads the object again
    assert src.update()
    assert len(loss) == n + 1 and str(loss.values[-1]) == "nan"  # the same series, one point more: no re-read
    fetched = sum(e - s for s, e in asked)
    # the head (is it the same file?), the last 64 bytes read (not rewritten?), then only what was appended
    assert fetched < 512 and asked[0] == (0, 64) and all(s >= len(text) - 64 for s, _ in asked[1:]), asked
    assert not src.update()  # unchanged: a metadata request, no read


def test_watch_polls_an_s3_log_and_reports_the_new_finding(s3, tmp_path: Path):
    server, fs = s3
    body = "".join(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n" for i in range(1, 41))
    fs.pipe("runs-bucket/watched/train.log", body.encode())
    proc = subprocess.Popen([*TRAINLINT, "watch", "--format", "json", "--poll-seconds", "0.3",
                             "s3://runs-bucket/watched/train.log"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=server.env, cwd=tmp_path)
    try:
        status = json.loads(proc.stdout.readline())
        assert status["event"] == "status" and status["points"] == 40, status
        fs.pipe("runs-bucket/watched/train.log", (body + "step 41, loss: nan\n").encode())
        finding = json.loads(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=15)
    assert (finding["event"], finding["id"], finding["line"]) == ("finding", "TP-NAN", 41)
    assert finding["path"] == "s3://runs-bucket/watched/train.log"


def test_check_a_log_served_over_http(tmp_path: Path):
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        pytest.skip("aiohttp (fsspec's HTTP filesystem) is not installed: pip install 'trainlint[http]'")
    shutil.copy(RUNS / "gallery-lr_hot" / "trainer_state.json", tmp_path / "trainer_state.json")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/trainer_state.json"
        r = tl("check", url, env=dict(os.environ))
    finally:
        server.shutdown()
        server.server_close()
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith(f"{url}:429:15: TP-DIVERGE [FAIL]")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass
