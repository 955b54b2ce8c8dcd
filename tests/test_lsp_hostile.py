"""Issue 25 in the server: a repository cannot freeze it or run its own code in it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_hostile_round3 import catastrophic_project
from test_lsp import until
from test_lsp_robust import hover, start


async def test_item1_a_catastrophic_user_pattern_cannot_freeze_the_server(tmp_path: Path) -> None:
    ws = catastrophic_project(tmp_path / "ws", xs=40)
    client = await start(ws)
    try:
        lr_hot = (ws / "lr_hot" / "trainer_state.json").as_uri()
        job = (ws / "logs" / "job.out").as_uri()
        await until(lambda: client.diagnostics.get(lr_hot), timeout=30, what="the other run judged")
        await until(lambda: job in client.diagnostics, timeout=30, what="the hostile log judged")
        h = await hover(client, lr_hot, 428)
        assert h is not None and "TP-DIVERGE" in h.contents.value
        await asyncio.wait_for(client.shutdown_session(), 15)
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        await client.stop()


HOSTILE_PACKAGE = "import pathlib\npathlib.Path({marker!r}).write_text('the workspace ran its own trainlint')\n"


def hostile_workspace(root: Path, marker: Path) -> Path:
    """A workspace whose own ``trainlint/`` package (and ``trainlint.py``) writes ``marker`` when imported."""
    import shutil

    from conftest import RUNS

    shutil.copytree(RUNS / "gallery-lr_hot", root / "lr_hot")
    (root / "trainlint").mkdir()
    (root / "trainlint" / "__init__.py").write_text(HOSTILE_PACKAGE.format(marker=str(marker)))
    (root / "trainlint" / "cli.py").write_text(HOSTILE_PACKAGE.format(marker=str(marker)))
    return root


def test_item2_the_shipped_neovim_config_never_imports_the_workspaces_trainlint(tmp_path: Path) -> None:
    """The fallback command (no `trainlint` executable on PATH: `python3 -m trainlint.cli serve`), started by
    the shipped config from inside the workspace, runs the installed trainlint, not the workspace's."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    import pytest

    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (apt-get install neovim)")
    marker = tmp_path / "marker"
    ws = hostile_workspace(tmp_path / "ws", marker)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python3").chmod(0o755)
    config = subprocess.run([sys.executable, "-m", "trainlint.cli", "editor-config", "nvim"], capture_output=True,
                            text=True, check=True, cwd=tmp_path).stdout.strip()
    out = tmp_path / "probe.json"
    probe = ("lua vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 100); "
             "local exe = vim.fn.executable('trainlint'); "
             f"vim.fn.writefile({{vim.json.encode({{n = #vim.diagnostic.get(0), exe = exe}})}}, "
             f"'{out}'); vim.cmd('qa!')")
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "XDG_CACHE_HOME": tempfile.mkdtemp(),
           "XDG_STATE_HOME": tempfile.mkdtemp()}
    r = subprocess.run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {config}",
                        "-c", probe, str(ws / "lr_hot" / "trainer_state.json")],
                       env=env, cwd=ws, capture_output=True, text=True, timeout=60)
    res = json.loads(out.read_text())
    assert res["exe"] == 0, res  # the config's fallback runs, not a `trainlint` executable
    assert not marker.exists(), "the workspace's trainlint/ was imported"
    assert res["n"] > 0, (res, r.stderr)
