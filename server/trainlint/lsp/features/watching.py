"""Changes on disk: the server's own watcher of the folders discovery walks (Neovim has no dynamic file watching),
the client's ``didChangeWatchedFiles``, debouncing, and what a change means for which log (a mixin of
``TrainlintServer``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import TYPE_CHECKING, Any

from ...discovery import folders
from ...editor_formats import DATASET_DOCUMENTS as DATASET_GLOBS  # speech manifests, linted by preflight
from ...readers.tfevents import is_event_file
from ...runs import is_artefact

if TYPE_CHECKING:
    from ..server import TrainlintServer

log = logging.getLogger("trainlint.lsp")
MAX_WATCHED = 8192  # folders watched (inotify's max_user_watches is 8192 on older kernels)
CONFIG_GLOBS = ("**/.trainlint.yaml",)


def watch_globs() -> tuple[str, ...]:
    """What the client is asked to watch: every format's globs (the format registry) and the configuration."""
    from ...readers.registry import watch_globs as format_globs  # start-up: imports every reader module

    return (*format_globs(), *CONFIG_GLOBS, *DATASET_GLOBS)


class Watching:
    def note_change(self: TrainlintServer, path: str, deleted: bool) -> None:
        self.pending[path] = "deleted" if deleted else "changed"
        if self.flush_task is None or self.flush_task.done():
            self.flush_task = self.spawn(self._flush_later(), "applying file changes")

    async def _flush_later(self: TrainlintServer) -> None:
        await asyncio.sleep(self.settings.debounce_ms / 1000)
        while self.pending:
            batch, self.pending = self.pending, {}
            await self.apply(batch)

    async def apply(self: TrainlintServer, batch: dict[str, str]) -> None:
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

    async def watch(self: TrainlintServer) -> None:
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

    def _watched_folders(self: TrainlintServer) -> list[str]:
        dirs: list[str] = []
        for root in self.ws.roots:
            found, more = folders(root, MAX_WATCHED - len(dirs))
            dirs += found
            if more:
                log.warning("watching %d folders; %d more under %s are not watched (judged on open, save and "
                            "rescan)", MAX_WATCHED, more, root)
        return dirs

    async def _watch_once(self: TrainlintServer, watchfiles: Any, dirs: list[str]) -> None:
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
