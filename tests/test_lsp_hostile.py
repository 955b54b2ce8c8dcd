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
