"""The first scan of every workspace folder, configuration problems as diagnostics, and judging everything again
(a mixin of ``TrainlintServer``)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from lsprotocol import types as t
from pygls.uris import to_fs_path

from .. import diagnostics as dg

if TYPE_CHECKING:
    from ..server import TrainlintServer

log = logging.getLogger("trainlint.lsp")


class Scanning:
    def roots(self: TrainlintServer) -> list[str]:
        folders = [to_fs_path(f.uri) for f in (self.workspace.folders or {}).values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return [f for f in folders if f and os.path.isdir(f)]

    async def scan(self: TrainlintServer) -> None:
        """Discover every log of every folder and judge it, with cancellable progress."""
        if self.settings.scope != "workspace":
            return
        token = await self.progress_begin("trainlint: judging training logs", cancellable=True)
        paths: list[str] = []
        for root in self.ws.roots:
            paths.extend(await self.in_worker(self.ws.discover, root))
        paths = await self.in_worker(self.scan_order, paths)
        total = max(1, len(paths))
        for i, p in enumerate(paths):
            if token is not None and self._cancelled(token):
                log.warning("scan cancelled by the client after %d of %d logs", i, len(paths))
                break
            await self.judge(p)
            self.progress_report(token, (i + 1) / total, f"{i + 1}/{len(paths)} {os.path.basename(p)}")
        self.progress_end(token, f"{len(paths)} logs judged")
        self.report_config()

    def scan_order(self: TrainlintServer, paths: list[str]) -> list[str]:
        """Opened logs first, then the smallest: a 1 GB log is judged after the runs that take a moment."""
        def size(p: str) -> int:
            try:
                if os.path.isdir(p):
                    return sum(e.stat().st_size for e in os.scandir(p) if e.is_file(follow_symlinks=False))
                return os.stat(p).st_size
            except OSError:
                return 0
        return sorted(paths, key=lambda p: (p not in self.open_paths, size(p)))

    def report_config(self: TrainlintServer) -> None:
        """Configuration problems: a message each, and a diagnostic on its line of the YAML file when it has one."""
        for err in self.ws.config_errors():
            self.message(f"trainlint: {err}")
        now: dict[str, list[t.Diagnostic]] = {}
        for cfg in self.ws.configs():
            if cfg.source and not cfg.source.endswith(".toml"):
                now[dg.file_uri(cfg.source)] = [t.Diagnostic(
                    range=t.Range(t.Position(line - 1, 0), t.Position(line, 0)), message=msg,
                    severity=t.DiagnosticSeverity.Error, code="config", source=dg.SOURCE) for line, msg in cfg.placed]
        if not self.pull:
            for uri in self.config_uris - set(now):
                self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, []))
            for uri, diags in now.items():
                if diags or uri in self.config_uris:
                    self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, diags))
        self.config_uris = {u for u, d in now.items() if d}

    async def rejudge_all(self: TrainlintServer, reopen: bool = False) -> None:
        for tr in list(self.ws.tracked.values()):
            if reopen:
                tr.source, tr.report = None, None
            await self.judge(tr.path)
