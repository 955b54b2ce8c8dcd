"""A real editor: headless Neovim starts `trainlint serve`, opens real logs, reads back
``vim.diagnostic.get()`` and a hover."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, RUNS

NVIM = shutil.which("nvim")
LIVE = FIXTURES / "live"
PROBE = Path(__file__).parent / "nvim" / "probe.lua"
pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (apt-get install neovim; .ci/run does)")


def probe(root: Path, file: Path, hover_line: int, buffers: int = 1, hover_char: int = 16) -> dict:
    out = root.parent / "probe.json"
    env = {**os.environ, "PROBE_OUT": str(out), "ROOT_DIR": str(root), "HOVER_LINE": str(hover_line),
           "HOVER_CHAR": str(hover_char),
           "WAIT_BUFFERS": str(buffers),
           "TRAINLINT_CMD": "\t".join([sys.executable, "-m", "trainlint.lsp"]),
           "XDG_CACHE_HOME": tempfile.mkdtemp(), "XDG_STATE_HOME": tempfile.mkdtemp()}
    r = subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {PROBE}", str(file)],
                       env=env, capture_output=True, text=True, timeout=60, cwd=root)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def test_neovim_reads_back_diagnostics_and_hover(tmp_path: Path):
    root = tmp_path / "ws"
    shutil.copytree(RUNS / "gallery-lr_hot", root / "lr_hot")
    shutil.copytree(RUNS / "gallery-lr_zero", root / "lr_zero")
    log = root / "lr_hot" / "trainer_state.json"
    res = probe(root, log, hover_line=428, buffers=2)
    assert res["got"] is True
    mine = sorted((d["code"], d["lnum"]) for d in res["buffer"])
    assert mine == [("TP-DIVERGE", 428), ("TP-GRAD-SPIKE", 146)]
    div = [d for d in res["buffer"] if d["code"] == "TP-DIVERGE"][0]
    assert div["col"] == 14 and div["source"] == "trainlint" and div["severity"] == 1
    # the workspace scan also published the log that was never opened
    other = {(d["code"], d["lnum"]) for d in res["all"] if d["bufname"].endswith("lr_zero/trainer_state.json")}
    assert ("TP-ZERO-LR", 14) in other
    assert res["hover"].startswith("**TP-DIVERGE** · FAIL") and "**Measured**" in res["hover"]


def test_neovim_on_the_real_coqui_log(tmp_path: Path):
    root = tmp_path / "ws"
    shutil.copytree(RUNS / "xtts-prefix", root / "xtts")
    old = time.time() - 3 * 86400  # a run that stopped long ago (a fresh checkout has new mtimes)
    os.utime(root / "xtts" / "trainer_0_log.txt", (old, old))
    res = probe(root, root / "xtts" / "trainer_0_log.txt", hover_line=13206)
    # a copy keeps the log's old mtime, so the run reads as stopped in epoch 3 of 1000
    assert sorted((d["code"], d["lnum"]) for d in res["buffer"]) == [("TL-RUN-INCOMPLETE", 13206),
                                                                     ("TP-THROUGHPUT", 13206)]
    assert {d["severity"] for d in res["buffer"]} == {3}  # INFO -> Information
    # one finding at a time, evidence first; the other one on the line is named
    assert res["hover"].startswith("**TL-RUN-INCOMPLETE** · INFO") and "epoch 3 of 1000" in res["hover"]
    assert "Also on this line: TP-THROUGHPUT (INFO)" in res["hover"]


def test_neovim_on_a_tqdm_log_counts_lines_as_the_buffer_does(tmp_path: Path):
    """A real TRL (HF Trainer) stdout log whose tqdm bar redraws with a lone `\\r`: 106 lines in the buffer, 525
    as the LSP counts them. Neovim (clientInfo "Neovim") gets every diagnostic on the buffer line that holds its
    value, with the column on that value past the redraws before it (and the multi-byte bar characters); the
    hover at that place finds the finding. The CLI prints the same lines (as grep -n counts them)."""
    root = tmp_path / "ws"
    shutil.copytree(LIVE / "trl-nan", root / "trl")
    log = root / "trl" / "train.log"
    old = time.time() - 3 * 86400
    os.utime(log, (old, old))
    res = probe(root, log, hover_line=32, hover_char=70)
    assert res["got"] is True
    assert res["line_count"] == 106
    marked = sorted((m["code"], m["lnum"], m["text"]) for m in res["marked"])
    assert marked == [("TL-NAN-HIDDEN", 16, "5.594e+10"), ("TP-NAN", 32, "nan")]  # one problem, one finding (issue 30)
    assert res["hover"].startswith("**TP-NAN** · FAIL")
    cli = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", str(log)], capture_output=True,
                         text=True, cwd=root).stdout
    assert {(ln.split(":")[1], ln.split(": ")[1].split()[0]) for ln in cli.splitlines()
            if ": TP-" in ln or ": TL-" in ln} == {("33", "TP-NAN"), ("17", "TL-NAN-HIDDEN")}


def test_shipped_config_follows_a_growing_log(tmp_path: Path):
    """The config a user sources in one line (`trainlint editor-config nvim`) on a log that grows while open:
    the buffer reloads, and the new finding sits on the new line."""
    config = subprocess.run([sys.executable, "-m", "trainlint.cli", "editor-config", "nvim"], capture_output=True,
                            text=True, check=True).stdout.strip()
    root = tmp_path / "ws"
    (root / "run").mkdir(parents=True)
    log = root / "run" / "train.log"
    log.write_text("".join(f"step {i}, loss: {3.0 - 0.02 * i:.4f}\n" for i in range(1, 61)))
    out, ready = tmp_path / "probe.json", tmp_path / "ready"
    env = {**os.environ, "PROBE_OUT": str(out), "READY_FILE": str(ready), "WANT_LINE": "62",
           "XDG_CACHE_HOME": tempfile.mkdtemp(), "XDG_STATE_HOME": tempfile.mkdtemp()}
    cmd = "{" + ", ".join(f'"{a}"' for a in [sys.executable, "-m", "trainlint.lsp"]) + "}"
    nvim = subprocess.Popen(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"lua vim.g.trainlint_cmd = {cmd}",
         "-c", "lua vim.g.trainlint_reload_ms = 200", "-c", f"luafile {config}",
         "-c", f"luafile {Path(__file__).parent / 'nvim' / 'live_probe.lua'}", str(log)],
        env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not ready.exists() and time.time() < deadline and nvim.poll() is None:
        time.sleep(0.05)
    assert ready.exists(), nvim.communicate(timeout=5)
    with open(log, "a") as f:  # the run goes on while the log is open
        f.write("step 61, loss: 1.7800\nstep 62, loss: nan\n")
    _, err = nvim.communicate(timeout=60)
    assert nvim.returncode == 0, err
    res = json.loads(out.read_text())
    assert res["attached"] and res["severity_sort"] and res["hover_mapped"]
    assert (res["lines_before"], res["lines_after"]) == (60, 62) and res["grown"], res
    assert res["last_line"] == "step 62, loss: nan"
    assert "TP-NAN" in res["codes_at_want"], res["diagnostics"]
    # the virtual text on that line names the rule
    assert any(v["lnum"] == 61 and "TP-NAN: `loss`" in v["text"] for v in res["virtual_text"]), res["virtual_text"]


def test_neovim_shows_a_speech_manifests_findings_on_its_lines(tmp_path: Path):
    from speechkit import write_wav

    root = tmp_path / "ws"
    rows = []
    for i in range(3):
        write_wav(root / "tts" / "wavs" / f"a{i}.wav", seconds=2.0, freq=200 + 20 * i)
        rows.append({"audio_filepath": f"wavs/a{i}.wav", "text": f"Clip number {['one', 'two', 'three'][i]} is fine."})
    write_wav(root / "tts" / "wavs" / "b.wav", seconds=2.0, rate=22050)
    rows.append({"audio_filepath": "wavs/b.wav", "text": "Recorded on 3/4/2021 at another rate."})
    m = root / "tts" / "train_manifest.jsonl"
    m.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = probe(root, m, hover_line=3)
    assert res["got"] is True
    assert sorted((d["code"], d["lnum"], d["col"]) for d in res["buffer"]) == [
        ("TP-DATA-INCONSISTENT-SR", 3, 0), ("TP-DATA-UNNORMALIZED", 3, 54)]
    assert "TP-DATA" in (res["hover"] or "")
