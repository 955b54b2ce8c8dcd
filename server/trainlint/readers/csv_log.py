"""CSV logs: Lightning ``metrics.csv``, Keras CSVLogger ``training.log``, ultralytics ``results.csv``.

A blank cell is an absent value (Lightning writes train and val metrics on different rows), not
NaN; a cell that says ``nan`` is NaN. Header names keep the spelling of the file, padding trimmed.
"""

from __future__ import annotations

import bisect
import contextlib
import csv
import itertools
import math
import operator
import re
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.accel import CSCAN
from ..core.lines import lines_within, split_lines
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
    chunk = None if CSCAN is not None else 1 << 20  # the pure read's cells of a chunk held in the caches

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()
        self._series: list[Series | None] = []

    def scan(self, text: str, first_line: int) -> None:
        if CSCAN is None:
            self._scan_pure(text, first_line)
        elif text.isascii():  # isascii: a flag of the str, no scan
            self._scan_text(text, first_line)
        else:
            self._scan_lines(text, first_line)

    def _scan_pure(self, text: str, first_line: int) -> None:
        """The pure path: the chunk's complete lines read a column at a time from the text itself (_plain_text) when
        every row is plain, else (and the partial line a growing log ends with) from its list of lines
        (_read_lines), which reads the plain runs a column at a time and the rest row by row."""
        pos, line = 0, first_line
        if self.state.header is None:
            pos, line = self._header_at(text, first_line)
            if pos < 0:
                return
        bufs = self._buffers()
        end = text.rfind("\n") + 1
        if end > pos:
            breaks = self.breaks  # the feed's counts of the chunk's "\n" and "\r": text[pos:end]'s are fewer by the
            if breaks is not None:  # header's (and blank lines before it) and the partial line's
                tail = text.count("\r", end) if end < len(text) else 0
                head = (text.count("\n", 0, pos), text.count("\r", 0, pos)) if pos else (0, 0)
                breaks = (breaks[0] - head[0], breaks[1] - head[1] - tail)
                # _plain_text reads the rows only when each "\r" there is followed by "\n": then all the text's are
                self.paired = not tail and head[1] == (text.count("\r\n", 0, pos) if pos else 0)
            rows = self._plain_text(text[pos:end] if pos or end < len(text) else text, line, bufs, breaks)
            if rows >= 0:
                pos, line = end, line + rows
            else:
                self.paired = False
        if pos < len(text):
            self._read_lines(split_lines(text[pos:] if pos else text), 0, line, bufs)
        self._extend(bufs)

    def _header_at(self, text: str, first_line: int) -> tuple[int, int]:
        """The header read from the chunk's first line that is not blank: (the offset and the line just after it),
        or (-1, first_line) when the chunk has none."""
        ends: list[int] = []
        for k, ln in enumerate(_lines_at(text, 0, ends)):
            if ln.strip():
                self._header(_header_cells(ln))
                return ends[k], first_line + k + 1
        return -1, first_line

    def _scan_lines(self, text: str, first_line: int) -> None:
        """A chunk with non-ASCII text, on the compiled path: as a list of lines, the compiled scanner reading its
        plain rows from the list (csv_rows), csv.reader the others."""
        st: _State = self.state
        lines = split_lines(text)
        start = 0
        if st.header is None:
            while start < len(lines) and not lines[start].strip():
                start += 1
            if start >= len(lines):
                return
            self._header(_header_cells(lines[start]))
            start += 1
        bufs = self._buffers()
        i, n = start, len(lines)
        while i < n:  # the plain rows in C; it stops at a row csv.reader and float() must read
            i, st.rows = CSCAN.csv_rows(lines, i, first_line, st.step_col, st.wall_col, st.rows, bufs)
            if i < n:
                i += self._rows(itertools.islice(lines, i, None), first_line + i, bufs, upto=1)
        self._extend(bufs)

    def _read_lines(self, lines: list[str], start: int, first_line: int, bufs: list[_Buf | None]) -> None:
        """The pure path's rows from ``lines[start]`` on (``lines[0]`` on physical line ``first_line``): each run of
        plain lines (see _odd_lines) read a column at a time by _plain_rows; each run of the other lines, and any
        row going on past it (a quoted cell holding a line break), by csv.reader in _rows, as before."""
        odd = _odd_lines(lines, start, len(self._series))
        i, n, b = start, len(lines), 0
        while i < n:
            b = bisect.bisect_left(odd, i, b)
            j = odd[b] if b < len(odd) else n
            if j > i:
                self._plain_rows(lines, i, j, first_line, bufs)
                i = j
                continue
            e = b  # the run of odd lines from i: csv.reader reads the rows that start in it
            while e + 1 < len(odd) and odd[e + 1] == odd[e] + 1:
                e += 1
            i += self._rows(itertools.islice(lines, i, None), first_line + i, bufs, upto=odd[e] + 1 - i)

    def _scan_text(self, text: str, first_line: int) -> None:
        """An ASCII chunk read by the compiled scanner from its text (csv_text: no list of lines, no "\\r\\n"
        rewritten, which were a third of the 100 MB CSV read), each row it leaves read by _rows from lines split
        there as split_lines splits them, so both give the series _scan_lines gives."""
        st: _State = self.state
        pos, line, n = 0, first_line, len(text)
        if st.header is None:
            pos, line = self._header_at(text, first_line)
            if pos < 0:
                return
        bufs = self._buffers()
        while pos < n:
            pos, line, st.rows = CSCAN.csv_text(text, pos, line, st.step_col, st.wall_col, st.rows, bufs)
            if pos >= n:
                break
            ends = []
            used = self._rows(_lines_at(text, pos, ends), line, bufs, upto=1)
            pos, line = ends[used - 1], line + used
        self._extend(bufs)

    def _buffers(self) -> list[_Buf | None]:
        """A chunk's points (steps, values, lines, walls) per column, added to their series at its end (no call
        per value), and the column's name; arrays, which the compiled scanner fills a column at a time."""
        header = self.state.header or []
        return [(array("d"), array("d"), array("I"), array("d"), name) if s is not None else None
                for s, name in zip(self._series, header, strict=True)]

    def _extend(self, bufs: list[_Buf | None]) -> None:
        """The chunk's points to their series."""
        timed = self.state.wall_col >= 0
        for s, buf in zip(self._series, bufs, strict=True):
            if s is not None and buf is not None and buf[0]:
                self._add(s, buf[0], buf[1], buf[2], buf[3] if timed else None)

    def _add(self, s: Series, steps: array, values: array, lines: array, walls: array | None) -> None:
        """Points to series ``s``. Without a wall-time column (``walls`` None) every wall is NaN: the compiled
        scanner buffers none (8 of the 28 bytes a point it wrote), the Python loop's are not looked at
        (``timed=False``); a series already holding wall times (none does: this reader gives them only with a time
        column) would get a NaN a point."""
        if walls is None:
            walls = array("d", [math.nan]) * len(steps) if s.walls else array("d")
        s.extend(steps, values, lines, walls, timed=None if self.state.wall_col >= 0 else False)

    def _rows(self, lines: Iterator[str], base: int, bufs: list[_Buf | None], upto: int = 0) -> int:
        """The rows of ``lines`` (the first on physical line ``base``) through csv.reader: those that start in its
        first ``upto`` lines when ``upto`` > 0 (the rows after are the compiled scanner's, or _plain_rows'), else
        all; returns how many lines were read (more than ``upto`` when its last row goes on past them)."""
        st: _State = self.state
        rows = csv.reader(ln + "\n" for ln in lines)
        line_no = base
        while (row := _next_row(rows)) is not _END:
            row_line, line_no = line_no, base + rows.line_num
            if upto and row_line >= base + upto:  # the row after those asked for: the lines used end where it starts
                return row_line - base
            if row is None:
                self.log.problem(f"line {row_line}: a cell is longer than csv's field limit "
                                 f"({csv.field_size_limit():,} characters); the row was skipped", row_line)
                continue
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

    def _plain_text(self, text: str, line: int, bufs: list[_Buf | None], breaks: tuple[int, int] | None = None) -> int:
        """The complete lines ``text`` (the first on physical line ``line``) read by _take when every one is a plain
        row: the header's number of cells split at every comma, all ended by "\\n" or all by "\\r\\n", no quote,
        NUL or over-long line (see _odd_lines). ``breaks``: (the "\\n" and the "\\r" in ``text``) when the feed
        counted them (FormatReader.breaks), else counted here. One split at the commas gives the cells: a row's last
        cell and the next row's first share a piece, which holds the row's only break (the count of breaks says no
        other does; each "\\r" is checked to be followed by its "\\n", which the feed relies on: ``paired``).
        Returns the rows read, or -1: not every row is plain (or _take declined a cell), nothing read."""
        nc = len(bufs)  # a NUL: none in what the feed counted (it dropped them), else looked for
        if nc < 2 or '"' in text or (breaks is None and "\0" in text) or not lines_within(text, csv.field_size_limit()):
            return -1
        n, crs = breaks or (text.count("\n"), text.count("\r"))
        if crs and crs != n:  # every "\r" ends a row before its "\n" (the pieces holding a break say where)
            return -1
        brk = "\r\n" if crs else "\n"
        pieces = text.split(",")
        if len(pieces) != n * (nc - 1) + 1:
            return -1
        bound = pieces[nc - 1::nc - 1]
        st: _State = self.state
        cols: dict[int, list[str]] = {}
        first = bufs[0] is not None or 0 in (st.step_col, st.wall_col)
        last = bufs[nc - 1] is not None or nc - 1 in (st.step_col, st.wall_col)
        if last and not first:  # the last cells alone: most are blank in a Lightning metrics.csv (validation's)
            cells = _last_cells(bound, brk)
            if cells is None:
                return -1
            if cells:
                cols[nc - 1] = cells
        if not first and not last:
            if _joined(bound, brk) is None:
                return -1
        elif nc - 1 not in cols:
            if not all(map(operator.contains, bound, itertools.repeat(brk))):
                return -1
            ends = brk.join(bound).split(brk)  # row 1's last cell, row 2's first, row 2's last, ..., row n's last, ""
            cols[0] = [pieces[0], *ends[1:2 * n - 1:2]]
            cols[nc - 1] = ends[0:2 * n:2]

        def column(k: int) -> list[str]:
            got = cols.get(k)
            return pieces[k:(nc - 1) * n:nc - 1] if got is None else got

        return n if self._take(column, n, line, bufs, self._series) else -1

    def _plain_rows(self, lines: list[str], i: int, j: int, first_line: int, bufs: list[_Buf | None]) -> None:
        """Rows ``lines[i:j]``, each of the header's number of cells split at every comma (_odd_lines' plain lines),
        read by _take from one split of their joined text, a column's cells every ``len(bufs)``-th. Rows _take
        declines (a step float() refuses) are halved, and each half tried again, down to 64 rows that csv.reader
        reads (_rows): one odd step costs about three reads of the rows, not all of them read row by row. After
        32 declines (odd steps everywhere) csv.reader reads each part _take declines as it is."""
        nc, misses = len(bufs), 0
        parts = [(i, j)]
        while parts:
            a, b = parts.pop()
            cells = ",".join(lines[a:b]).split(",")
            if self._take(lambda k, cells=cells: cells[k::nc], b - a, first_line + a, bufs):
                continue
            misses += 1
            if b - a <= 64 or misses > 32:
                self._rows(itertools.islice(lines, a, b), first_line + a, bufs)
            else:
                parts += [((a + b) // 2, b), (a, (a + b) // 2)]  # the first half next: rows are read in order

    def _take(self, column: Callable[[int], list[str]], m: int, line: int, bufs: list[_Buf | None],
              into: list[Series | None] | None = None) -> bool:
        """``m`` plain rows (the first on physical line ``line``), column ``k``'s cells ``column(k)``, read a column
        at a time in C-level calls (a Python loop a cell was 8.4 s of the 100 MB sparse Lightning metrics.csv's
        9.9 s). A column's blank cells (an absent value: most of a sparse Lightning metrics.csv) counted first: a
        column blank in every row is not looked at again; one of few blanks has its non-blank cells read by
        map(float), their steps and lines copied a span between blanks at a time; one of many blanks (a
        validation metric) is read where it is not blank: at the rows where a column of few blanks is blank (a
        Lightning train metric's: the validation and epoch rows), when those hold all of its cells that are not
        blank (its count of blanks says so), else where itertools.compress finds them. A column holding a cell
        float() refuses is read a cell at a time (_odd_column) as _rows reads it, the first odd cell of each column
        reported in row order. A step float() refuses (the row is skipped) declines the rows (False, nothing added):
        csv.reader reads them row by row (_rows). ``into``: the series themselves, when no point of the chunk is
        buffered before these rows (_plain_text's): the points go there without a copy to the buffers."""
        st: _State = self.state
        try:
            steps = _steps(column(st.step_col)) if st.step_col >= 0 else array("d", range(st.rows, st.rows + m))
        except ValueError:
            return False
        walls = _walls(column(st.wall_col)) if st.wall_col >= 0 else None
        # (column, buffers, values, the rows of its blank cells when few, else None, and then the rows of its values)
        taken: list[tuple[int, _Buf, array, list[int] | None, list[int] | None]] = []
        sparse, odd = [], []
        gaps_seen: set[int] = set()
        known: list[list[int]] = []
        for k, buf in enumerate(bufs):
            if buf is None:
                continue
            cells = column(k)
            # Few blanks, likely (a train metric): found by list.index, no pass counting them. Else counted.
            gaps = _blank_rows(cells, (m - 1) >> 3) if cells[:64].count("") <= 8 else None
            if gaps is None:
                blanks = cells.count("")
                if blanks == m:  # a column blank in every row of the chunk: no value
                    continue
                if blanks * 8 >= m:
                    sparse.append((k, buf, cells, blanks))
                    continue
                gaps = _blank_rows(cells, blanks)
            try:
                values = array("d", list(map(float, filter(None, cells) if gaps else cells)))
            except ValueError:
                values, cells, first = _odd_column(cells)
                odd += [(first[0], k, first[1])] if first else []
                taken.append((k, buf, values, *_rows_of(cells, m)))
                continue
            # A Lightning train metric is blank where the others are (the validation and epoch rows): one list of
            # them for both, whose steps and lines are picked once (by its id).
            same = next((g for g in known if g == gaps), None)
            if same is None:
                known.append(gaps)  # type: ignore[arg-type]
                gaps_seen.update(gaps)  # type: ignore[arg-type]
            taken.append((k, buf, values, same or gaps, None))
        near = sorted(gaps_seen) if sparse and len(gaps_seen) * 8 < m else []
        for k, buf, cells, blanks in sparse:
            where = list(filter(cells.__getitem__, near))
            if len(where) != m - blanks:  # not all of them where a column of few blanks is blank
                where = list(itertools.compress(range(m), cells))
            try:
                values = array("d", list(map(float, map(cells.__getitem__, where))))
            except ValueError:
                values, cells, first = _odd_column(cells)
                odd += [(first[0], k, first[1])] if first else []
                where = list(itertools.compress(range(m), cells))
            taken.append((k, buf, values, None, where))
        for i, k, cell in sorted(odd):  # as _rows meets them: by row, then by column
            self._not_a_number(bufs[k][4], cell, line + i)  # type: ignore[index]
        st.rows += m
        self._put(taken, [steps, array("I", range(line, line + m)), walls], m, into)
        return True

    def _put(self, taken: list[tuple[int, _Buf, array, list[int] | None, list[int] | None]],
             rows: list[array | None], m: int, into: list[Series | None] | None) -> None:
        """The columns ``taken`` (column, buffers, values, the rows of its few blank cells or None, and then the
        rows of its values) with their steps, lines and walls (``rows``: every row's) to their buffers, or to
        their series themselves (``into``)."""
        spans: dict[int, list[array | None]] = {}  # by id(gaps): a list of gaps is shared by the columns it fits
        for k, buf, values, gaps, where in taken:
            if not values:
                continue
            if where is not None:
                got = [r if r is None else array(r.typecode, list(map(r.__getitem__, where))) for r in rows]
            else:
                got = rows if not gaps else spans.get(id(gaps)) or spans.setdefault(id(gaps), _spans(rows, gaps, m))
            if into is not None:
                self._add(into[k], got[0], values, got[1], got[2])  # type: ignore[arg-type]
                continue
            buf[0].extend(got[0])  # type: ignore[arg-type]
            buf[1].extend(values)
            buf[2].extend(got[1])  # type: ignore[arg-type]
            if got[2] is not None:
                buf[3].extend(got[2])

    def _odd_cell(self, raw: str, name: str, line: int) -> float | None:
        """A cell float() refused: padded or quoted numbers are read; blank ones are absent values; anything
        else is reported once per column and ignored (None)."""
        got = _refused(raw)
        if isinstance(got, str):
            self._not_a_number(name, got, line)
            return None
        return got

    def _not_a_number(self, name: str, cell: str, line: int) -> None:
        """A cell that is no number, reported once per column name."""
        if name not in self.state.bad_columns:
            self.state.bad_columns.add(name)
            self.log.problem(f"column `{name}` holds {cell!r}, not a number; such cells are ignored", line)

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


def _header_cells(line: str) -> list[str]:
    """The header's cells. One past csv's field limit leaves no column a name: the file's problem (ValueError, one
    of READ_ERRORS: NOT-CHECKED with this reason), not the check's (csv.Error ended it, hiding every other run)."""
    try:
        return next(csv.reader([line]))
    except csv.Error:
        raise ValueError(f"its header has a cell longer than csv's field limit ({csv.field_size_limit():,} "
                         "characters)") from None


_END: list[str] = []


def _next_row(rows: Iterator[list[str]]) -> list[str] | None:
    """csv.reader's next row; None for a row with a cell past csv's field limit, for which csv.reader raises
    `csv.Error` (and reads on from the next line): it ended the whole check and hid every other run's findings.
    `_END` (by identity) after the last row."""
    try:
        return next(rows)
    except StopIteration:
        return _END
    except csv.Error:
        return None


def _steps(cells: list[str]) -> array:
    """A step column's cells as float() reads them (ValueError when it refuses one). float() itself: int() first
    (a step is an integer) was slower on the 100 MB Lightning metrics.csv's 1.8 M steps (0.23 s with the array of
    doubles made of the ints, float() 0.15 s), and needed "-0" (float(): -0.0) set apart."""
    return array("d", list(map(float, cells)))


def _walls(cells: list[str]) -> array:
    """A wall-time column's cells as _rows reads them: NaN where float() refuses one (blank, or not a number)."""
    try:
        return array("d", list(map(float, cells)))
    except ValueError:
        return array("d", list(map(_wall, cells)))


def _blank_rows(cells: list[str], most: int) -> list[int] | None:
    """The rows of a column's blank cells, found by list.index (a Python step a blank, not a cell); None when there
    are more than ``most``."""
    gaps, at = [], -1
    with contextlib.suppress(ValueError):
        while True:
            at = cells.index("", at + 1)
            if len(gaps) == most:
                return None
            gaps.append(at)
    return gaps


def _rows_of(cells: list[str], m: int) -> tuple[list[int] | None, list[int] | None]:
    """(the rows of its blank cells, None) for a column of few blanks, (None, the rows of the others) else."""
    blanks = cells.count("")
    if blanks * 8 < m:
        return _blank_rows(cells, blanks), None
    return None, list(itertools.compress(range(m), cells))


def _spans(rows: list[array | None], gaps: list[int], m: int) -> list[array | None]:
    """``rows``' items but at the rows ``gaps`` (ascending: a column's few blank cells), copied a span between
    them at a time."""
    spans = []
    start = 0
    for at in gaps:
        if at > start:
            spans.append((start, at))
        start = at + 1
    if start < m:
        spans.append((start, m))
    got: list[array | None] = []
    for r in rows:
        if r is not None:
            out = array(r.typecode)
            for a, b in spans:
                out += r[a:b]
            got.append(out)
        else:
            got.append(None)
    return got


_NOT_HELD = bytes(b for b in range(256) if b not in b"\0\r\n")
_CELL_BEFORE = {brk: re.compile("\0(?!" + brk + ")") for brk in ("\n", "\r\n")}  # a piece not starting with brk


def _joined(bound: list[str], brk: str) -> str | None:
    """``bound`` joined by NULs (the text has none) when each piece holds one break ``brk`` and no other "\\r" or
    "\\n" (a row of the header's number of cells), else None: the breaks and NULs of the joined text alone
    (bytes.translate) compared with what they must be, and each "\\r" followed by its "\\n" (str.count: the
    translate drops what stands between), instead of a call a piece."""
    joined = "\0".join(bound)
    held = brk.encode()
    if joined.encode().translate(None, _NOT_HELD) != (held + b"\0") * (len(bound) - 1) + held:
        return None
    return joined if len(brk) == 1 or joined.count(brk) == len(bound) else None


def _last_cells(bound: list[str], brk: str) -> list[str] | None:
    """The rows' last cells, from the pieces holding their breaks (``bound``: a row's last cell, its break, the next
    row's first cell), when few are not blank (a Lightning metrics.csv's last column, a validation metric): the pieces
    that do not start with the break found by a search of the pieces joined (_joined), each cut alone (a join and
    split of every piece, then a call a piece, were 0.13 s of the 100 MB file's read). None when a piece holds no
    break or more (a row has more or fewer cells than the header); [] when more than one in 8 is not blank (the
    caller's join and split of the pieces is the quicker)."""
    joined = _joined(bound, brk)
    if joined is None:
        return None
    n = len(bound)
    first = not bound[0].startswith(brk)
    if (n - 1 - joined.count("\0" + brk) + first) * 8 > n:
        return []
    cells = [""] * n
    if first:
        cells[0] = bound[0].partition(brk)[0]
    i = prev = 0
    for m in _CELL_BEFORE[brk].finditer(joined):
        i += joined.count("\0", prev, m.end())
        prev = m.end()
        cells[i] = bound[i].partition(brk)[0]
    return cells


def _odd_column(cells: list[str]) -> tuple[array, list[str], tuple[int, str] | None]:
    """A column holding a cell float() refuses, read a cell at a time as _rows and _odd_cell read it: (its values,
    its cells with "" where no value was read, the row and text of its first cell that is no number)."""
    values, kept, first = array("d"), [""] * len(cells), None
    for i, raw in enumerate(cells):
        if not raw:
            continue
        try:
            values.append(float(raw))
        except ValueError:
            got = _refused(raw)
            if got is None:
                continue
            if isinstance(got, str):
                first = first or (i, got)
                continue
            values.append(got)
        kept[i] = raw
    return values, kept, first


def _refused(raw: str) -> float | str | None:
    """A cell float() refused, as _rows and the column read both take it: a padded or quoted number's value, None
    for a blank cell (an absent value), else the stripped text of a cell that is no number."""
    cell = raw.strip()
    if not cell:
        return None
    try:
        return parse_number(cell)
    except ValueError:
        return cell


def _wall(cell: str) -> float:
    """A wall-time cell as _rows reads it: NaN where float() refuses it (blank, or not a number)."""
    try:
        return float(cell)
    except ValueError:
        return math.nan


def _odd_lines(lines: list[str], start: int, columns: int) -> list[int]:
    """The indexes (from ``start``, ascending) of the lines csv.reader must read: every line but the plain ones,
    which hold the header's number of cells (``columns`` - 1 commas, two at least: a line of one cell may be blank,
    no row) and no quote or NUL, and are no longer than csv's field limit (it raises on a longer cell). Found per
    chunk in C-level passes (str.count a line by map; the lines holding a quote or NUL, or too long, listed only
    when there is one)."""
    if columns < 2:
        return list(range(start, len(lines)))
    rest = lines[start:] if start else lines
    at = range(start, len(lines))
    counts = list(map(str.count, rest, itertools.repeat(",")))
    odd = set()
    if counts.count(columns - 1) != len(counts):
        odd.update(itertools.compress(at, map(operator.ne, counts, itertools.repeat(columns - 1))))
    for c in ('"', "\0"):
        if any(map(operator.contains, rest, itertools.repeat(c))):
            odd.update(itertools.compress(at, map(operator.contains, rest, itertools.repeat(c))))
    limit = csv.field_size_limit()
    if rest and max(map(len, rest)) > limit:
        odd.update(itertools.compress(at, map(limit.__lt__, map(len, rest))))
    return sorted(odd)


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
