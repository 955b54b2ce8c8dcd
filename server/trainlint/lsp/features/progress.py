"""Work-done progress in the client (a mixin of ``TrainlintServer``): a large log's reading and the first scan
show a percentage, and a client that cannot show one is not asked."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types as t

if TYPE_CHECKING:
    from ..server import TrainlintServer

log = logging.getLogger("trainlint.lsp")


class Progress:
    async def progress_begin(self: TrainlintServer, title: str, cancellable: bool = False) -> str | None:
        """A work-done progress bar in the client (None when it cannot show one)."""
        caps = self.client_capabilities.window
        if caps is None or not caps.work_done_progress:
            return None
        token = str(uuid.uuid4())
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 10)
            self.work_done_progress.begin(token, t.WorkDoneProgressBegin(title=title, cancellable=cancellable,
                                                                         percentage=0))
        except Exception as e:
            log.info("no progress reporting: %s", e)
            return None
        return token

    def progress_report(self: TrainlintServer, token: str | None, share: float | None,
                        message: str | None = None) -> None:
        if token is not None:
            pct = int(100 * share) if share is not None else None
            self.work_done_progress.report(token, t.WorkDoneProgressReport(
                message=message or (f"{pct}%" if pct is not None else None), percentage=pct))

    def progress_end(self: TrainlintServer, token: str | None, message: str) -> None:
        if token is not None:
            self.work_done_progress.end(token, t.WorkDoneProgressEnd(message=message))

    def _cancelled(self: TrainlintServer, token: str) -> bool:
        fut = self.work_done_progress.tokens.get(token)
        return bool(fut is not None and fut.cancelled())
