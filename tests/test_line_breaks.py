"""Lines as each consumer counts them: the CLI, SARIF and ``watch`` as ``grep -n`` does (``\\n`` only), the server
as each client splits lines (VS Code: the LSP's lone ``\\r`` too; Neovim: ``\\n`` only), on a real TRL stdout log
whose tqdm bar redraws with ``\\r`` (fixtures/live/trl-nan: 106 lines for ``wc -l``, 525 for the LSP)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import FIXTURES
from trainlint.core import linemap
from trainlint.core.linemap import LineMap
from trainlint.core.lines import split_lines

TRL_NAN = FIXTURES / "live" / "trl-nan" / "train.log"
SERVER = [sys.executable, "-m", "trainlint.lsp"]
# (rule, line as grep -n counts, line as the LSP counts); the value each one marks
# TP-NAN-GRAD (line 17) and TP-ZERO-LOSS-ONSET (18) are one problem since issue 30: TL-NAN-HIDDEN on line 17
EXPECTED = {"TP-NAN": (33, 156, "nan"), "TL-NAN-HIDDEN": (17, 87, "5.594e+10")}


def lf_lines() -> list[str]:
    return TRL_NAN.read_bytes().decode("utf-8").split("\n")


def naive(data: bytes) -> list[tuple[int, str]]:
    """Per LSP line: the ``\\n`` line holding it and the text before it there (the definition, not the scan)."""
    parts = re.split(r"(\r\n|\r|\n)", data.decode("utf-8", "replace"))
    out, lf, head = [], 1, ""
    for k in range(0, len(parts), 2):
        out.append((lf, head))
        brk = parts[k + 1] if k + 1 < len(parts) else None
        if brk == "\r":
            head += parts[k] + "\r"
        elif brk:
            lf, head = lf + 1, ""
    return out


def test_line_map_matches_the_definition_while_the_file_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rng = random.Random(26)
    f = tmp_path / "log"
    for _ in range(400):
        monkeypatch.setattr(linemap, "CHUNK", rng.choice([2, 3, 5, 1 << 20]))  # a \r\n cut between two reads
        data = bytes(rng.choice(b"ab\r\n\xc3") for _ in range(rng.randint(0, 60)))
        cut = rng.randint(0, len(data))
        f.write_bytes(data[:cut])
        m = LineMap(str(f)).update()
        with open(f, "ab") as fh:
            fh.write(data[cut:])
        m.update()
        want = naive(data)
        for lsp_line in range(1, len(want) + 1 - data.endswith(b"\r")):
            assert m.to_lf(lsp_line) == want[lsp_line - 1], (data, cut, lsp_line)
            lf, head = want[lsp_line - 1]
            back, col = m.to_lsp(lf, len(head))
            assert (back, col) == (lsp_line, 0) or col == 0, (data, lsp_line)


def test_a_log_without_lone_carriage_returns_maps_to_itself(tmp_path: Path):
    f = tmp_path / "log"
    f.write_bytes(b"step 1 loss 2\r\nstep 2 loss 1\n")
    m = LineMap(str(f)).update()
    assert m.identity() and m.to_lf(2) == (2, "")


def _findings(args: list[str]) -> dict[str, tuple[int, int]]:
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "json", *args, str(TRL_NAN)],
                       capture_output=True, text=True)
    rep = json.loads(r.stdout)["reports"][0]
    return {f["id"]: (f["location"]["line"], f["location"]["column"]) for f in rep["findings"]
            if f["level"] == "FAIL"}


def test_cli_lines_are_grep_lines():
    got = _findings([])
    lines = lf_lines()
    assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in EXPECTED.items()}
    for rule, (line, col) in got.items():  # the column is on the value, past the redraws before it
        value = EXPECTED[rule][2]
        assert lines[line - 1][col - 1:col - 1 + len(value)] == value, rule
    grep = subprocess.run(["grep", "-n", "'eval_loss': 'nan'", str(TRL_NAN)], capture_output=True, text=True).stdout
    assert grep.splitlines()[0].startswith("33:")
    lsp = _findings(["--line-breaks", "lsp"])
    assert {k: v[0] for k, v in lsp.items()} == {k: v[1] for k, v in EXPECTED.items()}


def test_sarif_and_full_use_the_same_lines():
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "sarif", str(TRL_NAN)],
                       capture_output=True, text=True)
    res = json.loads(r.stdout)["runs"][0]["results"]
    got = {x["ruleId"]: x["locations"][0]["physicalLocation"]["region"]["startLine"] for x in res}
    assert {k: got[k] for k in EXPECTED} == {k: v[0] for k, v in EXPECTED.items()}
    full = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "full", str(TRL_NAN)],
                          capture_output=True, text=True).stdout
    # the redraw that holds the value is shown, with the caret under it
    block = full.split("TP-NAN [FAIL]")[1].splitlines()
    assert block[2].startswith("33 | ") and block[3].index("^") == block[2].index("'nan'") + 1


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(TRL_NAN.parent, ws / "trl")
    old = time.time() - 3 * 86400
    os.utime(ws / "trl" / "train.log", (old, old))
    return ws


CASES = [("Visual Studio Code", "visual-studio-code", None, "lsp"), ("Neovim", "neovim@v0.7.0", None, "lf"),
         ("Visual Studio Code", "visual-studio-code", "lf", "lf"), ("Neovim", "neovim@v0.7.0", "lsp", "lsp")]


@pytest_lsp.fixture(params=CASES, config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path):
    name, profile, setting, want = request.param

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: t.RegistrationParams) -> None:
        return None
    opts = {"debounceMs": 50, **({"lineBreaks": setting} if setting else {})}
    lsp_client.set_configuration({"trainlint": opts})
    lsp_client.want = want  # type: ignore[attr-defined]
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities(profile), client_info=t.ClientInfo(name=name),
        root_uri=workspace.as_uri(), workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options=opts))
    yield
    await lsp_client.shutdown_session()


async def test_server_answers_each_client_in_its_lines(client: LanguageClient, workspace: Path):
    import asyncio

    uri = (workspace / "trl" / "train.log").as_uri()
    deadline = time.monotonic() + 20
    while not client.diagnostics.get(uri) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    got = {str(d.code): d.range.start for d in client.diagnostics.get(uri, [])}
    lf = client.want == "lf"  # type: ignore[attr-defined]
    assert {k: got[k].line + 1 for k in EXPECTED} == {k: v[0 if lf else 1] for k, v in EXPECTED.items()}
    if lf:  # UTF-16 units on the "\n" line: the bar's characters before the value are in the BMP
        text = lf_lines()[32]
        assert text[got["TP-NAN"].character:].startswith("nan")
    pos = got["TP-NAN"]
    hover = await client.text_document_hover_async(t.HoverParams(t.TextDocumentIdentifier(uri),
                                                                 t.Position(pos.line, pos.character + 1)))
    assert hover is not None and hover.contents.value.startswith("**TP-NAN** · FAIL")


def _series_json(*extra: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "series", "--format", "json", *extra, str(TRL_NAN)],
                       capture_output=True, text=True)
    [f] = json.loads(r.stdout)["files"]
    return f


def _grep_n(pattern: str) -> list[int]:
    out = subprocess.run(["grep", "-n", pattern, str(TRL_NAN)], capture_output=True).stdout  # bytes: \r stays
    return [int(x.split(b":", 1)[0]) for x in out.split(b"\n") if x]


def test_series_lines_are_check_lines():
    """``series`` tells the lines ``check`` tells: grep -n's by default (the first eval_loss on line 33, where check
    puts TP-NAN, not the LSP's 156), the LSP's with --line-breaks lsp."""
    f = _series_json()
    s = {x["name"]: x for x in f["series"]}
    evals, losses = _grep_n("'eval_loss'"), _grep_n("'loss'")
    assert (s["eval_loss"]["first"]["line"], s["eval_loss"]["last"]["line"]) == (evals[0], evals[-1]) == (33, 102)
    assert (s["loss"]["first"]["line"], s["loss"]["last"]["line"]) == (losses[0], losses[-1]) == (13, 91)
    check = _findings([])
    lines = lf_lines()
    col = s["eval_loss"]["first"]["column"]
    assert col == check["TP-NAN"][1] and lines[32][col - 1:col + 2] == "nan"
    assert [e["line"] for e in f["events"]] == [_grep_n("train_runtime")[0]]
    lsp = {x["name"]: x for x in _series_json("--line-breaks", "lsp")["series"]}
    assert (lsp["eval_loss"]["first"]["line"], lsp["eval_loss"]["last"]["line"]) == (156, 510)
    text = subprocess.run([sys.executable, "-m", "trainlint.cli", "series", str(TRL_NAN)],
                          capture_output=True, text=True).stdout
    row = [x for x in text.splitlines() if x.strip().startswith("eval_loss ")][0]
    assert row.endswith("lines 33-102, falls")
    assert re.search(r"end-of-run .* line (\d+):", text).group(1) == str(_grep_n("train_runtime")[0])


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="ab\r\n", max_size=40))
def test_split_lines_breaks_where_the_lsp_does(text: str) -> None:
    """split_lines' str.split shortcuts (no \\r; only \\r\\n pairs) give the lines the LSP's rule gives."""
    parts = re.split(r"\r\n|\r|\n", text)
    if parts and parts[-1] == "":
        parts.pop()
    assert split_lines(text) == parts


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="ab\r\n \x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\u2581", max_size=40))
def test_split_lines_keeps_the_breaks_editors_do_not_make(text: str) -> None:
    """A form feed, a vertical tab, \\x1c-\\x1e, NEL and the Unicode line and paragraph separators stay inside
    their line (str.splitlines breaks at each, editors at none), on both of split_lines' ways: str.splitlines where
    the chunk holds none of them, the replaces and str.split where it does; and told the count of the text's breaks
    (the pure feed's), by that count instead of the searches for them (fails when a last character that is one of
    them is taken for a line's end)."""
    parts = re.split(r"\r\n|\r|\n", text)
    if parts and parts[-1] == "":
        parts.pop()
    assert split_lines(text) == parts
    assert split_lines(text, len(re.findall(r"\r\n|\r|\n", text))) == parts
