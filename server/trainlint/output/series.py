"""``trainlint series``: every series read from a file, with where its points are."""

from __future__ import annotations

import io
import math
import os
from typing import TYPE_CHECKING

from ..core.model import Location, LogFile, Series
from ..core.roles import direction
from ..core.values import clean, fmt_step, fmt_value, json_number, json_step

if TYPE_CHECKING:
    from typing import Any


def _told(loc: Location, maps: dict[str, Any] | None) -> Location:
    """``loc`` in the lines the caller counts: ``\\n`` lines (grep -n's, as ``check`` tells them) when ``maps`` is
    given (``core.linemap``'s maps, one per file), else the readers' lines (a lone ``\\r`` is a break, the LSP's)."""
    if maps is None:
        return loc
    from ..core.linemap import shift_location  # start-up: only for the lines the CLI tells

    return shift_location(loc, maps)


def _line(log: LogFile, line: int | None, maps: dict[str, Any] | None) -> int | None:
    return _told(Location(log.path, line), maps).line if line else line


def _point(log: LogFile, s: Series, i: int, lines: dict[int, str] | None = None,
           maps: dict[str, Any] | None = None) -> dict[str, Any]:
    line = s.lines[i] if len(s.lines) > i else 0
    text = lines.get(line) if lines is not None and not s.member and not (s.records and s.records[i] >= 0) else None
    loc = _told(log.locate(s, i, text), maps)
    d: dict[str, Any] = {"step": json_step(s.steps[i]), "value": json_number(s.values[i]),
                         "line": loc.line, "column": loc.column}
    if loc.record is not None:
        d["record"] = loc.record
        d["offset"] = loc.offset
        d["file"] = os.path.basename(loc.path)
    return d


def min_index(s: Series) -> int | None:
    best = None
    for i, v in enumerate(s.values):
        if math.isfinite(v) and (best is None or v < s.values[best]):
            best = i
    return best


def series_dict(log: LogFile, s: Series, lines: dict[int, str] | None = None,
                maps: dict[str, Any] | None = None) -> dict[str, Any]:
    n = len(s)
    mi = min_index(s)
    return {
        "name": s.name,
        "role": s.role.value,
        "aggregation": s.aggregation.value,
        "component": s.component,
        "role_source": s.role_source,
        "step_basis": s.step_basis,
        "direction": direction(s.name, s.role),
        "points": n,
        "first": _point(log, s, 0, lines, maps) if n else None,
        "last": _point(log, s, n - 1, lines, maps) if n else None,
        "min": _point(log, s, mi, lines, maps) if mi is not None else None,
    }


BATCH_LOOKUPS = 64  # more located lines than this: one pass over the file instead of a lookup per line


def _wanted_lines(log: LogFile) -> dict[int, str] | None:
    """The text of every line a point of the listing sits on, read in one pass over the file when there are
    many (a JSONL with a new key per line has three per key; a lookup each read 64 KB around it)."""
    want: set[int] = set()
    for s in log.series.values():
        n = len(s)
        if not n or s.member or len(s.lines) < n:
            continue
        mi = min_index(s)
        for i in {0, n - 1} | ({mi} if mi is not None else set()):
            if not (s.records and s.records[i] >= 0) and s.lines[i] > 0:
                want.add(s.lines[i])
    if len(want) <= BATCH_LOOKUPS or os.path.isdir(log.path):
        return None
    from ..core.fsio import open_regular  # start-up: only for the lines a JSON listing shows

    out: dict[int, str] = {}
    last = max(want)
    encoding = log.facts.get("_encoding", "utf-8")
    try:
        with open_regular(log.path) as raw, io.TextIOWrapper(raw, encoding, errors="replace", newline=None) as f:
            # universal newlines: \r\n, \n and a lone \r each end a line, as split_lines counts them
            for n, line in enumerate(f, 1):
                if n in want:
                    out[n] = line.rstrip("\n").removeprefix("\ufeff") if n == 1 else line.rstrip("\n")
                if n >= last:
                    break
    except OSError:
        return None
    return out


def file_dict(log: LogFile, maps: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON listing of ``log``; with ``maps`` its lines are ``\\n`` lines (see ``_told``)."""
    lines = _wanted_lines(log)
    return clean({
        "path": log.path,
        "format": log.format,
        "members": [os.path.basename(m) for m in log.members] or None,
        "series": [series_dict(log, s, lines, maps) for s in log.series.values()],
        "events": [{"kind": e.kind.value, "step": json_step(e.step), "line": _line(log, e.line, maps),
                    "record": e.record, "text": e.text} for e in log.events],
        "problems": [{"line": _line(log, p.line, maps), "record": p.record, "message": p.message}
                     for p in log.problems],
        "facts": {k: v for k, v in log.facts.items() if not k.startswith("_") and k != "columns"},
    })


# Where a series' steps come from, said on every line (a log without step numbers still has findings to find).
_BASIS = {"step": "steps", "progress-bar": "progress-bar steps", "epoch": "epochs", "index": "log entries",
          "epoch+iteration": "iterations laid end to end over epochs", "row": "table rows"}


def render_text(log: LogFile, rel: str, maps: dict[str, Any] | None = None) -> list[str]:
    """The text listing of ``log``; with ``maps`` its lines are ``\\n`` lines (see ``_told``)."""
    out = [f"{rel}  [{log.format}]  {len(log.series)} series, {len(log.events)} events, "
           f"{len(log.problems)} problems"]
    for s in log.series.values():
        n = len(s)
        if not n:
            continue
        first, last = _told(log.locate(s, 0), maps), _told(log.locate(s, n - 1), maps)
        where = (f"lines {first.line}-{last.line}" if first.line is not None
                 else f"records {first.record}-{last.record}")
        comp = ", component" if s.component else ""
        cfg = ", role from config" if s.role_source != "default" else ""
        way = direction(s.name, s.role)
        cfg += f", {way}" if way != "-" else ""
        out.append(f"  {s.name!s:40} {s.role.value:13} {s.aggregation.value:15} {n:7d} pts  "
                   f"{_BASIS.get(s.step_basis, s.step_basis)} {fmt_step(s.steps[0])}..{fmt_step(s.steps[n - 1])}  "
                   f"last {fmt_value(s.values[n - 1])}  {where}{comp}{cfg}")
    for e in log.events:
        where = f"line {_line(log, e.line, maps)}" if e.line is not None else f"record {e.record}"
        out.append(f"  event {e.kind.value:15} step {fmt_step(e.step):>8}  {where}: {e.text[:100]}")
    for p in log.problems:
        where = (f"line {_line(log, p.line, maps)}: " if p.line
                 else f"record {p.record}: " if p.record is not None else "")
        out.append(f"  problem {where}{p.message}")
    return out
