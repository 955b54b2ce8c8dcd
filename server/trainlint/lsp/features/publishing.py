"""Publishing diagnostics, and judging a tracked log before it: what every feature relies on.

A mixin of ``TrainlintServer``: the server keeps the state (workspace, settings, views, the set of open files),
this module the way a log goes from bytes on disk to diagnostics in the client, and back to only its report when
nobody looks at it (a stopped log nobody has open keeps its findings, not its points).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from lsprotocol import types as t
from pygls.uris import to_fs_path

from .. import diagnostics as dg
from ..workspace import Tracked

if TYPE_CHECKING:
    from ..server import TrainlintServer

MAX_LIVE_KEPT = 16  # unopened logs still being written that keep their points (the others are read again)
READ_BUDGET = 16 << 20  # bytes of a log read at a time before queued work gets its turn


class Publishing:
    def visible(self: TrainlintServer, uri: str) -> bool:
        path = dg.member_of(uri) or to_fs_path(uri)
        if path is not None and self.settings.ignore_patterns and ignored(path, self.settings.ignore_patterns):
            return False
        if self.settings.scope == "workspace":
            return True
        return path in self.open_paths or (path is not None and os.path.dirname(path) in self.open_paths)

    def build(self: TrainlintServer, tr: Tracked) -> dict[str, list[t.Diagnostic]]:
        """The diagnostics of ``tr`` per URI, in the client's lines (lsp/linebreaks.py)."""
        return self.lines.to_client(dg.build(tr, self.settings, self.views, self.encoding), self.encoding)

    def publish(self: TrainlintServer, tr: Tracked, by_uri: dict[str, list[t.Diagnostic]] | None = None) -> None:
        if by_uri is None:
            by_uri = self.build(tr)
        if not os.path.isdir(tr.path):  # a clean file is published empty: the editor knows it was judged
            by_uri.setdefault(dg.file_uri(tr.path), [])
        by_uri = {u: d for u, d in by_uri.items() if self.visible(u)}
        if self.pull:
            tr.published = set(by_uri)
            return
        for uri in tr.published - set(by_uri):
            self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, []))
        for uri, diags in by_uri.items():
            self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, diags))
        tr.published = set(by_uri)

    def clear(self: TrainlintServer, tr: Tracked) -> None:
        if not self.pull:
            for uri in tr.published:
                self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, []))
        tr.published = set()

    async def judge(self: TrainlintServer, path: str, keep: bool = False) -> None:
        """Re-read (from where it was left) and re-judge one tracked log, then publish; then release its points
        if nobody is watching it (unless ``keep``: a request is about to show them)."""
        tr = self.ws.tracked.get(path)
        if tr is None:
            return
        t0 = time.monotonic()
        try:
            changed = await self.in_worker(self.ws.refresh, path, READ_BUDGET)
            progress, asked = None, False
            while tr.source is not None and tr.source.behind:  # a large log, read a budget at a time
                if not asked:  # once: a client that does not answer is not asked again at every budget
                    asked, progress = True, await self.progress_begin(f"trainlint: reading {os.path.basename(path)}")
                self.progress_report(progress, tr.source.progress())
                await asyncio.sleep(0)  # what was queued meanwhile (other logs, requests) runs between budgets
                changed = await self.in_worker(self.ws.refresh, path, READ_BUDGET) or changed
            if progress is not None:
                self.progress_end(progress, "read")
        except FileNotFoundError:
            for gone in self.ws.forget(path):
                self.clear(gone)
            return
        if changed or not tr.published:
            # Built in the worker: an event file's view grows there, never on the event loop.
            self.publish(tr, await self.in_worker(self.build, tr))
            if changed and tr.report is not None:  # the client's log (VS Code's output channel) says what ran
                self.window_log_message(t.LogMessageParams(t.MessageType.Log, f"trainlint: judged {path}: "
                                        f"{tr.report.verdict.value} in {1000 * (time.monotonic() - t0):.0f} ms"))
        self._recheck_when_quiet(tr)
        if not keep:
            self._release_if_idle(tr)

    def is_open(self: TrainlintServer, tr: Tracked) -> bool:
        """A file of this log is open in the editor (the log itself, a member, or its text view)."""
        prefix = tr.path.rstrip(os.sep) + os.sep
        return any(p == tr.path or p.startswith(prefix) for p in self.open_paths)

    def _release_if_idle(self: TrainlintServer, tr: Tracked) -> None:
        """A stopped log nobody has open keeps only its report (rebuilt on demand): 2,000 closed runs must not
        hold every point they ever logged."""
        lg = tr.log
        if lg is None or tr.report is None or self.is_open(tr):
            return
        window = self.ws.config_for(tr.path).thresholds.running_if_written_within_s
        try:
            written = max(os.stat(p).st_mtime for p in (lg.members or [tr.path]))
        except (OSError, ValueError):
            return
        if time.time() - written < window:
            # Still being written: kept, to be read from where it was left. But only the most recently judged
            # few: a fresh clone of a repository full of logs makes every one of them "written a moment ago".
            self.live_kept.pop(tr.path, None)
            self.live_kept[tr.path] = None
            while len(self.live_kept) > MAX_LIVE_KEPT:
                oldest = next(iter(self.live_kept))
                del self.live_kept[oldest]
                other = self.ws.tracked.get(oldest)
                if other is not None and other.source is not None and not self.is_open(other):
                    self.views.forget(other)
                    self.ws.release(oldest)
            return
        self.live_kept.pop(tr.path, None)
        self.views.forget(tr)
        self.ws.release(tr.path)

    async def points_of(self: TrainlintServer, tr: Tracked) -> None:
        """A released log's points, read again (and its diagnostics published, should the bytes have changed)
        before a request that shows them."""
        if tr.source is None and tr.report is not None and tr.format != "dataset":
            await self.judge(tr.path, keep=True)

    def _recheck_when_quiet(self: TrainlintServer, tr: Tracked) -> None:
        """A log reported as running becomes 'stopped' when it stays quiet: look again then."""
        rep = tr.report
        if rep is None or not any(m.check == "run-end" and m.values.get("running") for m in rep.measurements):
            return
        window = self.ws.config_for(tr.path).thresholds.running_if_written_within_s
        age = next(m.values["age_s"] for m in rep.measurements if m.check == "run-end")
        if age is None:  # declared live, not measured: no clock to wait for
            return
        delay = max(1.0, window - age + 1.0)
        asyncio.get_running_loop().call_later(delay, self._rejudge_quiet, tr.path)

    def _rejudge_quiet(self: TrainlintServer, path: str) -> None:
        tr = self.ws.tracked.get(path)
        if tr is not None:
            tr.report = None  # judge again although no byte changed: time did
            self.spawn(self.judge(path), "re-judging a quiet log")


def ignored(path: str, patterns: list[str]) -> bool:
    """``trainlint.ignorePatterns``: globs matched against the absolute path (``**`` spans folders)."""
    from fnmatch import fnmatchcase

    return any(fnmatchcase(path, p) or fnmatchcase(path, "*/" + p.lstrip("*/")) for p in patterns)
