"""The server under bad input, faults and load: it keeps serving, never writes, loses nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import RUNS
from test_lsp import until

SERVER = [sys.executable, "-m", "trainlint.lsp"]


async def start(ws: Path, options: dict | None = None) -> LanguageClient:
    client = await ClientServerConfig(server_command=SERVER).start(None)  # type: ignore[arg-type]
    await client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("neovim@v0.7.0"), root_uri=ws.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        initialization_options={"debounceMs": 50, **(options or {})}))
    return client


async def stop(client: LanguageClient) -> None:
    await client.shutdown_session()
    await client.stop()


async def hover(client: LanguageClient, uri: str, line: int) -> t.Hover | None:
    return await asyncio.wait_for(client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line, 16))), 10)


async def test_bad_inputs_get_a_diagnostic_or_nothing_and_the_server_keeps_serving(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(RUNS / "gallery-lr_hot", ws / "good")
    bad = ws / "bad"
    bad.mkdir()
    (bad / "empty.log").write_bytes(b"")
    (bad / "train.log").write_bytes(b"\x00\x01garbage" * 1000)
    (bad / "trainer_state.json").write_text('{"log_history": [{"loss": 1.0, "step": 1}, {"lo')
    (bad / "metrics.jsonl").write_bytes(b'{"step": 1, "loss": "x"}\n[1]\n{"step": 2, "loss": \xff}\n')
    (bad / "loop.log").symlink_to(bad / "loop.log")
    with open(bad / "huge.jsonl", "wb") as f:
        f.write(b'{"step": 1, "loss": 1.0}\n{"x": "' + b"y" * (20 << 20) + b'"}\n')
    client = await start(ws)
    try:
        good = (ws / "good" / "trainer_state.json").as_uri()
        await until(lambda: client.diagnostics.get(good), what="good log judged")
        truncated = (bad / "trainer_state.json").as_uri()
        await until(lambda: truncated in client.diagnostics, what="cut trainer_state judged")
        h = await hover(client, good, 428)
        assert h is not None and "TP-DIVERGE" in h.contents.value
        # a file that turns unreadable while watched: a NOT-CHECKED diagnostic, not a dead server
        (bad / "metrics.jsonl").write_bytes(os.urandom(3000).replace(b"\n", b"\x00"))
        await asyncio.sleep(0.5)
        assert (await hover(client, good, 428)) is not None
        assert client.diagnostics.get(good)
    finally:
        await stop(client)


def snapshot(root: Path) -> dict[str, tuple[int, int, int, str]]:
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else "dir"
        out[str(p.relative_to(root))] = (st.st_ino, st.st_size, st.st_mtime_ns, digest)
    return out


def open_for_writing(pid: int, root: Path) -> list[str]:
    """Files under root the process holds open for writing, or has locked (from /proc)."""
    bad = []
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in list(fd_dir.iterdir()) if fd_dir.exists() else []:
        try:
            target = os.readlink(fd)
            flags = int((Path(f"/proc/{pid}/fdinfo") / fd.name).read_text().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if target.startswith(str(root)) and flags & os.O_ACCMODE != os.O_RDONLY:
            bad.append(target)
    locks = Path("/proc/locks").read_text() if Path("/proc/locks").exists() else ""
    bad += [ln for ln in locks.splitlines() if f" {pid} " in ln]
    return bad


async def test_read_only_guarantee(tmp_path):
    ws = tmp_path / "ws"
    for name in ("gallery-lr_hot", "gallery-healthy", "xtts-prefix", "modded-nanogpt-tb", "keras-brats"):
        shutil.copytree(RUNS / name, ws / name)
    growing = ws / "keras-brats" / "training.log"
    rewritten = ws / "gallery-healthy" / "trainer_state.json"
    before = snapshot(ws)
    client = await start(ws)
    pid = client._server.pid  # type: ignore[attr-defined]
    seen: list[str] = []
    try:
        await until(lambda: len(client.diagnostics) >= 4, what="workspace judged")
        lines = growing.read_text().splitlines()
        for k in range(6):
            with open(growing, "a") as f:
                f.write(lines[1 + k] + "\n")
            seen += open_for_writing(pid, ws)
            await asyncio.sleep(0.15)
        rewritten.write_text(rewritten.read_text().replace('"max_steps": 300', '"max_steps": 600'))
        for _ in range(10):
            seen += open_for_writing(pid, ws)
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
    finally:
        await stop(client)
    assert seen == []
    after = snapshot(ws)
    assert set(after) == set(before), "trainlint created or removed files in the workspace"
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {"keras-brats/training.log", "gallery-healthy/trainer_state.json"}


async def test_a_raising_handler_is_answered_with_an_error_and_the_server_survives(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(RUNS / "gallery-lr_hot", ws / "run")
    client = await start(ws)
    try:
        uri = (ws / "run" / "trainer_state.json").as_uri()
        await until(lambda: client.diagnostics.get(uri), what="judged")
        with pytest.raises(Exception, match="not a TensorBoard event file"):
            await client.protocol.send_request_async("trainlint/renderEvents", {"uri": uri})
        # bad parameters: an error that says what was wrong with them, not internal error text
        with pytest.raises(Exception, match=r"needs \{\"uri\": <event file or trainlint-events: URI as a string>\}"):
            await client.protocol.send_request_async("trainlint/renderEvents", {"uri": 5})
        assert (await hover(client, uri, 428)) is not None  # still serving
    finally:
        await stop(client)


def test_client_disconnect_ends_the_server_cleanly(tmp_path):
    shutil.copytree(RUNS / "gallery-healthy", tmp_path / "run")
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}).encode()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()
    header = proc.stdout.readline()
    assert header.startswith(b"Content-Length")
    proc.stdin.close()  # the editor went away without shutdown/exit
    try:
        code = proc.wait(timeout=15)
    finally:
        proc.kill()
    assert code == 0
    assert b"Traceback" not in proc.stderr.read()


def test_exit_during_a_long_scan_is_prompt(tmp_path):
    """`exit` while the worker reads a large log: the process ends at once (it waited for the read, 28 s)."""
    run = tmp_path / "run"
    run.mkdir()
    line = b"step %d/999999 | train loss 2.345678 | norm 0.5812 | lr 6.00e-04 | (12.3 ms | 41000 tok/s)\n"
    with open(run / "train.log", "wb") as f:
        for chunk in range(600):
            f.write(b"".join(line % (chunk * 1000 + i) for i in range(1000)))  # ~60 MB
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def send(obj: dict) -> None:
        body = json.dumps(obj).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
        assert proc.stdout.readline().startswith(b"Content-Length")
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        time.sleep(0.5)  # the scan is reading the 60 MB log in the worker now
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        send({"jsonrpc": "2.0", "method": "exit"})
        t0 = time.monotonic()
        code = proc.wait(timeout=60)
        took = time.monotonic() - t0
    finally:
        proc.kill()
    assert code == 0 and took < 1.5, (code, took)


@pytest.mark.slow
async def test_load_200_runs_appended_concurrently(tmp_path):
    """200 run directories appended by 4 writers for a bounded time: hover answers throughout, and
    the final diagnostics equal a cold ``trainlint check`` of the same files."""
    ws = tmp_path / "ws"
    srcs = [RUNS / "keras-brats" / "training.log", RUNS / "llamafactory-nsllm" / "trainer_log.jsonl"]
    logs = []
    for i in range(200):
        src = srcs[i % 2]
        d = ws / f"run{i:03d}"
        d.mkdir(parents=True)
        lines = src.read_text().splitlines(keepends=True)
        cut = len(lines) // 2
        (d / src.name).write_text("".join(lines[:cut]))
        logs.append((d / src.name, lines, cut))
    client = await start(ws)
    try:
        await until(lambda: len(client.diagnostics) >= 200, timeout=120, what="200 logs judged")
        stop_at = time.monotonic() + 6
        errors: list[BaseException] = []

        def writer(part: list[tuple[Path, list[str], int]]) -> None:
            rng = random.Random(len(part))
            pos = {p: c for p, _, c in part}
            try:
                while time.monotonic() < stop_at:
                    p, lines, _ = rng.choice(part)
                    n = pos[p]
                    if n < len(lines):
                        with open(p, "a") as f:
                            f.write("".join(lines[n:n + rng.randint(1, 5)]))
                        pos[p] = min(len(lines), n + 5)
                    time.sleep(0.002)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(logs[k::4],)) for k in range(4)]
        for th in threads:
            th.start()
        probe_uri = logs[0][0].as_uri()
        answered = 0
        while any(th.is_alive() for th in threads):
            await hover(client, probe_uri, 1)  # must answer within 10 s every time
            answered += 1
            await asyncio.sleep(0.1)
        for th in threads:
            th.join()
        assert not errors and answered >= 20
        # the server calls these logs, written moments ago, runs still being written; `check` judges the bytes
        # unless told so (issue 30): --live
        out = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--live", "--format", "json", str(ws)],
                             capture_output=True, text=True, timeout=300)
        reports = json.loads(out.stdout)["reports"]
        expected = {Path(r["path"]).as_uri(): sorted((f["id"], f["location"]["line"] - 1) for f in r["findings"]
                                                     if f["level"] != "PASS") for r in reports}

        def settled() -> bool:
            return all(sorted((str(d.code), d.range.start.line) for d in client.diagnostics.get(u, [])) == want
                       for u, want in expected.items())

        await until(settled, timeout=60, what="diagnostics equal to a cold check")
        assert len(expected) == 200
    finally:
        await stop(client)


def test_ignore_patterns_setting_hides_matching_files():
    from trainlint.lsp.server import ignored
    from trainlint.lsp.settings import Settings

    s, errors = Settings.parse({"ignorePatterns": ["**/old_runs/**", "*.csv"]})
    assert errors == [] and s.ignore_patterns == ["**/old_runs/**", "*.csv"]
    assert ignored("/ws/old_runs/a/trainer_state.json", s.ignore_patterns)
    assert ignored("/ws/runs/results.csv", s.ignore_patterns)
    assert not ignored("/ws/runs/trainer_state.json", s.ignore_patterns)
    _, errors = Settings.parse({"ignorePatterns": "old_runs"})
    assert errors and "list of glob patterns" in errors[0]


def test_numeric_settings_have_a_range_and_fall_back_with_a_message():
    from trainlint.lsp.settings import Settings

    s, errors = Settings.parse({"debounceMs": 10**12, "maxDiagnosticsPerFile": 10**30})
    assert (s.debounce_ms, s.max_diagnostics_per_file) == (150, 200)
    assert errors == ["trainlint.debounceMs must be an integer from 0 to 60000, got 1000000000000; using 150",
                      "trainlint.maxDiagnosticsPerFile must be an integer from 1 to 10000, got "
                      "1000000000000000000000000000000; using 200"]


class RawClient:
    """The base protocol by hand: frames a real client would never send."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.root = root

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: dict | bytes) -> None:
        body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def answer(self, msg_id: int, timeout: float = 20) -> dict:
        """The response to ``msg_id`` (notifications in between are skipped)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            length = 0
            while True:
                line = self.proc.stdout.readline()
                assert line, "the server closed its output"
                if line.startswith(b"Content-Length:"):
                    length = int(line.split(b":")[1])
                elif line == b"\r\n":
                    break
            msg = json.loads(self.proc.stdout.read(length))
            if msg.get("id") == msg_id and "method" not in msg:
                return msg
        raise TimeoutError(f"no answer to request {msg_id}")


def test_absurd_frames_and_bad_params_are_answered_and_the_server_keeps_serving(tmp_path):
    """`Content-Length: 10^12` killed the server (exit 1); a request whose params do not fit its method was
    never answered. Every request gets an answer, an absurd frame a logged error, and serving goes on."""
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "run")
    c = RawClient(tmp_path)
    try:
        c.raw(b"Content-Length: 1000000000000\r\n\r\n")
        c.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
        assert "capabilities" in c.answer(1)["result"]
        c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        c.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": 5}})
        bad = c.answer(2)["error"]
        assert bad["code"] == -32602 and "textDocument/hover" in bad["message"]
        c.send(b"{not json")
        c.send({"jsonrpc": "2.0", "id": 3, "method": "trainlint/renderEvents", "params": {"uri": 5}})
        assert "uri" in c.answer(3)["error"]["message"]
        c.send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
        assert c.answer(4)["result"] is None
        c.send({"jsonrpc": "2.0", "method": "exit"})
        code = c.proc.wait(timeout=20)
    finally:
        c.proc.kill()
    err = c.proc.stderr.read().decode() if c.proc.stderr else ""
    assert code == 0, err
    assert "declares 1000000000000 bytes" in err and "not valid JSON" in err


async def test_directory_links_out_of_the_workspace_are_never_watched_and_appends_still_count(tmp_path):
    """A link to `/` blocked the event loop 20-45 s and a link to a folder outside the workspace was
    followed by the watcher (its logs published) though `check` skips it. One rule: directory links are not
    followed; appends inside the workspace are still re-judged, and hover answers throughout."""
    ws = tmp_path / "ws"
    run = ws / "run"
    run.mkdir(parents=True)
    log = run / "metrics.jsonl"
    log.write_text("".join(f'{{"step": {i}, "loss": {2.0 - i / 100}}}\n' for i in range(60)))
    shutil.copytree(RUNS / "gallery-lr_hot", tmp_path / "outside" / "hot")
    (ws / "root").symlink_to("/")
    (ws / "elsewhere").symlink_to(tmp_path / "outside")
    client = await start(ws)
    try:
        await until(lambda: log.as_uri() in client.diagnostics, what="the workspace log judged")
        outside = (tmp_path / "outside" / "hot" / "trainer_state.json")
        (outside.parent / "late.jsonl").write_text('{"step": 1, "loss": NaN}\n{"step": 2, "loss": NaN}\n')
        with outside.open("a") as f:
            f.write(" ")
        with log.open("a") as f:
            f.write('{"step": 60, "loss": NaN}\n')
        t0 = time.monotonic()
        while not any(str(d.code) == "TP-NAN" for d in client.diagnostics.get(log.as_uri(), [])):
            h0 = time.monotonic()
            await hover(client, log.as_uri(), 3)
            assert time.monotonic() - h0 < 1.0
            assert time.monotonic() - t0 < 15, "the append was never re-judged"
            await asyncio.sleep(0.1)
        published = [u for u, diags in client.diagnostics.items() if diags]
        assert all(u.startswith(ws.as_uri() + "/run/") for u in published), published
    finally:
        await stop(client)


async def test_an_unreadable_folder_never_stops_the_watcher():
    """As a user who cannot read one folder of the workspace, the watcher died at its start and appends were
    never judged again. Run as `nobody` (root reads every folder)."""
    import tempfile

    base = Path(tempfile.mkdtemp())  # under /tmp, reachable by an unprivileged user once opened up
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    try:
        os.chmod(base, 0o755)
        if as_nobody and subprocess.run([*as_nobody, *SERVER[:1], "-c", "import trainlint.lsp.server"],
                                        capture_output=True, timeout=60).returncode != 0:
            pytest.skip("an unprivileged user cannot run this checkout's interpreter (it sits in a private "
                        "directory), so an unreadable folder cannot be produced for real here")
        ws = base / "ws"
        (ws / "run").mkdir(parents=True)
        (ws / "secret" / "inner").mkdir(parents=True)
        log = ws / "run" / "metrics.jsonl"
        log.write_text("".join(f'{{"step": {i}, "loss": {2.0 - i / 100}}}\n' for i in range(60)))
        for p in (ws, ws / "run"):
            os.chmod(p, 0o777)
        os.chmod(log, 0o666)
        os.chmod(ws / "secret", 0o000)
        client = await ClientServerConfig(server_command=[*as_nobody, *SERVER]).start(None)  # type: ignore[arg-type]
        await client.initialize_session(t.InitializeParams(
            capabilities=client_capabilities("neovim@v0.7.0"), root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            initialization_options={"debounceMs": 50}))
        try:
            await until(lambda: log.as_uri() in client.diagnostics, what="the readable log judged")
            await asyncio.sleep(0.5)
            with log.open("a") as f:
                f.write('{"step": 60, "loss": NaN}\n')
            await until(lambda: any(str(d.code) == "TP-NAN" for d in client.diagnostics.get(log.as_uri(), [])),
                        what="the append judged")
        finally:
            await stop(client)
    finally:
        os.chmod(base / "ws" / "secret", 0o755) if (base / "ws" / "secret").exists() else None
        shutil.rmtree(base)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


async def test_stopped_runs_nobody_opens_keep_their_findings_not_their_points(tmp_path):
    """2,000 closed runs held every decoded point (1.4 GB). A stopped run's points are released once it is
    judged; its diagnostics stay, and a hover or an append reads it again."""
    ws = tmp_path / "ws"
    old = time.time() - 3 * 86400
    for r in range(12):
        log = ws / f"run{r:02d}" / "metrics.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text("".join(f'{{"step": {i}, "loss": {2.0 / (1 + i / 1e4):.6f}, "lr": 0.001, '
                               f'"grad_norm": {1 + (i % 7) / 10}}}\n' for i in range(50_000)))
        os.utime(log, (old, old))
    client = await start(ws)
    try:
        uris = [(ws / f"run{r:02d}" / "metrics.jsonl").as_uri() for r in range(12)]
        await until(lambda: all(u in client.diagnostics for u in uris), timeout=120, what="every run judged")
        # kept, 12 runs x 150,000 points are ~250 MB of arrays and caches; released, what the server itself needs
        assert _rss_mb(client._server.pid) < 150  # type: ignore[attr-defined]
        h = await hover(client, uris[3], 49_999)
        assert h is not None and "point 50000 of 50000" in h.contents.value  # read again for the hover
        log = ws / "run03" / "metrics.jsonl"
        with log.open("a") as f:
            f.write('{"step": 50000, "loss": NaN}\n')
        await until(lambda: any(str(d.code) == "TP-NAN" and d.range.start.line == 50_000
                                for d in client.diagnostics.get(uris[3], [])), what="the append judged")
    finally:
        await stop(client)


def _coqui_log(path: Path, records: int) -> None:
    block = ("\x1b[1m   --> TIME: 2026-02-11 01:08:{s:02d} -- STEP: {a}/24940 -- GLOBAL_STEP: {g}\x1b[0m\n"
             "     | > loss_text_ce: {v1:.6f}  ({v1:.6f})\n     | > loss_mel_ce: {v2:.6f}  ({v2:.6f})\n"
             "     | > loss: {v3:.6f}  ({v3:.6f})\n     | > current_lr: 5e-06 \n"
             "     | > step_time: 0.0509  (0.05133280754089355)\n"
             "     | > loader_time: 0.0051  (0.004459586143493652)\n\n\n")
    with path.open("w") as f:
        f.write(" > EPOCH: 0/1000\n > TRAINING (2026-02-11 01:08:02)\n\n")
        for k in range(records):
            v = 0.06 / (1 + k / 1e5)
            f.write(block.format(s=k % 60, a=k % 24940, g=k * 50, v1=v / 3, v2=v * 80, v3=v))


async def test_a_large_log_is_read_a_budget_at_a_time_after_the_small_runs_with_progress(tmp_path):
    """A 1 GB log held every other run back (157 s) with no progress. The scan judges small logs first; a
    large one is read 16 MB at a time, with a work-done progress in percent, and a log opened meanwhile is
    judged before the large one is done."""
    ws = tmp_path / "ws"
    (ws / "big").mkdir(parents=True)
    big = ws / "big" / "trainer_0_log.txt"
    _coqui_log(big, 260_000)  # 100 MB: seven budgets, seconds of reading
    shutil.copytree(RUNS / "gallery-lr_hot", ws / "z-small")  # walked after big/
    old = time.time() - 3 * 86400
    for p in [big, *(ws / "z-small").rglob("*")]:
        os.utime(p, (old, old))
    client = await start(ws)
    try:
        small = (ws / "z-small" / "trainer_state.json").as_uri()
        await until(lambda: small in client.diagnostics, timeout=60, what="the small run judged")
        assert big.as_uri() not in client.diagnostics  # named first by the directory walk, judged last
        late = ws / "z-small" / "metrics.jsonl"
        late.write_text("".join(f'{{"step": {i}, "loss": NaN}}\n' for i in range(5)))
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
            late.as_uri(), "jsonl", 1, late.read_text())))  # opened in the editor: judged between two budgets
        await until(lambda: late.as_uri() in client.diagnostics, timeout=60, what="the new small log judged")
        still_reading = big.as_uri() not in client.diagnostics
        await until(lambda: big.as_uri() in client.diagnostics, timeout=120, what="the large log judged")
        assert still_reading, "the small log waited for the large one"
        reading = [reports for reports in client.progress_reports.values()
                   if reports and getattr(reports[0], "title", "") == "trainlint: reading trainer_0_log.txt"]
        assert len(reading) == 1
        pcts = [r.percentage for r in reading[0][1:] if isinstance(r, t.WorkDoneProgressReport)]
        assert len(pcts) >= 2 and pcts == sorted(pcts) and 0 < pcts[0] < pcts[-1] < 100
        assert isinstance(reading[0][-1], t.WorkDoneProgressEnd)
    finally:
        await stop(client)


async def test_a_fresh_clone_full_of_logs_keeps_only_a_few_of_them_read(tmp_path):
    """A fresh clone gives every log a new mtime: all "being written", all kept read (2,000 runs: 1.4 GB
    until they went quiet). Only the 16 most recently judged unopened live logs keep their points."""
    ws = tmp_path / "ws"
    for r in range(40):
        log = ws / f"run{r:02d}" / "metrics.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text("".join(f'{{"step": {i}, "loss": {2.0 / (1 + i / 1e4):.6f}, "lr": 0.001, '
                               f'"grad_norm": {1 + (i % 7) / 10}}}\n' for i in range(30_000)))
    client = await start(ws)
    try:
        uris = [(ws / f"run{r:02d}" / "metrics.jsonl").as_uri() for r in range(40)]
        await until(lambda: all(u in client.diagnostics for u in uris), timeout=120, what="every run judged")
        # all kept: 40 x 90,000 points, ~230 MB; 16 kept: what the server needs and ~80 MB
        assert _rss_mb(client._server.pid) < 170  # type: ignore[attr-defined]
        log = ws / "run00" / "metrics.jsonl"  # released early: an append reads it again from the top
        with log.open("a") as f:
            f.write('{"step": 30000, "loss": NaN}\n')
        await until(lambda: any(str(d.code) == "TP-NAN" and d.range.start.line == 30_000
                                for d in client.diagnostics.get(uris[0], [])), what="the append judged")
    finally:
        await stop(client)
