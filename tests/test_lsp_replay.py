"""The live replay through the real server: a log grows on disk in 20 steps while the server watches it.
A healthy run never gets an Error diagnostic at any step; a broken one gets its FAIL on the fault's line once
the fault is written, and not before."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import FIXTURES

LIVE = FIXTURES / "live"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "healthy").mkdir(parents=True)
    (ws / "broken").mkdir()
    return ws


class Published(dict):
    """client.diagnostics that also counts the publishes per URI (an unchanged list is published again)."""

    def __init__(self) -> None:
        super().__init__()
        self.count: dict[str, int] = {}

    def __setitem__(self, uri: str, diags: object) -> None:
        self.count[uri] = self.count.get(uri, 0) + 1
        super().__setitem__(uri, diags)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "trainlint.lsp"]))
async def client(lsp_client: LanguageClient, workspace: Path):
    lsp_client.diagnostics = Published()

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: t.RegistrationParams) -> None:
        """VS Code accepts the server's file watchers; the server watches on its own as well."""
    lsp_client.set_configuration({"trainlint": {"debounceMs": 30}})
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=workspace.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options={"debounceMs": 30}))
    yield
    await lsp_client.shutdown_session()


async def grow(client: LanguageClient, src: Path, dst: Path) -> list[tuple[int, list[tuple[str, int]]]]:
    """Write src into dst in 20 growing prefixes; after each, wait for the server's publish for dst and
    record (lines written, [(code, 1-based line) of Error diagnostics])."""
    data = src.read_bytes()
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]
    uri = dst.as_uri()
    seen = []
    for k in range(1, 21):
        cut = len(data) if k == 20 else starts[min(len(starts) - 1, max(1, len(starts) * k // 20))]
        before = client.diagnostics.count.get(uri, 0)
        with open(dst, "ab") as f:  # a trainer appends; it never rewrites
            f.write(data[dst.stat().st_size if dst.exists() else 0:cut])
        deadline = time.monotonic() + 15
        while client.diagnostics.count.get(uri, 0) == before and time.monotonic() < deadline:
            await asyncio.sleep(0.03)
        assert client.diagnostics.count.get(uri, 0) > before, f"no publish after step {k}"
        errors = [(str(d.code), d.range.start.line + 1) for d in client.diagnostics[uri]
                  if d.severity == t.DiagnosticSeverity.Error]
        seen.append((sum(1 for s in starts if 0 < s <= cut), errors))  # lines as the LSP counts them
    return seen


async def test_growing_logs_in_the_server(client: LanguageClient, workspace: Path):
    healthy = await grow(client, LIVE / "hf-healthy" / "train.log", workspace / "healthy" / "train.log")
    assert all(not errors for _, errors in healthy), healthy
    broken = await grow(client, LIVE / "keras-diverge" / "train.log", workspace / "broken" / "train.log")
    for lines, errors in broken:
        if lines < 28:
            assert not errors, (lines, errors)
        else:
            assert ("TP-NAN", 28) in errors, (lines, errors)


async def test_an_mlflow_database_s_findings_go_on_its_text_view(client: LanguageClient, workspace: Path):
    import shutil

    shutil.copy(LIVE / "mlflow-db-diverge" / "mlflow.db", workspace / "broken" / "mlflow.db")
    db = workspace / "broken" / "mlflow.db"
    view_uri = "trainlint-events://" + str(db)
    deadline = time.monotonic() + 20
    while view_uri not in client.diagnostics and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    codes = {(str(d.code), d.range.start.line) for d in client.diagnostics[view_uri]}
    res = await client.protocol.send_request_async("trainlint/renderEvents", {"uri": db.as_uri()})
    text = res["text"] if isinstance(res, dict) else res.text
    lines = text.splitlines()
    assert lines[0].startswith("# trainlint view of mlflow.db: 204 scalars")
    nan_line = next(i for i, ln in enumerate(lines) if ln.startswith("204\ttrain_loss\tnan"))
    assert ("TP-NAN", nan_line) in codes, (codes, nan_line)
