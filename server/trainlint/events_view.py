"""A text view of a TensorBoard event file: one scalar per line, so findings have a line to sit on.

``trainlint events FILE`` prints it, and the language server serves it as ``trainlint/renderEvents``
and publishes the event file's diagnostics on it. Line 1 is a header; each following line is
``step<TAB>tag<TAB>value<TAB>wall_time<TAB>record``.

The view keeps which point each line shows (three integer arrays), not the text: a growing 22 MB event
file has 900,000 lines, and a publish needs the lines of a few findings. Lines are written when asked
for, and a view grows with its log (:meth:`EventsView.extend` reads only the new points).
"""

from __future__ import annotations

import math
import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .core.model import LogFile, Series
from .core.values import fmt_step


@dataclass(eq=False)
class EventsView:
    name: str = ""
    member: int | None = None          # the member file shown (None: every member)
    keys: list[str] = field(default_factory=list)  # series order -> key
    series: array = field(default_factory=lambda: array("l"))    # per row: the series order
    points: array = field(default_factory=lambda: array("q"))    # per row: the point index in that series
    records: array = field(default_factory=lambda: array("q"))   # per row: the record (non-decreasing)
    seen: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # key -> (order, points in view, last record)
    source: object = None                                         # the log's series dict the view was made from

    def __len__(self) -> int:
        """Lines, the header included."""
        return len(self.points) + 1

    def point_at(self, line: int) -> tuple[str, int] | None:
        """(series key, point index) shown on a 1-based line."""
        row = line - 2
        if not 0 <= row < len(self.points):
            return None
        return self.keys[self.series[row]], self.points[row]

    def line_of(self, rec: int, key: str) -> int | None:
        """The line of ``key``'s scalar in record ``rec`` (a view of one member: records increase down it)."""
        lo, hi = bisect_left(self.records, rec), bisect_right(self.records, rec)
        for row in range(lo, hi):
            if self.keys[self.series[row]] == key:
                return row + 2
        return None

    def first_line_of(self, rec: int) -> int | None:
        row = bisect_left(self.records, rec)
        return row + 2 if row < len(self.records) and self.records[row] == rec else None

    def line(self, log: LogFile, line: int) -> str:
        if line == 1:
            return f"# trainlint view of {self.name}: {len(self.points)} scalars (step, tag, value, wall time, record)"
        hit = self.point_at(line)
        if hit is None or hit[0] not in log.series:
            return ""
        s = log.series[hit[0]]
        return _row(s, hit[1], self.records[line - 2])

    def lines(self, log: LogFile) -> Iterator[str]:
        for n in range(1, len(self) + 1):
            yield self.line(log, n)

    def extend(self, log: LogFile) -> bool:
        """Add the points read since the view was made; False when the log was read again from the top, a
        point the view shows was taken back, or a new point belongs before the view's end: make it again."""
        if self.source is not None and self.source is not log.series:
            return False
        self.source = log.series
        rows = []
        for s in log.series.values():
            order, start, last = self.seen.get(s.key, (len(self.keys), 0, -1))
            if len(s) < start or (start and (s.records[start - 1] if len(s.records) >= start else -1) != last):
                return False
            if len(s) == start:
                continue
            if order == len(self.keys):
                self.keys.append(s.key)
            self.seen[s.key] = (order, len(s), s.records[-1] if len(s.records) == len(s) else -1)
            for i in range(start, len(s)):
                f = s.files[i] if len(s.files) > i else 0
                if self.member is None or f == self.member:
                    rows.append((f, s.records[i] if len(s.records) > i else -1, order, i))
        if not rows:
            return True
        rows.sort()
        if self.records and rows[0][1] < self.records[-1]:
            return False
        for _f, rec, order, i in rows:
            self.series.append(order)
            self.points.append(i)
            self.records.append(rec)
        return True


def _wall(w: float) -> str:
    if not math.isfinite(w):
        return "-"
    return datetime.fromtimestamp(w, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _row(s: Series, i: int, rec: int) -> str:
    return f"{fmt_step(s.steps[i])}\t{s.name}\t{s.values[i]!r}\t{_wall(s.wall(i))}\t{rec}"


def render(log: LogFile, member: str | None = None) -> EventsView:
    """The view of one member file of ``log`` (every member, sorted by file then record, when None)."""
    want = None if member is None else (log.members.index(member) if member in log.members else -1)
    view = EventsView(name=os.path.basename(member or log.path), member=want)
    view.extend(log)
    return view
