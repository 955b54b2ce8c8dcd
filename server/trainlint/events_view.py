"""A text view of a TensorBoard event file: one scalar per line, so findings have a line to sit on.

``trainlint events FILE`` prints it, and the language server serves it as ``trainlint/renderEvents``
and publishes the event file's diagnostics on it. Line 1 is a header; each following line is
``step<TAB>tag<TAB>value<TAB>wall_time<TAB>record``.
"""

from __future__ import annotations

import math
import os
from datetime import UTC, datetime

from ._record import field, record
from .model import LogFile
from .output.values import fmt_step


@record
class EventsView:
    lines: list[str] = field(default_factory=list)
    # (record, series key) -> line, and the first line of each record
    line_by_record: dict[tuple[int, str], int] = field(default_factory=dict)
    first_line_of_record: dict[int, int] = field(default_factory=dict)
    # 1-based line -> (series key, point index)
    point_at: dict[int, tuple[str, int]] = field(default_factory=dict)


def _wall(w: float) -> str:
    if not math.isfinite(w):
        return "-"
    return datetime.fromtimestamp(w, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def render(log: LogFile, member: str | None = None) -> EventsView:
    """The view of one member file of ``log`` (all members when ``member`` is None)."""
    want = None if member is None else (log.members.index(member) if member in log.members else -1)
    rows = []
    for order, s in enumerate(log.series.values()):
        for i in range(len(s)):
            f = s.files[i] if len(s.files) > i else 0
            if want is not None and f != want:
                continue
            rows.append((f, s.records[i] if len(s.records) > i else -1, order, s, i))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    name = os.path.basename(member or log.path)
    view = EventsView([f"# trainlint view of {name}: {len(rows)} scalars (step, tag, value, wall time, record)"])
    for _file, rec, _, s, i in rows:
        line = len(view.lines) + 1
        view.line_by_record[(rec, s.key)] = line
        view.first_line_of_record.setdefault(rec, line)
        view.point_at[line] = (s.key, i)
        view.lines.append(f"{fmt_step(s.steps[i])}\t{s.name}\t{s.values[i]!r}\t{_wall(s.walls[i])}\t{rec}")
    return view
