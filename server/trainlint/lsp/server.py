"""``trainlint serve``: the language server (pygls 2, stdio).

It finds the logs of every workspace folder, judges them with the same code as ``trainlint check``, and keeps
them judged while runs write: the server watches the folders itself (Neovim has no dynamic file watching) and
also takes ``workspace/didChangeWatchedFiles`` from clients that send it. Reading and judging run on one worker
thread, so the event loop stays free for hover and the other requests; a log that grows is read from where it
was left.

The server is made by ``create_server()``: its state lives on the instance, its behaviour in mixins
(``features/publishing.py``, ``progress.py``, ``scanning.py``, ``watching.py``) and its LSP handlers in one
module per feature (``features/``), each registering itself, so a test can make as many servers as it likes in
one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

from .. import __version__
from . import diagnostics as dg
from .features import register_all
from .features.progress import Progress
from .features.publishing import Publishing, ignored
from .features.scanning import Scanning
from .features.watching import Watching
from .linebreaks import LineBreaks
from .settings import Settings
from .stdio import serve
from .workspace import Workspace

__all__ = ["TrainlintServer", "create_server", "ignored", "main"]

log = logging.getLogger("trainlint.lsp")


class TrainlintServer(Publishing, Progress, Scanning, Watching, LanguageServer):
    def __init__(self) -> None:
        super().__init__("trainlint", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Full)
        self.ws = Workspace()
        self.settings = Settings()
        self.views = dg.Views()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trainlint-judge")
        self.tasks: set[asyncio.Task[Any]] = set()
        self.open_paths: set[str] = set()
        self.pending: dict[str, str] = {}       # path -> "changed" | "deleted"
        self.flush_task: asyncio.Task[Any] | None = None
        self.stop_watch: asyncio.Event | None = None
        self.settings_errors: list[str] = []
        self.config_uris: set[str] = set()  # configuration files that have diagnostics
        self.pull = False
        self.lines = LineBreaks()  # positions in the client's lines (Neovim: "\n" only)
        self.live_kept: dict[str, None] = {}  # unopened logs still being written whose points are kept, oldest first

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        """A background task that is kept referenced and whose failure is logged, not lost."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)

        def done(tk: asyncio.Task[Any]) -> None:
            self.tasks.discard(tk)
            if not tk.cancelled() and tk.exception() is not None:
                exc = tk.exception()
                log.error("%s failed: %s", name, "".join(traceback.format_exception(exc)))

        task.add_done_callback(done)
        return task

    async def in_worker(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding if self.protocol._workspace is not None else None
        return str(enc or t.PositionEncodingKind.Utf16)

    def message(self, text: str, kind: t.MessageType = t.MessageType.Warning) -> None:
        self.window_show_message(t.ShowMessageParams(kind, text))
        log.warning("%s", text)


def create_server() -> TrainlintServer:
    """A server with every feature registered (``features.FEATURES``)."""
    server = TrainlintServer()
    register_all(server)
    return server


class _ClientLog(logging.Handler):
    """Mirror trainlint's own log records to window/logMessage (never pygls' own: they recurse)."""

    def __init__(self, ls: TrainlintServer) -> None:
        super().__init__(logging.INFO)
        self.ls = ls

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("pygls") or not record.name.startswith("trainlint"):
            return
        kind = {logging.ERROR: t.MessageType.Error, logging.WARNING: t.MessageType.Warning}.get(
            record.levelno, t.MessageType.Info)
        with contextlib.suppress(Exception):  # logging must never take the server down
            self.ls.window_log_message(t.LogMessageParams(kind, self.format(record)))


def main(level: str = "WARNING") -> int:
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level.upper(), logging.WARNING),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    server = create_server()
    logging.getLogger("trainlint").addHandler(_ClientLog(server))
    code = serve(server)
    server.worker.shutdown(wait=False, cancel_futures=True)
    if any(th.name.startswith("trainlint-judge") and th.is_alive() for th in threading.enumerate()):
        # A judge still reading a large log would hold the interpreter's exit until it ends (28 s measured):
        # nothing it does needs finishing (it never writes), so leave now.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(code)
    return code
