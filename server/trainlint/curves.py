"""The curves of a judged log, with its findings placed on them: the data behind ``trainlint report`` and the
VS Code curves view (request ``trainlint/curves``).

One entry per judged series (a series some check measured, or one a finding names), its points thinned to at
most ``MAX_POINTS`` for drawing — every point a finding marks, every non-finite point and each bucket's lowest and
highest value are kept, so a single spike or NaN is never averaged away. Each finding brings what it compared:
its windows (evidence ``<name>_first``/``<name>_last`` step pairs), its marked points (the value it reports, the
minimum, the spike, the NaN…) and the resume seams of the log. Lines are told by ``tell_line`` (the CLI's
``\\n`` lines for the report, the client's lines for the editor), so a click lands where the user looks.

No plotting here: this is JSON for ``assets/curves.js``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .core.findings import Finding, Level
from .core.model import EventKind, LogFile, Series
from .core.report import Report
from .core.values import clean

MAX_POINTS = 4000
WINDOW_NAMES = {"end": "end window", "min": "lowest window", "start": "start window", "early": "early window",
                "late": "late window", "tail": "last evaluations", "best": "best"}
SEAM_KINDS = (EventKind.RESUME, EventKind.RESTART)
Teller = Callable[[str, int], int]


def _keep(s: Series, must: set[int]) -> list[int]:
    """Indices to draw: all of them up to MAX_POINTS, else first/last, ``must``, non-finite, each bucket's extremes."""
    n = len(s)
    if n <= MAX_POINTS:
        return list(range(n))
    vals = s.values
    keep = {0, n - 1, *must}
    buckets = MAX_POINTS // 2
    size = n / buckets
    for b in range(buckets):
        lo, hi = int(b * size), min(n, int((b + 1) * size))
        best_lo = best_hi = None
        for i in range(lo, hi):
            v = vals[i]
            if not math.isfinite(v):
                keep.add(i)
                continue
            if best_lo is None or v < vals[best_lo]:
                best_lo = i
            if best_hi is None or v > vals[best_hi]:
                best_hi = i
        keep.update(i for i in (best_lo, best_hi) if i is not None)
    return sorted(keep)


def _point_index(s: Series, loc_line: int | None, loc_record: int | None) -> int | None:
    if loc_record is not None and s.records:
        for i, r in enumerate(s.records):
            if r == loc_record:
                return i
        return None
    if loc_line is None:
        return None
    for i, ln in enumerate(s.lines):
        if ln == loc_line:
            return i
    return None


def _windows(f: Finding) -> list[dict[str, Any]]:
    vals = f.evidence.values
    out = []
    for k, v in vals.items():
        if not k.endswith("_first") or not isinstance(v, int | float):
            continue
        name = k[: -len("_first")]
        last = vals.get(name + "_last")
        if isinstance(last, int | float) and math.isfinite(v) and math.isfinite(last):
            out.append({"name": WINDOW_NAMES.get(name, name.replace("_", " ")), "from": float(v), "to": float(last)})
    return out


def _judged(rep: Report, log: LogFile) -> list[Series]:
    labels = {label for cov in rep.coverage.values() for label, why in cov.items() if why is None}
    named = {f.series_key for f in rep.findings if f.series_key}
    out = [s for s in log.series.values() if len(s) and (s.label in labels or s.key in named)]
    return out or [s for s in log.series.values() if len(s) and s.role.value != "other"]


def build(rep: Report, tell_line: Teller | None = None) -> dict[str, Any]:
    """The charts of one report (its log must still hold its points)."""
    log = rep.log
    tell = tell_line or (lambda _path, line: line)
    doc: dict[str, Any] = {"path": rep.path, "format": rep.format, "verdict": rep.verdict.value, "error": rep.error,
                           "series": [], "findings": [], "seams": [], "members": list(log.members) if log else []}
    if log is None:
        return clean(doc)
    charts = _judged(rep, log)
    by_key = {s.key: s for s in charts}
    marks: dict[str, set[int]] = {s.key: set() for s in charts}
    findings = [f for f in rep.findings if f.level in (Level.FAIL, Level.WARN, Level.INFO)]
    placed: list[tuple[Finding, list[tuple[str, int]]]] = []
    for f in findings:
        s = by_key.get(f.series_key or "")
        pts: list[tuple[str, int]] = []
        if s is not None:
            for role, loc in [("value", f.location), *((r.role, r.location) for r in f.related)]:
                i = _point_index(s, loc.line, loc.record)
                if i is not None:
                    pts.append((role, i))
                    marks[s.key].add(i)
            for i in f.marks:
                if i < len(s) and all(i != j for _, j in pts):
                    pts.append((f.marks[i], i))
                    marks[s.key].add(i)
        placed.append((f, pts))
    for s in charts:
        idx = _keep(s, marks[s.key])
        path = s.member or log.path
        lines = [tell(path, s.lines[i]) if len(s.lines) > i and s.lines[i] > 0 else None for i in idx]
        records = [s.records[i] for i in idx] if s.records else None
        vals = [s.values[i] for i in idx]
        doc["series"].append({
            "key": s.key, "name": s.name, "label": s.label.replace("`", ""), "role": s.role.value,
            "aggregation": s.aggregation.value, "basis": s.step_basis, "points": len(s),
            "path": path if not s.records else (log.members[s.files[0]] if log.members else log.path),
            "steps": [s.steps[i] for i in idx],
            "values": [v if math.isfinite(v) else None for v in vals],
            "nonfinite": [{"at": k, "value": str(v)} for k, v in enumerate(vals) if not math.isfinite(v)],
            "lines": lines, "records": records,
            "files": [s.files[i] for i in idx] if s.records and log.members else None,
        })
    for f, pts in placed:
        s = by_key.get(f.series_key or "")
        loc = f.location
        doc["findings"].append({
            "id": f.id, "level": f.level.value, "series": f.series_key if s is not None else None,
            "label": (f.series or "").replace("`", ""), "evidence": f.evidence.text, "message": f.message,
            "path": loc.path, "line": tell(loc.path, loc.line) if loc.line else None, "record": loc.record,
            "windows": _windows(f) if s is not None else [],
            "marks": [{"role": role, "step": s.steps[i], "value": s.values[i] if math.isfinite(s.values[i]) else None,
                       "nonfinite": None if math.isfinite(s.values[i]) else str(s.values[i]),
                       "line": tell(s.member or log.path, s.lines[i]) if len(s.lines) > i and s.lines[i] > 0
                       else None,
                       "record": s.records[i] if s.records else None} for role, i in pts] if s is not None else [],
        })
    for f, _pts in placed:  # a resume the rules found (a step that went back): its seam, on every chart
        if "RESUME" in f.id or "RESTART" in f.id:
            s = log.series.get(f.series_key or "")
            i = _point_index(s, f.location.line, f.location.record) if s is not None else None
            if s is not None and i is not None:
                doc["seams"].append({"kind": f.id, "step": s.steps[i],
                                     "line": tell(f.location.path, f.location.line) if f.location.line else None,
                                     "text": f.evidence.text[:160]})
    for e in log.events:
        if e.kind in SEAM_KINDS and e.step is not None:
            doc["seams"].append({"kind": e.kind.value, "step": e.step,
                                 "line": tell(log.path, e.line) if e.line else None, "text": e.text[:160]})
    return clean(doc)
