"""Lines as ``wc -l``, ``grep -n`` and Neovim count them (``\\n`` only), from the lines the readers count.

The readers count a lone ``\\r`` as a line break, as the LSP specification does: a tqdm bar redraws itself
with ``\\r``, and each redraw is a measurement with its own line. VS Code agrees; a terminal, ``grep -n``, a
quickfix list and Neovim do not: for them the whole run of redraws is one line. A ``LineMap`` of a file records
where its lone ``\\r`` are (one pass, at C speed per chunk, O(appended) when the file grows), so a position
found on an LSP line can be told as the ``\\n`` line holding it, with the column shifted by the redraws
before it on that line — and back, for a position a ``\\n``-counting editor sends.

A file with no lone ``\\r`` (nearly every log) maps every position to itself and keeps no arrays.
"""

from __future__ import annotations

import dataclasses
import os
import re
from array import array
from bisect import bisect_left

from .fsio import open_regular

CHUNK = 1 << 20
_LONE_CR = re.compile(rb"\r(?!\n)")


class LineMap:
    """Where the lone ``\\r`` of one file are, to move positions between LSP lines and ``\\n`` lines."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0              # bytes scanned (a trailing ``\\r`` waits for the next byte)
        self.lsp_lines = 0           # LSP line breaks seen before ``offset``
        self.line_start = 0          # byte offset where the current ``\\n`` line starts
        self.lone = array("Q")       # LSP line numbers (1-based) that end with a lone ``\\r``
        self.cr_at = array("Q")      # byte offset of that ``\\r``
        self.nl_start = array("Q")   # byte offset of the start of the ``\\n`` line holding it
        self.ident: tuple[int, int] | None = None
        self.utf16 = False           # a UTF-16 file: not scanned (see update)

    # -- reading -------------------------------------------------------------------------------
    def update(self) -> LineMap:
        """Scan what was appended since the last call; start over if the file was replaced or truncated."""
        try:
            with open_regular(self.path) as f:
                st = os.fstat(f.fileno())
                ident = (st.st_dev, st.st_ino)
                if ident != self.ident or st.st_size < self.offset:
                    self.__init__(self.path)  # type: ignore[misc]
                    self.ident = ident
                    if f.read(2) in (b"\xff\xfe", b"\xfe\xff"):
                        # UTF-16 (a BOM): its "\r\n" is "\r\0\n\0", which a byte scan would take for lone
                        # "\r"s and halve the line numbers; a lone "\r" is not looked for in 16-bit units yet, so
                        # its lines are the LSP's.
                        self.utf16 = True
                if self.utf16:
                    return self
                f.seek(self.offset)
                while True:
                    data = f.read(CHUNK)
                    if not data:
                        break
                    if data.endswith(b"\r"):  # a ``\r\n`` may be cut in two: the ``\r`` waits for its next byte
                        self._scan(data[:-1])
                        if len(data) < CHUNK:
                            break
                        f.seek(-1, os.SEEK_CUR)
                        continue
                    self._scan(data)
        except OSError:
            pass
        return self

    def _scan(self, data: bytes) -> None:
        base = self.offset
        if b"\r" in data:
            prev = 0
            for m in _LONE_CR.finditer(data):
                p = m.start()
                self.lsp_lines += _breaks(data, prev, p) + 1
                nl = data.rfind(b"\n", 0, p)
                start = base + nl + 1 if nl >= 0 else self.line_start
                self.lone.append(self.lsp_lines)
                self.cr_at.append(base + p)
                self.nl_start.append(start)
                prev = p + 1
            self.lsp_lines += _breaks(data, prev, len(data))
        else:
            self.lsp_lines += data.count(b"\n")
        nl = data.rfind(b"\n")
        if nl >= 0:
            self.line_start = base + nl + 1
        self.offset = base + len(data)

    # -- mapping -------------------------------------------------------------------------------
    def identity(self) -> bool:
        return not self.lone

    def to_lf(self, line: int) -> tuple[int, str]:
        """The ``\\n`` line (1-based) holding LSP line ``line``, and the text before that LSP line on it."""
        j = bisect_left(self.lone, line)
        n = line - j
        if j == 0 or self.lone[j - 1] != line - 1:
            return n, ""
        return n, self._read(self.nl_start[j - 1], self.cr_at[j - 1] + 1)

    def to_lsp(self, line: int, column: int) -> tuple[int, int]:
        """The LSP line and the code-point column on it of 0-based ``column`` on ``\\n`` line ``line``."""
        lo, hi = line, line + len(self.lone)
        while lo < hi:  # the first LSP line L with L - (lone breaks before L) == line
            mid = (lo + hi) // 2
            if mid - bisect_left(self.lone, mid) < line:
                lo = mid + 1
            else:
                hi = mid
        first = lo
        j = bisect_left(self.lone, first)
        best, shift = first, 0
        k = j
        while k < len(self.lone) and self.lone[k] == first + (k - j):
            start = len(self._read(self.nl_start[k], self.cr_at[k] + 1))
            if start > column:
                break
            best, shift = self.lone[k] + 1, start
            k += 1
        return best, column - shift

    def _read(self, start: int, end: int) -> str:
        try:
            with open_regular(self.path) as f:
                f.seek(start)
                return f.read(end - start).decode("utf-8", "replace")
        except OSError:
            return ""


def _breaks(data: bytes, start: int, end: int) -> int:
    """LSP breaks in ``data[start:end]`` that are not lone ``\\r`` (those are counted by the caller)."""
    return data.count(b"\n", start, end)


def shift_location(loc, maps: dict[str, LineMap], fresh: set[str] | None = None):  # type: ignore[no-untyped-def]
    """``loc`` told in ``\\n`` lines (a new Location; columns are 1-based code points). A path not in ``fresh``
    is scanned for what was appended first (and added to it)."""
    if loc.line is None or loc.record is not None:
        return loc
    m = maps.get(loc.path)
    if m is None:
        m = maps[loc.path] = LineMap(loc.path)
    if fresh is None or loc.path not in fresh:
        if os.path.isfile(loc.path):
            m.update()
        if fresh is not None:
            fresh.add(loc.path)
    if m.identity():
        return loc
    line, head = m.to_lf(loc.line)
    shift = len(head)
    end_line = m.to_lf(loc.end_line)[0] if loc.end_line is not None else None
    return dataclasses.replace(loc, line=line, end_line=end_line,
                               column=loc.column + shift if loc.column is not None else None,
                               end_column=loc.end_column + shift if loc.end_column is not None else None)


def reports_to_lf(reports: list, maps: dict[str, LineMap] | None = None) -> dict[str, LineMap]:  # type: ignore[type-arg]
    """Tell every finding of ``reports`` in ``\\n`` lines (new Finding objects: the judged ones are untouched).

    ``maps`` kept between calls (``watch``) scans each file only for what was appended since."""
    maps = {} if maps is None else maps
    fresh: set[str] = set()
    for rep in reports:
        out = []
        for f in rep.findings:
            loc = shift_location(f.location, maps, fresh)
            related = [dataclasses.replace(r, location=shift_location(r.location, maps, fresh)) for r in f.related]
            out.append(dataclasses.replace(f, location=loc, related=related))
        rep.findings = out
    return maps
