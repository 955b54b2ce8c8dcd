"""The curves view's data (``trainlint/curves``: the charts of a log's series and its findings, in the client's
lines), for VS Code's webview and custom editor; the request itself is in ``lsp/curves.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..curves import CURVES, on_curves

if TYPE_CHECKING:
    from ..server import TrainlintServer


def register(server: TrainlintServer) -> None:
    server.feature(CURVES)(on_curves)
