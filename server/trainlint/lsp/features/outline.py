"""Code lens (a log's verdict at its top) and document symbols (its findings and events)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as t
from pygls.uris import to_fs_path

from ..outline import code_lenses, symbols
from .common import tracked_for

if TYPE_CHECKING:
    from ..server import TrainlintServer


def register(server: TrainlintServer) -> None:
    server.feature(t.TEXT_DOCUMENT_CODE_LENS)(on_code_lens)
    server.feature(t.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(on_symbols)


async def on_code_lens(ls: TrainlintServer, params: t.CodeLensParams) -> list[t.CodeLens]:
    tr, _ = tracked_for(ls, params.text_document.uri)
    if tr is None:
        return []
    await ls.points_of(tr)
    return code_lenses(tr)


async def on_symbols(ls: TrainlintServer, params: t.DocumentSymbolParams) -> list[t.DocumentSymbol]:
    tr, member = tracked_for(ls, params.text_document.uri)
    if tr is None or member is not None:
        return []
    await ls.points_of(tr)
    return ls.lines.symbols_to_client(to_fs_path(params.text_document.uri) or tr.path, symbols(tr), ls.encoding)
