"""Documents opened, closed and saved, and files the client saw change: which logs to track, judge and show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as t
from pygls.uris import to_fs_path

from .. import diagnostics as dg

if TYPE_CHECKING:
    from ..server import TrainlintServer


def register(server: TrainlintServer) -> None:
    server.feature(t.TEXT_DOCUMENT_DID_OPEN)(on_open)
    server.feature(t.TEXT_DOCUMENT_DID_CLOSE)(on_close)
    server.feature(t.TEXT_DOCUMENT_DID_SAVE)(on_save)
    server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)(on_watched)


def _path(uri: str) -> str | None:
    if uri.startswith(dg.EVENTS_SCHEME + ":"):
        return None
    return to_fs_path(uri)


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


def on_close(ls: TrainlintServer, params: t.DidCloseTextDocumentParams) -> None:
    path = _path(params.text_document.uri) or dg.member_of(params.text_document.uri)
    if path is None:
        return
    ls.open_paths.discard(path)
    tr = ls.ws.by_file(path)
    if tr is not None and ls.settings.scope != "workspace":
        ls.clear(tr)


def on_save(ls: TrainlintServer, params: t.DidSaveTextDocumentParams) -> None:
    path = _path(params.text_document.uri)
    if path is not None:
        ls.note_change(path, deleted=False)


def on_watched(ls: TrainlintServer, params: t.DidChangeWatchedFilesParams) -> None:
    for ch in params.changes:
        path = to_fs_path(ch.uri)
        if path:
            ls.note_change(path, ch.type == t.FileChangeType.Deleted)
