"""`.trainlint.yaml` `formats:`: an in-house print read by the user's own line patterns, and a bad pattern
reported on its line of the YAML file (in the CLI and as a diagnostic in the editor)."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from trainlint.config import load
from trainlint.core.model import Role
from trainlint.readers import open_source

CONFIG = r"""formats:
  - files: "logs/*.out"
    lines:
      - 'ep=\d+ it=(?P<step>\d+) loss=(?P<loss>\S+) val=(?P<val_loss>\S+)'
      - 'it=(?P<step>\d+) loss=(?P<loss>[0-9.]+'
"""


def project(root: Path) -> Path:
    (root / "logs").mkdir(parents=True)
    (root / ".trainlint.yaml").write_text(CONFIG.replace("\\\\\\\\", "\\\\"))
    rows = [f"[host] ep=1 it={i * 10} loss={3 * math.exp(-i / 20) + 0.1:.4f} val={3 * math.exp(-i / 25) + 0.15:.4f}"
            for i in range(1, 81)] + [f"[host] ep=1 it={i * 10} loss=nan val=nan" for i in range(81, 101)]
    (root / "logs" / "job.out").write_text("\n".join(rows) + "\n")
    return root


def test_a_declared_format_is_read_and_a_bad_pattern_is_reported_on_its_line(tmp_path: Path):
    root = project(tmp_path / "p")
    cfg = load(str(root / ".trainlint.yaml"))
    assert cfg.placed == [(5, "formats[0].lines[1]: not a regular expression (missing ), unterminated subpattern "
                              "at position 22)")]
    src = open_source(str(root / "logs" / "job.out"), None, cfg.roles, cfg.format_for(str(root / "logs" / "job.out")))
    src.update()
    loss = next(s for s in src.log.series.values() if s.name == "loss")
    val = next(s for s in src.log.series.values() if s.name == "val_loss")
    assert (src.log.format, len(loss), loss.steps[0], loss.steps[-1], val.role) == ("custom", 100, 10, 1000,
                                                                                       Role.EVAL_LOSS)
    loc = src.log.locate(loss, 0)
    assert (loc.line, loc.column, loc.end_column) == (1, 24, 30)  # "2.9535" after "loss="
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "-q", "."], cwd=root, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "logs/job.out:81:25: TP-NAN [FAIL]" in r.stdout, r.stdout + r.stderr
    assert "config: line 5: formats[0].lines[1]: not a regular expression" in r.stderr


def test_a_declared_format_s_printed_precision_is_read_through_its_re2_locator(tmp_path: Path):
    """The zero-loss rules read how a zero is printed through the series' locator; a declared format's locator is
    RE2's (`LinearLocator`), matched by group index. A loss printed with 2 decimals ending in `0.00` is a value
    below 0.005 (NOT-CHECKED with that reason); the same loss printed in full ending in 0.0 is an exact zero."""
    import json

    def findings(name: str, fmt: str, tail: str) -> list[dict]:
        root = tmp_path / name
        (root / "logs").mkdir(parents=True)
        (root / ".trainlint.yaml").write_text(CONFIG.replace("\\\\", "\\"))
        rows = [f"[host] ep=1 it={i * 10} loss={format(2.0 / i, fmt)} val=1.0" for i in range(1, 21)]
        rows += [f"[host] ep=1 it={i * 10} loss={tail} val=1.0" for i in range(21, 31)]
        (root / "logs" / "job.out").write_text("\n".join(rows) + "\n")
        out = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "json", "."], cwd=root,
                             capture_output=True, text=True, timeout=60).stdout
        return json.loads(out)["reports"][0]["findings"]

    fixed = findings("fixed", ".2f", "0.00")
    assert not [f for f in fixed if f["id"] == "TP-ZERO-LOSS-ONSET"], fixed
    assert "zeros at the printed precision (2 decimals)" in json.dumps(fixed)
    assert [f["level"] for f in findings("full", "", "0.0") if f["id"] == "TP-ZERO-LOSS-ONSET"] == ["FAIL"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "trainlint.lsp"]))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    root = project(tmp_path / "ws")

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: t.RegistrationParams) -> None:
        """Accepted, as VS Code does."""

    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name="ws")]))
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_the_editor_shows_the_bad_pattern_on_its_yaml_line(client: LanguageClient):
    root: Path = client.root  # type: ignore[attr-defined]
    cfg_uri, log_uri = (root / ".trainlint.yaml").as_uri(), (root / "logs" / "job.out").as_uri()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (client.diagnostics.get(cfg_uri) and client.diagnostics.get(log_uri)):
        await __import__("asyncio").sleep(0.05)
    [d] = client.diagnostics[cfg_uri]
    assert (d.range.start.line, d.severity, d.code) == (4, t.DiagnosticSeverity.Error, "config")
    assert "formats[0].lines[1]: not a regular expression" in d.message
    assert any(x.code == "TP-NAN" and x.range.start.line == 80 for x in client.diagnostics[log_uri])
