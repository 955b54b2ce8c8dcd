"""CSV logs: Lightning ``metrics.csv``, Keras CSVLogger ``training.log``, ultralytics ``results.csv``.

A blank cell is an absent value (Lightning writes train and val metrics on different rows), not
NaN; a cell that says ``nan`` is NaN. Header names keep the spelling of the file, padding trimmed.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.accel import CSCAN
from ..core.lines import split_lines
from ..core.model import Locator, LogFile, Series, parse_number
from ..core.roles import RoleMap
from .base import FormatReader, line_format
from .registry import Detection, FormatSpec, Probe

STEP_COLUMNS = ("step", "global_step", "iteration", "iter", "_step", "epoch")
WALL_COLUMNS = {"time"}  # ultralytics: seconds since the start


@dataclass
class _State:
    header: list[str] | None = None
    step_col: int = -1
    step_basis: str = "index"
    wall_col: int = -1
    rows: int = 0
    bad_columns: set[str] = field(default_factory=set)


_Buf = tuple[array, array, array, array, str]
_BREAK = re.compile(r"\r\n|\r|\n")  # core/lines.py's breaks: the LSP's


def _lines_at(text: str, pos: int, ends: list[int]) -> Iterator[str]:
    """The lines of ``text`` from ``pos`` (a line's start) as split_lines gives them, one at a time (csv.reader
    stops where a row ends); ``ends`` gets, for each, the offset of the line after it."""
    n = len(text)
    while pos < n:
        m = _BREAK.search(text, pos)
        end, nxt = (m.start(), m.end()) if m else (n, n)
        ends.append(nxt)
        yield text[pos:end]
        pos = nxt

# One cell: quoted (quotes doubled inside) or bare. The two alternatives cannot both match a cell and
# the runs are possessive, so a line that does not fit fails at once instead of trying 2^cells splits.
_CELL = r'(?:"(?:[^"\n]|"")*+"|[^,\n"]*+)'


@lru_cache(maxsize=1024)
def cell_locator(index: int) -> Locator:
    return Locator.compile(r"^(?:" + _CELL + r",){" + str(index) + r"}[ \t]*+(?P<v>[^,\s]*)")


class CsvReader(FormatReader):
    format = "csv"

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()
        self._series: list[Series | None] = []

    def scan(self, text: str, first_line: int) -> None:
        if CSCAN is not None and text.isascii():  # isascii: a flag of the str, no scan
            self._scan_text(text, first_line)
        else:
            self._scan_lines(text, first_line)

    def _scan_lines(self, text: str, first_line: int) -> None:
        """The chunk as a list of lines: the pure path, and a chunk with non-ASCII text (the compiled scanner reads
        its plain rows from the list, csv_rows)."""
        st: _State = self.state
        lines = split_lines(text)
        start = 0
        if st.header is None:
            while start < len(lines) and not lines[start].strip():
                start += 1
            if start >= len(lines):
                return
            self._header(next(csv.reader([lines[start]])))
            start += 1
        bufs = self._buffers()
        i, n = start, len(lines)
        while i < n:
            if CSCAN is not None:  # the plain rows in C; it stops at a row csv.reader and float() must read
                i, st.rows = CSCAN.csv_rows(lines, i, first_line, st.step_col, st.wall_col, st.rows, bufs)
                if i >= n:
                    break
            i += self._rows(itertools.islice(lines, i, None), first_line + i, bufs, one=CSCAN is not None)
        self._extend(bufs)

    def _scan_text(self, text: str, first_line: int) -> None:
        """An ASCII chunk read by the compiled scanner from its text (csv_text: no list of lines, no "\\r\\n"
        rewritten, which were a third of the 100 MB CSV read), each row it leaves read by _rows from lines split
        there as split_lines splits them, so both give the series _scan_lines gives."""
        st: _State = self.state
        pos, line, n = 0, first_line, len(text)
        if st.header is None:
            ends: list[int] = []
            for k, ln in enumerate(_lines_at(text, 0, ends)):
                if ln.strip():
                    self._header(next(csv.reader([ln])))
                    pos, line = ends[k], first_line + k + 1
                    break
            else:
                return
        bufs = self._buffers()
        while pos < n:
            pos, line, st.rows = CSCAN.csv_text(text, pos, line, st.step_col, st.wall_col, st.rows, bufs)
            if pos >= n:
                break
            ends = []
            used = self._rows(_lines_at(text, pos, ends), line, bufs, one=True)
            pos, line = ends[used - 1], line + used
        self._extend(bufs)

    def _buffers(self) -> list[_Buf | None]:
        """A chunk's points (steps, values, lines, walls) per column, added to their series at its end (no call
        per value), and the column's name; arrays, which the compiled scanner fills a column at a time."""
        header = self.state.header or []
        return [(array("d"), array("d"), array("I"), array("d"), name) if s is not None else None
                for s, name in zip(self._series, header, strict=True)]

    def _extend(self, bufs: list[_Buf | None]) -> None:
        """The chunk's points to their series. Without a wall-time column every wall is NaN: the compiled scanner
        buffers none (8 of the 28 bytes a point it wrote), the Python loop's are not looked at (``timed=False``);
        a series already holding wall times (none does: this reader gives them only with a time column) would get
        a NaN a point."""
        timed = None if self.state.wall_col >= 0 else False
        for s, buf in zip(self._series, bufs, strict=True):
            if s is not None and buf is not None and buf[0]:
                walls = buf[3] if timed is None or not s.walls else array("d", [math.nan]) * len(buf[0])
                s.extend(buf[0], buf[1], buf[2], walls, timed=timed)

    def _rows(self, lines: Iterator[str], base: int, bufs: list[_Buf | None], one: bool) -> int:
        """The rows of ``lines`` (the first on physical line ``base``) through csv.reader (one row when ``one``: the
        compiled scanner takes the next); returns how many lines were read."""
        st: _State = self.state
        rows = csv.reader(ln + "\n" for ln in lines)
        line_no = base
        for row in rows:
            row_line, line_no = line_no, base + rows.line_num
            if one and row_line > base:  # the row after the one asked for: the line count is where it starts
                return row_line - base
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            spans = line_no - row_line > 1  # a quoted cell holds a line break: cells sit on later lines
            st.rows += 1
            step = float(st.rows - 1)
            if st.step_col >= 0 and st.step_col < len(row):
                try:
                    step = float(row[st.step_col])
                except ValueError:
                    continue
            wall = math.nan
            if st.wall_col >= 0 and st.wall_col < len(row):
                with contextlib.suppress(ValueError):
                    wall = float(row[st.wall_col])
            here = at = row_line
            # zip stops at the last column with a series: cells past the header have none. A blank cell (most
            # of a sparse Lightning metrics.csv: train and val metrics on different rows) is skipped before
            # float(), whose ValueError for it cost more than the whole rest of the scan.
            for raw, buf in zip(row, bufs, strict=False):
                if spans:
                    here, at = at, at + raw.count("\n")
                if buf is None or not raw:
                    continue
                try:
                    value = float(raw)  # the common case; parse_number strips quotes a writer left
                except ValueError:
                    value = self._odd_cell(raw, buf[4], here)
                    if value is None:
                        continue
                buf[0].append(step)
                buf[1].append(value)
                buf[2].append(here)
                buf[3].append(wall)
        return rows.line_num

    def _odd_cell(self, raw: str, name: str, line: int) -> float | None:
        """A cell float() refused: padded or quoted numbers are read; blank ones are absent values; anything
        else is reported once per column and ignored (None)."""
        cell = raw.strip()
        if not cell:
            return None
        try:
            return parse_number(cell)
        except ValueError:
            if name not in self.state.bad_columns:
                self.state.bad_columns.add(name)
                self.log.problem(f"column `{name}` holds {cell!r}, not a number; such cells are ignored", line)
            return None

    def _header(self, names: list[str]) -> None:
        st: _State = self.state
        names = [n.strip() for n in names]
        st.header = names
        lowered = [n.lower() for n in names]
        for cand in STEP_COLUMNS:
            if cand in lowered:
                st.step_col = lowered.index(cand)
                st.step_basis = "epoch" if cand == "epoch" else "step"
                break
        for i, n in enumerate(lowered):
            if n in WALL_COLUMNS:
                st.wall_col = i
        flavour = "generic"
        if any(n.startswith(("train/", "metrics/")) for n in lowered):
            flavour = "ultralytics"
        elif "step" in lowered and "epoch" in lowered:
            flavour = "lightning"
        elif lowered and lowered[0] == "epoch":
            flavour = "keras"
        self.log.facts["flavour"] = flavour
        self.log.facts["columns"] = names
        skip = {st.step_col, st.wall_col} | {i for i, n in enumerate(lowered) if n in STEP_COLUMNS}
        self._series = [
            None if i in skip or not name else self.series(name, locator=cell_locator(i), step_basis=st.step_basis)
            for i, name in enumerate(names)
        ]

    def restore(self, state: _State) -> None:
        had_header = self.state.header is not None
        self.state = state
        if state.header is None and had_header:
            self._series = []


