"""``trainlint/curves`` from the real server over stdio: the curves view's data, its lines in the client's lines,
and for an event file the line of each point in the text view (fixtures/live: HF tqdm stdout, Keras TensorBoard)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import FIXTURES

SERVER = [sys.executable, "-m", "trainlint.lsp"]
LIVE = FIXTURES / "live"


def plain(obj):  # type: ignore[no-untyped-def]
    """pygls hands a custom request's answer back as named tuples: as JSON again."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    return obj


async def request(client: LanguageClient, method: str, params: dict) -> dict:
    return plain(await client.protocol.send_request_async(method, params))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for name in ("hf-diverge", "keras-tb-diverge"):
        shutil.copytree(LIVE / name, ws / name)
    old = time.time() - 3 * 86400
    for p in ws.rglob("*"):
        os.utime(p, (old, old))
    return ws


@pytest_lsp.fixture(params=[("Visual Studio Code", "visual-studio-code"), ("Neovim", "neovim@v0.7.0")],
                    config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path):
    name, profile = request.param

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: t.RegistrationParams) -> None:
        return None

    lsp_client.set_configuration({"trainlint": {"debounceMs": 50}})
    lsp_client.lf = name == "Neovim"  # type: ignore[attr-defined]
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities(profile), client_info=t.ClientInfo(name=name),
        root_uri=workspace.as_uri(), workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options={"debounceMs": 50}))
    yield
    await lsp_client.shutdown_session()


async def test_curves_of_a_text_log_in_the_clients_lines(client: LanguageClient, workspace: Path):
    uri = (workspace / "hf-diverge" / "train.log").as_uri()
    doc = await request(client, "trainlint/curves", {"uri": uri})
    series = {s["label"]: s for s in doc["series"]}
    assert series["loss"]["points"] == 60 and len(series["loss"]["steps"]) == 60
    div = [f for f in doc["findings"] if f["id"] == "TP-DIVERGE"][0]
    lf = client.lf  # type: ignore[attr-defined]
    assert div["line"] == (165 if lf else 760)
    value = [m for m in div["marks"] if m["role"] == "value"][0]
    assert (value["step"], value["value"], value["line"]) == (300, 45.79, 165 if lf else 760)
    i = series["loss"]["steps"].index(300)
    assert series["loss"]["lines"][i] == value["line"]  # a click on the point lands where the finding is


async def test_curves_of_an_event_file_point_at_its_text_view(client: LanguageClient, workspace: Path):
    member = next((workspace / "keras-tb-diverge" / "logs" / "train").glob("events.out.tfevents.*"))
    doc = await request(client, "trainlint/curves", {"uri": member.as_uri()})
    assert doc["verdict"] == "FAIL"
    nan = [f for f in doc["findings"] if f["id"] == "TP-NAN" and "train/" in f["label"]][0]
    first = nan["marks"][0]
    assert first["nonfinite"] == "nan" and first["record"] == 14 and first["step"] == 6
    view = await request(client, "trainlint/renderEvents", {"uri": member.as_uri()})
    text = view["text"].split("\n")[first["line"] - 1].split("\t")
    assert (text[0], text[1], text[2], text[4]) == ("6", "train/epoch_loss", "nan", "14")
