"""The real server over stdio (pytest-lsp), as VS Code and as Neovim 0.7 would talk to it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import RUNS

SERVER = [sys.executable, "-m", "trainlint.lsp"]
PROFILES = ["visual-studio-code", "neovim@v0.7.0"]


def rows(losses: list[float]) -> str:
    return "".join(json.dumps({"step": i * 10, "loss": v}) + "\n" for i, v in enumerate(losses))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("gallery-lr_hot", "gallery-healthy", "xtts-prefix"):
        shutil.copytree(RUNS / name, ws / name)
    old = time.time() - 3 * 86400  # these runs stopped long ago (a fresh checkout has new mtimes)
    for p in ws.rglob("*"):
        os.utime(p, (old, old))
    (ws / "growing").mkdir()
    (ws / "growing" / "metrics.jsonl").write_text(rows([2.0 - 0.01 * i for i in range(40)]))
    return ws


@pytest_lsp.fixture(params=PROFILES, config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path):
    lsp_client.registrations = []  # type: ignore[attr-defined]

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: t.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    lsp_client.set_configuration({"trainlint": {"debounceMs": 50}})
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=workspace.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options={"debounceMs": 50},
    ))
    yield
    await lsp_client.shutdown_session()


async def until(predicate, timeout: float = 15.0, what: str = "condition"):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def codes(client: LanguageClient, uri: str) -> list[tuple[str, int]]:
    return sorted((str(d.code), d.range.start.line) for d in client.diagnostics.get(uri, []))


async def test_initial_scan_publishes_unopened_logs(client: LanguageClient, workspace: Path):
    lr_hot = (workspace / "gallery-lr_hot" / "trainer_state.json").as_uri()
    diags = await until(lambda: client.diagnostics.get(lr_hot), what="lr_hot diagnostics")
    div = [d for d in diags if d.code == "TP-DIVERGE"][0]
    assert div.range.start == t.Position(428, 14) and div.range.end.character == 31
    assert div.severity == t.DiagnosticSeverity.Error and div.source == "trainlint"
    assert div.code_description.href.endswith("docs/rules/TP-DIVERGE.md")
    assert div.message.startswith("`loss` (per-step): end level 7.55681") and "\nThe loss ends" in div.message
    assert [r.location.range.start.line for r in div.related_information] == [15, 400]
    assert div.related_information[0].message.startswith("minimum:")
    assert div.data["evidence"]["window"] == 5 and div.data["level"] == "FAIL"
    spike = [d for d in diags if d.code == "TP-GRAD-SPIKE"][0]
    assert spike.severity == t.DiagnosticSeverity.Warning
    healthy = (workspace / "gallery-healthy" / "trainer_state.json").as_uri()
    await until(lambda: healthy in client.diagnostics, what="healthy published")
    assert list(client.diagnostics[healthy]) == []  # PASS is not a diagnostic
    if client.profile == "visual-studio-code":  # type: ignore[attr-defined]
        assert any(r.method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)


async def test_append_moves_the_diagnostic_then_truncate_clears_it(client: LanguageClient, workspace: Path):
    log = workspace / "growing" / "metrics.jsonl"
    uri = log.as_uri()
    await until(lambda: uri in client.diagnostics, what="growing log judged")
    assert "TP-DIVERGE" not in [c for c, _ in codes(client, uri)]
    with open(log, "a") as f:
        f.write(rows([2.0 - 0.01 * i for i in range(40)] + [5.0] * 12)[len(log.read_text()):])
    await until(lambda: ("TP-DIVERGE", 51) in codes(client, uri), what="divergence on line 52")
    with open(log, "a") as f:
        f.write(json.dumps({"step": 520, "loss": 5.1}) + "\n")
    await until(lambda: ("TP-DIVERGE", 52) in codes(client, uri), what="divergence moved to line 53")
    log.write_text(rows([2.0 - 0.01 * i for i in range(30)]))  # truncated and rewritten
    await until(lambda: "TP-DIVERGE" not in [c for c, _ in codes(client, uri)], what="cleared after truncation")


async def test_new_and_deleted_run_directories(client: LanguageClient, workspace: Path):
    lr_hot = (workspace / "gallery-lr_hot" / "trainer_state.json").as_uri()
    await until(lambda: client.diagnostics.get(lr_hot), what="initial scan")
    new = workspace / "new-run"
    new.mkdir()
    shutil.copy(RUNS / "gallery-lr_zero" / "trainer_state.json", new / "trainer_state.json")
    new_uri = (new / "trainer_state.json").as_uri()
    await until(lambda: "TP-ZERO-LR" in [c for c, _ in codes(client, new_uri)], what="new run judged")
    shutil.rmtree(workspace / "gallery-lr_hot")
    await until(lambda: lr_hot in client.diagnostics and not client.diagnostics[lr_hot], what="deleted run cleared")


async def test_hover_splits_measured_from_interpretation(client: LanguageClient, workspace: Path):
    uri = (workspace / "gallery-lr_hot" / "trainer_state.json").as_uri()
    await until(lambda: client.diagnostics.get(uri), what="diagnostics")
    h = await client.text_document_hover_async(t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(428, 16)))
    md = h.contents.value
    order = [md.index(x) for x in ("**TP-DIVERGE** · FAIL", "Series: `loss` (per-step) · 60 points", "**Measured**",
                                   "**Interpretation**", "◆", "documentation](")]
    assert order == sorted(order)  # the sparkline (◆ marks the end) comes after the interpretation
    assert "- end level: 7.55681" in md and "- lowest level: 2.35031" in md and "- at: line 429" in md
    assert "- end window: steps 280–300" in md and "- lowest window: steps 5–10" in md  # words, one line a window
    plain = await client.text_document_hover_async(t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(22, 10)))
    assert "`loss` (per-step): role train-loss, step 10, value 3.30234 (point 2 of 60)" in plain.contents.value


async def test_code_lens_and_symbols(client: LanguageClient, workspace: Path):
    uri = (workspace / "xtts-prefix" / "trainer_0_log.txt").as_uri()
    await until(lambda: uri in client.diagnostics, what="xtts judged")
    lenses = await client.text_document_code_lens_async(t.CodeLensParams(t.TextDocumentIdentifier(uri)))
    titles = [lens.command.title for lens in lenses]
    assert titles[0].startswith("trainlint: PASS — 2 INFO · steps 0–72900")
    assert titles[1].startswith("ran: non-finite-loss") and titles[2].startswith("skipped: zero-grad (no-series")
    syms = await client.text_document_document_symbol_async(
        t.DocumentSymbolParams(t.TextDocumentIdentifier(uri)))
    names = [s.name for s in syms]
    assert names[:2] == ["epoch 0/1000 (from step 0)", "epoch 1/1000 (from step 0)"]
    children = [c.name for c in syms[1].children]
    assert "checkpoint at step 10000" in children and "evaluation at step 24940" in children


async def test_diagnostics_equal_trainlint_check(client: LanguageClient, workspace: Path):
    paths = [workspace / "gallery-lr_hot" / "trainer_state.json", workspace / "xtts-prefix" / "trainer_0_log.txt"]
    for p in paths:
        await until(lambda p=p: p.as_uri() in client.diagnostics, what=f"{p.name} judged")
    out = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "json", *map(str, paths)],
                         capture_output=True, text=True, timeout=60)
    for rep in json.loads(out.stdout)["reports"]:
        uri = Path(rep["path"]).as_uri()
        cli = sorted((f["id"], f["location"]["line"] - 1) for f in rep["findings"] if f["level"] != "PASS")
        assert codes(client, uri) == cli


async def test_render_events_request_and_view_diagnostics(client: LanguageClient, workspace: Path):
    tb = workspace / "tb"
    shutil.copytree(RUNS / "modded-nanogpt-tb", tb)
    member = next((tb / "tensorboard_logs").glob("events.out.tfevents.*"))
    res = await client.protocol.send_request_async("trainlint/renderEvents", {"uri": member.as_uri()})
    view_uri = res["uri"] if isinstance(res, dict) else res.uri
    text = res["text"] if isinstance(res, dict) else res.text
    assert view_uri.startswith("trainlint-events:///") and text.startswith("# trainlint view of")
    lines = text.splitlines()
    diags = await until(lambda: client.diagnostics.get(view_uri), what="diagnostics on the events view")
    thr = [d for d in diags if d.code == "TP-THROUGHPUT"][0]
    assert lines[thr.range.start.line].split("\t")[1] == "Loss/Train"


async def test_invalid_settings_are_reported_and_defaults_used(tmp_path: Path):
    """A bad setting gives a window/showMessage; the server keeps serving with the default."""
    ws = tmp_path / "ws2"
    shutil.copytree(RUNS / "gallery-lr_hot", ws / "run")
    cfg = ClientServerConfig(server_command=SERVER)
    client = await cfg.start(None)  # type: ignore[arg-type]
    try:
        await client.initialize_session(t.InitializeParams(
            capabilities=client_capabilities("neovim@v0.7.0"), root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            initialization_options={"scope": "everything", "severity": {"fail": "loud"}}))
        uri = (ws / "run" / "trainer_state.json").as_uri()
        await until(lambda: client.diagnostics.get(uri), what="diagnostics despite bad settings")
        msgs = [m.message for m in client.messages]
        assert any("trainlint.scope" in m and "default" in m for m in msgs)
        assert any("trainlint.severity.fail" in m for m in msgs)
        assert [d.severity for d in client.diagnostics[uri] if d.code == "TP-DIVERGE"] == [t.DiagnosticSeverity.Error]
        (ws / ".trainlint.yaml").write_text("thresholds:\n  max_loss_divergence_ratio: lots\nroles: [1]\n")
        await until(lambda: any("max_loss_divergence_ratio" in m.message for m in client.messages),
                    what="config file error reported")
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_each_file_s_diagnostics_come_worst_first(client: LanguageClient, workspace: Path):
    staged = workspace.parent / "fp16"
    shutil.copytree(RUNS / "gallery-fp16_nan", staged)
    old = time.time() - 3 * 86400  # a run that stopped long ago (a fresh checkout gives new mtimes)
    for p in staged.rglob("*"):
        os.utime(p, (old, old))
    staged.rename(workspace / "fp16")  # appears while the server watches
    uri = (workspace / "fp16" / "trainer_state.json").as_uri()
    diags = await until(lambda: client.diagnostics.get(uri), what="fp16 diagnostics")
    # the report lists TP-NAN-GRAD (WARN, line 35) first; the editor gets the FAILs first, then the WARNs
    got = [(d.code, d.severity, d.range.start.line) for d in diags]
    # (TP-DEAD-RUN on the same value as TP-DIVERGE is folded into its evidence: one problem, one diagnostic)
    assert got == [("TP-DIVERGE", 1, 428), ("TP-NAN-GRAD", 2, 34), ("TP-GRAD-SPIKE", 2, 41)]
