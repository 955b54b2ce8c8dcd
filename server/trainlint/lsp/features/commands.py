"""Workspace commands: ``trainlint.rescan``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..server import TrainlintServer

RESCAN = "trainlint.rescan"


def register(server: TrainlintServer) -> None:
    server.command(RESCAN)(on_rescan)


async def on_rescan(ls: TrainlintServer, *args: Any) -> dict[str, int]:
    ls.ws.roots = ls.roots()
    ls.ws.forget_configs()
    await ls.scan()
    await ls.rejudge_all()
    return {"logs": len(ls.ws.tracked)}
