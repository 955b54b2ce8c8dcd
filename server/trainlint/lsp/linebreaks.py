"""Positions told to each client the way it splits lines.

The LSP specification counts a lone ``\\r`` as a line break, and VS Code does; Neovim (and Vim, Emacs, Kakoune)
split on ``\\n`` only. On a tqdm log (one ``\\n`` line holding hundreds of ``\\r`` redraws) the LSP lines put a
Neovim user's FAIL past the end of the buffer and ``]d`` on another value. The readers keep counting LSP lines
(each redraw is a measurement with its own line); this module moves the positions sent to a ``\\n``-splitting
client (diagnostics, related locations, symbols) and those it sends (hover) through a ``LineMap`` per file,
which is scanned for what was appended only. ``lineBreaks`` (``auto``, ``lsp``, ``lf``) overrides the choice
made from ``clientInfo``.
"""

from __future__ import annotations

import threading
from typing import Any

from lsprotocol import types as t
from pygls.uris import to_fs_path

from ..core.linemap import LineMap

# clientInfo names of editors that split lines on "\n" only (lower case, matched as substrings)
LF_CLIENTS = ("neovim", "nvim", "vim", "emacs", "eglot", "lsp-mode", "kakoune", "kak-lsp")


def lf_client(client_info: Any) -> bool:
    name = str(getattr(client_info, "name", "") or "").lower()
    return any(k in name for k in LF_CLIENTS)


def _units(text: str, encoding: str) -> int:
    if encoding == t.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == t.PositionEncodingKind.Utf32 or text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


class LineBreaks:
    """The client's way of splitting lines, and one ``LineMap`` per file it was asked about."""

    def __init__(self) -> None:
        self.client_lf = False
        self.setting = "auto"
        self._maps: dict[str, LineMap] = {}
        self._lock = threading.Lock()

    @property
    def lf(self) -> bool:
        return self.setting == "lf" or (self.setting == "auto" and self.client_lf)

    def _map(self, path: str, fresh: bool) -> LineMap:
        with self._lock:
            m = self._maps.get(path)
            if m is None:
                m = self._maps[path] = LineMap(path)
                fresh = True
            if fresh:
                m.update()
            return m

    def forget(self, path: str) -> None:
        with self._lock:
            self._maps.pop(path, None)

    def _pos(self, m: LineMap, p: t.Position, encoding: str) -> t.Position:
        line, head = m.to_lf(p.line + 1)
        return t.Position(line - 1, p.character + (_units(head, encoding) if head else 0))

    def _range(self, m: LineMap, r: t.Range, encoding: str) -> t.Range:
        return t.Range(self._pos(m, r.start, encoding), self._pos(m, r.end, encoding))

    def to_client(self, by_uri: dict[str, list[t.Diagnostic]], encoding: str) -> dict[str, list[t.Diagnostic]]:
        """Diagnostics with their ranges told in the client's lines (in place; run in the judging worker)."""
        if not self.lf:
            return by_uri
        fresh: set[str] = set()

        def mapped(uri: str) -> LineMap | None:
            if not uri.startswith("file:"):
                return None  # an event file's text view is rendered with "\n" breaks only
            path = to_fs_path(uri)
            if path is None:
                return None
            m = self._map(path, path not in fresh)
            fresh.add(path)
            return None if m.identity() else m

        for uri, diags in by_uri.items():
            m = mapped(uri)
            for d in diags:
                if m is not None:
                    d.range = self._range(m, d.range, encoding)
                for rel in d.related_information or []:
                    rm = mapped(rel.location.uri)
                    if rm is not None:
                        rel.location.range = self._range(rm, rel.location.range, encoding)
        return by_uri

    def symbols_to_client(self, path: str, syms: list[t.DocumentSymbol], encoding: str) -> list[t.DocumentSymbol]:
        if not self.lf or not syms:
            return syms
        m = self._map(path, False)
        if m.identity():
            return syms
        todo = list(syms)
        while todo:
            s = todo.pop()
            s.range, s.selection_range = self._range(m, s.range, encoding), self._range(m, s.selection_range, encoding)
            todo.extend(s.children or [])
        return syms

    def line_to_client(self, path: str, line: int) -> int:
        """A 1-based LSP line as the client counts it (the map as the last publish left it)."""
        if not self.lf:
            return line
        m = self._map(path, False)
        return line if m.identity() else m.to_lf(line)[0]

    def line_from_client(self, path: str | None, pos: t.Position) -> int:
        """The 1-based LSP line of a position the client sent (the character is taken as code points: the
        redraws before it on a progress-bar line are ASCII in every log seen)."""
        if not self.lf or path is None:
            return pos.line + 1
        m = self._map(path, False)
        if m.identity():
            return pos.line + 1
        return m.to_lsp(pos.line + 1, pos.character)[0]
