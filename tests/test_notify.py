"""``trainlint watch --notify``: alerts posted to real HTTP servers on 127.0.0.1 started here (one that answers,
one that hangs, one that answers 500), and ``--notify-command``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class Hook:
    """A webhook on loopback that records each POST (``mode``: ok, hang, fail)."""

    def __init__(self, mode: str) -> None:
        self.mode, self.posts, self.attempts = mode, [], 0
        self.release = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.attempts += 1
                if hook.mode == "hang":
                    hook.release.wait(30)
                    return
                if hook.mode == "fail":
                    self.send_response(500)
                    self.end_headers()
                    return
                hook.posts.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hooks():
    made = {m: Hook(m) for m in ("ok", "hang", "fail")}
    yield made
    for h in made.values():
        h.close()


def wait_for(cond, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def healthy(n: int) -> str:
    return "".join(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n" for i in range(1, n + 1))


def start(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "trainlint.cli", "watch", "--format", "json", *args], cwd=cwd,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def events(proc: subprocess.Popen, n: int) -> list[dict]:
    return [json.loads(proc.stdout.readline()) for _ in range(n)]


def test_each_finding_and_resolution_posted_once_while_a_hanging_and_a_failing_hook_block_nothing(
        tmp_path: Path, hooks: dict[str, Hook]):
    log = tmp_path / "train.log"
    log.write_text(healthy(40))
    sink = tmp_path / "alerts.jsonl"
    script = tmp_path / "sink.py"
    script.write_text("import sys\nopen(sys.argv[1], 'a').write(sys.stdin.read().strip() + '\\n')\n")
    proc = start("--notify", hooks["hang"].url, "--notify", hooks["fail"].url, "--notify", hooks["ok"].url,
                 "--notify-timeout", "1", "--notify-command", f"{sys.executable} {script} {sink}", str(tmp_path),
                 cwd=tmp_path)
    try:
        assert events(proc, 1)[0]["verdict"] == "PASS"
        with open(log, "a") as f:
            f.write("step 41, loss: nan\n")
        t0 = time.monotonic()
        finding, status = events(proc, 2)
        seen_after = time.monotonic() - t0
        assert (finding["event"], finding["id"], status["verdict"]) == ("finding", "TP-NAN", "FAIL")
        assert wait_for(lambda: len(hooks["ok"].posts) == 1, 5)
        posted_after = time.monotonic() - t0
        log.write_text(healthy(42))  # rewritten without the NaN: the finding is resolved
        resolved = events(proc, 1)[0]
        assert resolved["event"] == "resolved"
        assert wait_for(lambda: len(hooks["ok"].posts) == 2, 5)
        assert wait_for(lambda: hooks["fail"].attempts == 6, 10)  # 3 attempts for each of the two alerts
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    # the hanging hook holds its own queue only: the answering one had the alert in well under its 1 s timeout
    assert hooks["hang"].attempts >= 1 and seen_after < 3 and posted_after < 3, (seen_after, posted_after)
    first, second = hooks["ok"].posts
    assert first["text"] == "trainlint: TP-NAN [FAIL] train.log:41: `loss`: 1 of 41 logged values are non-finite; " \
                            "the first is NaN at step 41"
    fields = {f["text"].split("\n")[0]: f["text"].split("\n")[1] for f in first["blocks"][1]["fields"]}
    assert fields == {"*Rule*": "TP-NAN", "*Level*": "FAIL", "*File*": "train.log", "*Line*": "41",
                      "*Evidence*": "`loss`: 1 of 41 logged values are non-finite; the first is NaN at step 41"}
    assert first["trainlint"] | {"series": None} == {
        "event": "finding", "id": "TP-NAN", "level": "FAIL", "series": None, "path": "train.log", "line": 41,
        "record": None, "evidence": "`loss`: 1 of 41 logged values are non-finite; the first is NaN at step 41"}
    assert second["trainlint"]["event"] == "resolved" and second["text"].startswith("trainlint: resolved: TP-NAN")
    assert "not delivered after 3 attempt(s) (HTTPError: HTTP Error 500" in err
    by_command = [json.loads(x) for x in sink.read_text().splitlines()]
    assert [a["event"] for a in by_command] == ["finding", "resolved"] and by_command[0]["line"] == 41


def test_a_log_that_stops_growing_at_its_usual_rhythm_is_an_alert(tmp_path: Path, hooks: dict[str, Hook]):
    log = tmp_path / "train.log"
    log.write_text(healthy(20))
    proc = start("--notify", hooks["ok"].url, "--stall-factor", "4", str(tmp_path), cwd=tmp_path)
    try:
        events(proc, 1)
        for i in range(21, 29):  # a point every 0.4 s, then silence
            with open(log, "a") as f:
                f.write(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n")
            time.sleep(0.4)
        assert wait_for(lambda: any(p["trainlint"]["event"] == "stall" for p in hooks["ok"].posts), 10)
        with open(log, "a") as f:
            f.write("step 29, loss: 2.4200\n")
        assert wait_for(lambda: any(p["trainlint"]["event"] == "resumed" for p in hooks["ok"].posts), 10)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    [stall] = [p["trainlint"] for p in hooks["ok"].posts if p["trainlint"]["event"] == "stall"]
    usual = stall["usual_interval_s"]
    assert 0.2 < usual < 1.0 and stall["idle_s"] >= 4 * usual * 0.99, stall
    assert stall["evidence"].startswith(f"no new point for {stall['idle_s']:.1f} s (")
    stalls = [json.loads(x) for x in out.splitlines() if '"stall"' in x]
    assert len(stalls) == 1  # once, until it grows again


def test_a_bad_notify_url_is_refused_before_watching(tmp_path: Path):
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "watch", "--notify", "ftp://x", str(tmp_path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "an http:// or https:// URL is needed" in r.stderr and "Traceback" not in r.stderr
