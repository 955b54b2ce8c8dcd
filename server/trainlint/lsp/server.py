"""``trainlint serve``: the language server (pygls 2, stdio).

It finds the logs of every workspace folder, judges them with the same code as
``trainlint check``, and keeps them judged while runs write: the server watches the folders
itself (Neovim has no dynamic file watching) and also takes ``workspace/didChangeWatchedFiles``
from clients that send it. Reading and judging run on one worker thread, so the event loop stays
free for hover and the other requests; a log that grows is read from where it was left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..discovery import folders
from ..readers import BINARY_FORMATS
from ..readers.tfevents import is_event_file
from ..runs import is_artefact
from . import diagnostics as dg
from .curves import CURVES, on_curves
from .hover import findings_markdown, point_markdown
from .linebreaks import LineBreaks, lf_client
from .outline import code_lenses, symbols
from .settings import Settings
from .stdio import serve
from .workspace import Tracked, Workspace

log = logging.getLogger("trainlint.lsp")
RENDER_EVENTS = "trainlint/renderEvents"
IS_LOG = "trainlint/isLog"
RESCAN = "trainlint.rescan"
MAX_WATCHED = 8192  # folders watched (inotify's max_user_watches is 8192 on older kernels)
MAX_LIVE_KEPT = 16  # unopened logs still being written that keep their points (the others are read again)
READ_BUDGET = 16 << 20  # bytes of a log read at a time before queued work gets its turn
WATCH_GLOBS = ("**/trainer_state.json", "**/trainer_*_log.txt", "**/events.out.tfevents.*", "**/*.csv",
               "**/*.jsonl", "**/*.log", "**/metrics.json", "**/scalars.json", "**/log.txt", "**/.trainlint.yaml")


class TrainlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("trainlint", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Full)
        self.ws = Workspace()
        self.settings = Settings()
        self.views = dg.Views()
        self.lines = LineBreaks()  # positions in the client's lines (Neovim: "\n" only)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trainlint-judge")
        self.tasks: set[asyncio.Task[Any]] = set()
        self.open_paths: set[str] = set()
        self.pending: dict[str, str] = {}       # path -> "changed" | "deleted"
        self.flush_task: asyncio.Task[Any] | None = None
        self.stop_watch: asyncio.Event | None = None
        self.settings_errors: list[str] = []
        self.config_uris: set[str] = set()  # configuration files that have diagnostics
        self.pull = False
        self.live_kept: dict[str, None] = {}  # unopened logs still being written whose points are kept, oldest first

    # -- plumbing ----------------------------------------------------------------------------
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

    # -- publishing --------------------------------------------------------------------------
    def visible(self, uri: str) -> bool:
        path = dg.member_of(uri) or to_fs_path(uri)
        if path is not None and self.settings.ignore_patterns and ignored(path, self.settings.ignore_patterns):
            return False
        if self.settings.scope == "workspace":
            return True
        return path in self.open_paths or (path is not None and os.path.dirname(path) in self.open_paths)

    def build(self, tr: Tracked) -> dict[str, list[t.Diagnostic]]:
        return self.lines.to_client(dg.build(tr, self.settings, self.views, self.encoding), self.encoding)

    def publish(self, tr: Tracked, by_uri: dict[str, list[t.Diagnostic]] | None = None) -> None:
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

    def clear(self, tr: Tracked) -> None:
        if not self.pull:
            for uri in tr.published:
                self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, []))
        tr.published = set()

    async def judge(self, path: str, keep: bool = False) -> None:
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

    # -- work-done progress -------------------------------------------------------------------
    async def progress_begin(self, title: str, cancellable: bool = False) -> str | None:
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

    def progress_report(self, token: str | None, share: float | None, message: str | None = None) -> None:
        if token is not None:
            pct = int(100 * share) if share is not None else None
            self.work_done_progress.report(token, t.WorkDoneProgressReport(
                message=message or (f"{pct}%" if pct is not None else None), percentage=pct))

    def progress_end(self, token: str | None, message: str) -> None:
        if token is not None:
            self.work_done_progress.end(token, t.WorkDoneProgressEnd(message=message))

    def is_open(self, tr: Tracked) -> bool:
        """A file of this log is open in the editor (the log itself, a member, or its text view)."""
        prefix = tr.path.rstrip(os.sep) + os.sep
        return any(p == tr.path or p.startswith(prefix) for p in self.open_paths)

    def _release_if_idle(self, tr: Tracked) -> None:
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

    async def points_of(self, tr: Tracked) -> None:
        """A released log's points, read again (and its diagnostics published, should the bytes have changed)
        before a request that shows them."""
        if tr.source is None and tr.report is not None and tr.format != "dataset":
            await self.judge(tr.path, keep=True)

    def _recheck_when_quiet(self, tr: Tracked) -> None:
        """A log reported as running becomes 'stopped' when it stays quiet: look again then."""
        rep = tr.report
        if rep is None or not any(m.check == "run-end" and m.values.get("running") for m in rep.measurements):
            return
        window = self.ws.config_for(tr.path).thresholds.running_if_written_within_s
        age = next(m.values["age_s"] for m in rep.measurements if m.check == "run-end")
        delay = max(1.0, window - age + 1.0)
        asyncio.get_running_loop().call_later(delay, self._rejudge_quiet, tr.path)

    def _rejudge_quiet(self, path: str) -> None:
        tr = self.ws.tracked.get(path)
        if tr is not None:
            tr.report = None  # judge again although no byte changed: time did
            self.spawn(self.judge(path), "re-judging a quiet log")

    # -- scanning ----------------------------------------------------------------------------
    def roots(self) -> list[str]:
        folders = [to_fs_path(f.uri) for f in (self.workspace.folders or {}).values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return [f for f in folders if f and os.path.isdir(f)]

    async def scan(self) -> None:
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

    def scan_order(self, paths: list[str]) -> list[str]:
        """Opened logs first, then the smallest: a 1 GB log is judged after the runs that take a moment."""
        def size(p: str) -> int:
            try:
                if os.path.isdir(p):
                    return sum(e.stat().st_size for e in os.scandir(p) if e.is_file(follow_symlinks=False))
                return os.stat(p).st_size
            except OSError:
                return 0
        return sorted(paths, key=lambda p: (p not in self.open_paths, size(p)))

    def report_config(self) -> None:
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

    def _cancelled(self, token: str) -> bool:
        fut = self.work_done_progress.tokens.get(token)
        return bool(fut is not None and fut.cancelled())

    async def rejudge_all(self, reopen: bool = False) -> None:
        for tr in list(self.ws.tracked.values()):
            if reopen:
                tr.source, tr.report = None, None
            await self.judge(tr.path)

    # -- changes on disk ---------------------------------------------------------------------
    def note_change(self, path: str, deleted: bool) -> None:
        self.pending[path] = "deleted" if deleted else "changed"
        if self.flush_task is None or self.flush_task.done():
            self.flush_task = self.spawn(self._flush_later(), "applying file changes")

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.settings.debounce_ms / 1000)
        while self.pending:
            batch, self.pending = self.pending, {}
            await self.apply(batch)

    async def apply(self, batch: dict[str, str]) -> None:
        units: dict[str, None] = {}
        config_changed = False
        for path, what in batch.items():
            if os.path.basename(path) in (".trainlint.yaml", ".trainlint.yml", "pyproject.toml"):
                config_changed = True
                continue
            if what == "deleted" and not os.path.exists(path):
                if is_event_file(path):
                    units[os.path.dirname(path)] = None
                for gone in self.ws.forget(path):
                    self.clear(gone)
                continue
            if not self.ws.inside(path):
                continue  # a change seen through a folder link (a client's watcher may follow them)
            if os.path.isdir(path):
                if os.path.islink(path):
                    continue  # a link to a folder (`/`, a run elsewhere): never walked
                if self.settings.scope == "workspace":
                    for new in await self.in_worker(self.ws.discover, path):
                        units[new] = None
                    # and what is already tracked there: its files may have changed while no watch saw them
                    units.update(dict.fromkeys(self.ws.tracked_under(path)))
                continue
            if not self.ws.is_candidate(path):
                if is_artefact(os.path.basename(path)):  # a checkpoint saved or removed: the run's facts changed
                    for unit in self.ws.logs_of_run(path):
                        self.ws.tracked[unit].report = None  # judge again although no byte of the log changed
                        units[unit] = None
                continue
            unit = self.ws.unit_for(path)
            if unit not in self.ws.tracked:
                if self.settings.scope != "workspace" and unit not in self.open_paths:
                    continue
                if await self.in_worker(self.ws.track, path) is None:
                    continue
            units[unit] = None
        if config_changed:
            self.ws.forget_configs()
            await self.rejudge_all(reopen=True)
            self.report_config()
        for unit in units:
            try:
                await self.judge(unit)
            except Exception:  # one log's failure is logged; the rest of the batch is still judged
                log.exception("judging %s failed", unit)

    async def watch(self) -> None:
        """Watch the folders discovery walks, each on its own (directory links are never followed: a link
        to `/` took 20-45 s and published files outside the workspace). A new folder restarts the watch
        with it; a watch that dies is restarted with the reason logged."""
        import watchfiles

        if not self.ws.roots:
            return
        self.stop_watch = asyncio.Event()
        failures = 0
        watched: set[str] | None = None
        while not self.stop_watch.is_set():
            dirs = await self.in_worker(self._watched_folders)
            if watched is not None:
                # Folders that appeared since the last listing: what was written in them before this watch
                # starts is seen by looking once it runs (a debounce from now), not by its events.
                for d in set(dirs) - watched:
                    asyncio.get_running_loop().call_later(0.2, self.note_change, d, False)
            watched = set(dirs)
            try:
                await self._watch_once(watchfiles, dirs)
                failures = 0
            except Exception as e:  # any failure restarts the watch; the reason is logged
                failures += 1
                delay = min(30.0, 0.5 * 2 ** failures)
                log.error("the file watcher stopped (%s: %s); restarting it in %.1f s", type(e).__name__, e, delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop_watch.wait(), delay)

    def _watched_folders(self) -> list[str]:
        dirs: list[str] = []
        for root in self.ws.roots:
            found, more = folders(root, MAX_WATCHED - len(dirs))
            dirs += found
            if more:
                log.warning("watching %d folders; %d more under %s are not watched (judged on open, save and "
                            "rescan)", MAX_WATCHED, more, root)
        return dirs

    async def _watch_once(self, watchfiles: Any, dirs: list[str]) -> None:
        """Until a folder is added or removed (then the caller lists the folders again)."""
        known = set(dirs)
        watch = watchfiles.awatch(*dirs, debounce=max(50, self.settings.debounce_ms), step=50,
                                  stop_event=self.stop_watch, recursive=False, watch_filter=_watch_filter,
                                  raise_interrupt=False, ignore_permission_denied=True)
        async with contextlib.aclosing(watch):
            async for changes in watch:
                relist = False
                for change, path in changes:
                    gone = change == watchfiles.Change.deleted
                    self.note_change(path, gone)
                    added = change == watchfiles.Change.added and os.path.isdir(path) and not os.path.islink(path)
                    relist = relist or added or (gone and path in known)
                if relist:
                    return


def _watch_filter(change: Any, path: str) -> bool:
    parts = path.split(os.sep)
    return not any(p in ("node_modules", "__pycache__", ".git", ".venv", "venv") for p in parts)


server = TrainlintServer()


# -- lifecycle ------------------------------------------------------------------------------------
@server.feature(t.INITIALIZE)
def on_initialize(ls: TrainlintServer, params: t.InitializeParams) -> None:
    ls.settings, ls.settings_errors = Settings.parse(params.initialization_options)
    ls.ws.select, ls.ws.ignore = ls.settings.select, ls.settings.ignore
    ls.lines.client_lf, ls.lines.setting = lf_client(params.client_info), ls.settings.line_breaks
    caps = params.capabilities.text_document
    if ls.settings.pull_diagnostics and caps is not None and caps.diagnostic is not None:
        ls.pull = True
        ls.feature(t.TEXT_DOCUMENT_DIAGNOSTIC, t.DiagnosticOptions(
            identifier="trainlint", inter_file_dependencies=False, workspace_diagnostics=False))(on_pull)


@server.feature(t.INITIALIZED)
async def on_initialized(ls: TrainlintServer, params: t.InitializedParams) -> None:
    ls.ws.roots = ls.roots()
    for err in ls.settings_errors:
        ls.message(f"trainlint: {err}; the default is used")
    ws_caps = ls.client_capabilities.workspace
    if ws_caps is not None and ws_caps.configuration:
        await _pull_configuration(ls)
    watched = ws_caps.did_change_watched_files if ws_caps is not None else None
    if watched is not None and watched.dynamic_registration:
        try:
            await ls.client_register_capability_async(t.RegistrationParams([t.Registration(
                str(uuid.uuid4()), t.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                t.DidChangeWatchedFilesRegistrationOptions([t.FileSystemWatcher(g) for g in WATCH_GLOBS]))]))
        except Exception as e:
            log.info("client did not register file watchers: %s", e)
    ls.spawn(ls.scan(), "initial scan")
    if ls.settings.watch:
        ls.spawn(ls.watch(), "watching run directories")


async def _pull_configuration(ls: TrainlintServer) -> None:
    try:
        result = await asyncio.wait_for(ls.workspace_configuration_async(
            t.ConfigurationParams([t.ConfigurationItem(section="trainlint")])), 5)
    except Exception as e:
        log.info("workspace/configuration failed: %s", e)
        return
    raw = result[0] if result else None
    if raw:
        _apply_settings(ls, raw)


def _apply_settings(ls: TrainlintServer, raw: Any) -> None:
    settings, errors = Settings.parse(raw)
    for err in errors:
        ls.message(f"trainlint: {err}; the default is used")
    ls.settings = settings
    ls.ws.select, ls.ws.ignore = settings.select, settings.ignore
    ls.lines.setting = settings.line_breaks


@server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(ls: TrainlintServer, params: t.DidChangeConfigurationParams) -> None:
    ws_caps = ls.client_capabilities.workspace
    if ws_caps is not None and ws_caps.configuration:
        await _pull_configuration(ls)
    elif params.settings:
        _apply_settings(ls, params.settings)
    ls.ws.forget_configs()
    await ls.rejudge_all()


@server.feature(t.SHUTDOWN)
def on_shutdown(ls: TrainlintServer, params: Any) -> None:
    if ls.stop_watch is not None:
        ls.stop_watch.set()


# -- documents and files --------------------------------------------------------------------------
def _path(uri: str) -> str | None:
    if uri.startswith(dg.EVENTS_SCHEME + ":"):
        return None
    return to_fs_path(uri)


@server.feature(t.TEXT_DOCUMENT_DID_OPEN)
async def on_open(ls: TrainlintServer, params: t.DidOpenTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is None:
        member = dg.member_of(params.text_document.uri)
        if member is not None:  # an event file's text view: its points stay read while it is shown
            ls.open_paths.add(member)
        return
    ls.open_paths.add(path)
    tr = ls.ws.by_file(path) or await ls.in_worker(ls.ws.track, path)
    if tr is not None:
        await ls.judge(tr.path)
        ls.publish(tr)


@server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: TrainlintServer, params: t.DidCloseTextDocumentParams) -> None:
    path = _path(params.text_document.uri) or dg.member_of(params.text_document.uri)
    if path is None:
        return
    ls.open_paths.discard(path)
    tr = ls.ws.by_file(path)
    if tr is not None and ls.settings.scope != "workspace":
        ls.clear(tr)


@server.feature(t.TEXT_DOCUMENT_DID_SAVE)
def on_save(ls: TrainlintServer, params: t.DidSaveTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is not None:
        ls.note_change(path, deleted=False)


@server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def on_watched(ls: TrainlintServer, params: t.DidChangeWatchedFilesParams) -> None:
    for ch in params.changes:
        path = to_fs_path(ch.uri)
        if path:
            ls.note_change(path, ch.type == t.FileChangeType.Deleted)


# -- features -------------------------------------------------------------------------------------
def _tracked_for(ls: TrainlintServer, uri: str) -> tuple[Tracked | None, str | None]:
    member = dg.member_of(uri)
    if member is not None:
        return ls.ws.by_file(member), member
    path = to_fs_path(uri)
    return (ls.ws.by_file(path) if path else None), None


@server.feature(t.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: TrainlintServer, params: t.HoverParams) -> t.Hover | None:
    tr, member = _tracked_for(ls, params.text_document.uri)
    if tr is None or tr.report is None:
        return None
    await ls.points_of(tr)
    if tr.report is None:
        return None
    line = ls.lines.line_from_client(to_fs_path(params.text_document.uri) if member is None else None,
                                     params.position)
    lg = tr.log
    if member is not None:
        if lg is None:
            return None
        view = ls.views.get(tr, member, fresh=False)  # as the last publish left it: never rendered here
        if view is None:
            return None
        hit = view.point_at(line)
        here = [f for f in tr.report.findings if f.location.record is not None and f.location.path == member
                and view.line_of(f.location.record, f.series_key or "") == line]
        if here:
            return _hover(findings_markdown(here, lg, ls.lines.line_to_client))
        if hit is not None and hit[0] in lg.series:
            return _hover(point_markdown([(lg.series[hit[0]], hit[1])]))
        return None
    here = [f for f in tr.report.findings if f.location.line == line and f.location.path == tr.path]
    if here:
        return _hover(findings_markdown(here, lg, ls.lines.line_to_client))
    points = tr.points_at(line)
    return _hover(point_markdown(points)) if points else None


def _hover(md: str) -> t.Hover:
    return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=md))


@server.feature(t.TEXT_DOCUMENT_CODE_LENS)
async def on_code_lens(ls: TrainlintServer, params: t.CodeLensParams) -> list[t.CodeLens]:
    tr, _ = _tracked_for(ls, params.text_document.uri)
    if tr is None:
        return []
    await ls.points_of(tr)
    return code_lenses(tr)


@server.feature(t.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
async def on_symbols(ls: TrainlintServer, params: t.DocumentSymbolParams) -> list[t.DocumentSymbol]:
    tr, member = _tracked_for(ls, params.text_document.uri)
    if tr is None or member is not None:
        return []
    await ls.points_of(tr)
    return ls.lines.symbols_to_client(to_fs_path(params.text_document.uri) or tr.path, symbols(tr), ls.encoding)


async def on_pull(ls: TrainlintServer,
                  params: t.DocumentDiagnosticParams) -> t.RelatedFullDocumentDiagnosticReport:
    tr, _ = _tracked_for(ls, params.text_document.uri)
    items: list[t.Diagnostic] = []
    if tr is not None:
        await ls.points_of(tr)
        items = ls.build(tr).get(params.text_document.uri, [])
    return t.RelatedFullDocumentDiagnosticReport(items=items)


@server.feature(RENDER_EVENTS)
async def on_render_events(ls: TrainlintServer, params: Any) -> dict[str, Any]:
    """The text view of an event file: ``{"uri": ..., "text": ..., "lines": n}``."""
    uri = getattr(params, "uri", None) or (params.get("uri") if isinstance(params, dict) else None)
    if not isinstance(uri, str) or not uri:
        raise ValueError("trainlint/renderEvents needs {\"uri\": <event file or trainlint-events: URI as a "
                         f"string>}}, got {str(uri)[:40]!r}")
    member = dg.member_of(uri) or to_fs_path(uri)
    if not member:
        raise ValueError(f"not a file URI: {uri}")
    tr = ls.ws.by_file(member) or await ls.in_worker(ls.ws.track, member)
    if tr is None or tr.format not in BINARY_FORMATS:
        raise ValueError(f"not a TensorBoard event file or an MLflow SQLite store: {uri}")
    await ls.judge(tr.path)
    await ls.points_of(tr)
    if tr.log is None:
        raise ValueError(f"cannot read {member}: {tr.report.error if tr.report else 'unknown error'}")
    log = tr.log

    def text() -> tuple[str, int]:
        view = ls.views.get(tr, member)
        assert view is not None
        return "\n".join(view.lines(log)) + "\n", len(view)

    body, lines = await ls.in_worker(text)
    return {"uri": dg.events_uri(member), "text": body, "lines": lines}


server.feature(CURVES)(on_curves)  # the curves view's data (lsp/curves.py)


@server.feature(IS_LOG)
async def on_is_log(ls: TrainlintServer, params: Any) -> dict[str, Any]:
    """Whether the server judges this file (``{"uri": ...}`` -> ``{"log": bool, "format": str | None}``), so an
    editor attaches to every log the server recognises, not to a fixed list of names."""
    uri = getattr(params, "uri", None) or (params.get("uri") if isinstance(params, dict) else None)
    if not isinstance(uri, str) or not uri:
        raise ValueError("trainlint/isLog needs {\"uri\": <file URI>}")
    path = to_fs_path(uri)
    if path is None:
        return {"log": False, "format": None}
    tr = ls.ws.by_file(path) or await ls.in_worker(ls.ws.track, path)
    return {"log": tr is not None, "format": tr.format if tr is not None else None}


@server.command(RESCAN)
async def on_rescan(ls: TrainlintServer, *args: Any) -> dict[str, int]:
    ls.ws.roots = ls.roots()
    ls.ws.forget_configs()
    await ls.scan()
    await ls.rejudge_all()
    return {"logs": len(ls.ws.tracked)}


def ignored(path: str, patterns: list[str]) -> bool:
    """``trainlint.ignorePatterns``: globs matched against the absolute path (``**`` spans folders)."""
    from fnmatch import fnmatchcase

    return any(fnmatchcase(path, p) or fnmatchcase(path, "*/" + p.lstrip("*/")) for p in patterns)


# -- logging and entry point ----------------------------------------------------------------------
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