_HEADER_WORD = re.compile(r"^[\s\"]*[A-Za-z_][^,]*$")


def looks_like(head: str) -> bool:
    """A header of names, then rows of numbers with the same number of cells."""
    lines = [ln for ln in head.splitlines()[:6] if ln.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return False
    cells = [c for c in lines[0].split(",")]
    if len(cells) < 2 or not all(_HEADER_WORD.match(c) or not c.strip() for c in cells):
        return False
    row = lines[1].split(",")
    numeric = sum(1 for c in row if _is_num(c))
    return abs(len(row) - len(cells)) <= 1 and numeric >= max(1, len(row) // 3)


def _is_num(cell: str) -> bool:
    try:
        parse_number(cell)
        return True
    except ValueError:
        return False


def _sniff(p: Probe) -> Detection | None:
    if p.suffix == ".csv" or looks_like(p.head):
        return Detection("csv", "a header row and numeric rows")
    return None


FORMAT = FormatSpec(
    "csv", "CSV with a header row: Lightning / Keras CSVLogger, ultralytics results.csv",
    open=line_format("csv", CsvReader), reader=CsvReader,
    priority=50, sniff=_sniff, suffixes=(".csv",), globs=("**/*.csv",),
    activation=("**/metrics.csv", "**/results.csv"), fuzz_seed="fixtures/runs/yolo-gallstone/results.csv")
