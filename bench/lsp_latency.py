"""Server benchmarks (not tests): append→diagnostics latency, start→first diagnostics, memory.

    .venv/bin/python bench/lsp_latency.py [--appends 20] [--runs 200] [--corpus ../shared/corpus]

Measures, against the real server over stdio (pytest-lsp's client):
1. the time from appending one record to a watched log to the client receiving its new
   diagnostics (debounce included), median and p90 over N appends;
2. resident memory of the server process with a workspace of R run directories;
3. time from starting the server to the first diagnostics of the corpus workspace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, client_capabilities

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "trainlint.lsp"]


async def start(ws: Path, options: dict | None = None):  # type: ignore[no-untyped-def]
    client = await ClientServerConfig(server_command=SERVER).start(None)  # type: ignore[arg-type]
    await client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("neovim@v0.7.0"), root_uri=ws.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="ws")], initialization_options=options or {}))
    return client


async def stop(client) -> None:  # type: ignore[no-untyped-def]
    await client.shutdown_session()
    await client.stop()


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def server_pid(client) -> int:  # type: ignore[no-untyped-def]
    return client._server.pid  # pytest-lsp keeps the subprocess here


async def latency(appends: int, debounce_ms: int) -> list[float]:
    tmp = Path(tempfile.mkdtemp())
    log = tmp / "run" / "metrics.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps({"step": i, "loss": 2.0 - 0.001 * i}) + "\n" for i in range(2000)))
    client = await start(tmp, {"debounceMs": debounce_ms})
    uri = log.as_uri()
    deadline = time.monotonic() + 30
    while uri not in client.diagnostics and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    out = []
    step = 2000
    for k in range(appends):
        value = 9.0 if k % 2 == 0 else 0.5  # alternate so every append changes the findings
        before = len(client.diagnostics.get(uri, []))
        marker = object()
        client.diagnostics[uri] = marker  # type: ignore[assignment]
        t0 = time.perf_counter()
        with open(log, "a") as f:
            for _ in range(30):
                f.write(json.dumps({"step": step, "loss": value}) + "\n")
                step += 1
        while client.diagnostics.get(uri) is marker:
            await asyncio.sleep(0.002)
        out.append((time.perf_counter() - t0) * 1000)
        del before
    await stop(client)
    shutil.rmtree(tmp)
    return out


def corpus_runs(corpus: Path) -> list[Path]:
    """Every log of the corpus that trainlint judges, each to become a run folder of its own."""
    skip = {"MANIFEST.md", "README.md"}
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.name not in skip and "trainproof" not in p.parts
                  and p.stat().st_size < 64 << 20)


async def memory(runs: int, corpus: Path) -> tuple[float, float, int]:
    """Server RSS once a workspace of ``runs`` run folders is judged: each a real corpus log (cycled), else
    the fixtures' runs. Returns (MB, seconds to judge them all, logs with diagnostics)."""
    tmp = Path(tempfile.mkdtemp())
    src = corpus_runs(corpus) if corpus.exists() else []
    fixtures = [ROOT / "fixtures" / "runs" / n for n in ("gallery-healthy", "gallery-lr_hot", "keras-brats",
                                                         "detectron2-maskrcnn", "llamafactory-nsllm")]
    for i in range(runs):
        d = tmp / f"run{i:04d}"
        if src:
            d.mkdir()
            shutil.copy2(src[i % len(src)], d / src[i % len(src)].name)  # its mtime: a run that stopped
        else:
            shutil.copytree(fixtures[i % len(fixtures)], d)
    t0 = time.perf_counter()
    client = await start(tmp)
    deadline = time.monotonic() + 600
    last, quiet_since = -1, time.monotonic()
    while time.monotonic() < deadline:  # judged when no new file gets diagnostics for 3 s, once some have
        n = len(client.diagnostics)
        if n != last:
            last, quiet_since = n, time.monotonic()
        elif n and time.monotonic() - quiet_since > 3:
            # Not before the first: a workspace of 2,000 runs publishes its first diagnostics after about 9 s,
            # and "quiet for 3 s" from the start measured an idle server that had judged nothing (52 MB, 0 files).
            break
        await asyncio.sleep(0.05)
    took = quiet_since - t0
    mb = rss_mb(server_pid(client))
    await stop(client)
    shutil.rmtree(tmp)
    return mb, took, last


async def first_diagnostics(corpus: Path) -> float | None:
    if not corpus.exists():
        return None
    t0 = time.perf_counter()
    client = await start(corpus)
    while not any(client.diagnostics.values()):
        await asyncio.sleep(0.005)
    took = time.perf_counter() - t0
    await stop(client)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--appends", type=int, default=20)
    ap.add_argument("--only-memory", action="store_true")
    ap.add_argument("--runs", type=int, nargs="+", default=[200, 2000])
    ap.add_argument("--debounce-ms", type=int, default=150)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    a = ap.parse_args()
    if a.only_memory:
        for runs in a.runs:
            mb, took, n = asyncio.run(memory(runs, Path(a.corpus)))
            print(f"workspace of {runs} runs: server RSS {mb:.0f} MB ({took:.1f} s, {n} files with diagnostics)")
        return
    lat = asyncio.run(latency(a.appends, a.debounce_ms))
    print(f"append -> diagnostics (debounce {a.debounce_ms} ms, {len(lat)} appends): median "
          f"{statistics.median(lat):.0f} ms, p90 {sorted(lat)[int(0.9 * len(lat)) - 1]:.0f} ms, max {max(lat):.0f} ms")
    for runs in a.runs:
        mb, took, n = asyncio.run(memory(runs, Path(a.corpus)))
        print(f"workspace of {runs} runs: server RSS {mb:.0f} MB after judging them all ({took:.1f} s, "
              f"{n} files with diagnostics)")
    fd = asyncio.run(first_diagnostics(Path(a.corpus)))
    print("server start -> first diagnostics on the corpus: "
          + (f"{fd:.2f} s" if fd is not None else "corpus not found"))
    os.sys.stdout.flush()


if __name__ == "__main__":
    main()
