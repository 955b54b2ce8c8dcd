"""``trainlint check --format json`` (schema documented in docs/json.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import __version__
from ..core.findings import Finding
from ..core.model import Location
from ..core.report import Report, worst
from ..core.values import clean, json_step

if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1


def location(loc: Location) -> dict[str, Any]:
    d: dict[str, Any] = {"path": loc.path, "line": loc.line, "column": loc.column, "end_line": loc.end_line,
                         "end_column": loc.end_column}
    if loc.record is not None:
        d.update(record=loc.record, offset=loc.offset)
    return d


def finding(f: Finding) -> dict[str, Any]:
    return {
        "id": f.id,
        "level": f.level.value,
        "series": f.series,
        "message": f.message,
        "evidence": {"text": f.evidence.text, "values": dict(f.evidence.values)},
        "location": location(f.location),
        "related": [{"role": r.role, **{k: v for k, v in location(r.location).items() if k != "end_line"},
                     "message": r.message} for r in f.related],
    }


def report(rep: Report) -> dict[str, Any]:
    series = []
    if rep.log is not None:
        for s in rep.log.series.values():
            if len(s):
                series.append({"name": s.name, "role": s.role.value, "aggregation": s.aggregation.value,
                               "points": len(s), "first_step": json_step(s.steps[0]),
                               "last_step": json_step(s.steps[-1])})
    return {
        "path": rep.path,
        "format": rep.format,
        "verdict": rep.verdict.value,
        "live": rep.live,
        "series": series,
        "findings": [finding(f) for f in rep.findings],
        "checks": {
            "ran": list(rep.ran),
            "skipped": {k: {"reason": v.reason.value, "detail": v.detail} for k, v in rep.skipped.items()},
            "series": {check: {label: None if r is None else {"reason": r.reason.value, "detail": r.detail}
                               for label, r in cov.items()} for check, cov in rep.coverage.items()},
        },
        "measurements": [{"check": m.check, "series": m.series, "values": m.values, "text": m.text}
                         for m in rep.measurements],
        "problems": [] if rep.log is None else [{"line": p.line, "record": p.record, "message": p.message}
                                                for p in rep.log.problems],
        "error": rep.error,
        **({"baseline": rep.baseline} if rep.baseline else {}),
    }


def document(reports: list[Report], error: str | None = None,
             discovery: dict[str, Any] | None = None) -> dict[str, Any]:
    w = worst([r.verdict for r in reports])
    doc = {
        "schema_version": SCHEMA_VERSION,
        "trainlint_version": __version__,
        "reports": [report(r) for r in reports],
        "worst_verdict": w.value if w else None,
        "error": error,
    }
    if discovery is not None:
        doc["discovery"] = discovery
    return clean(doc)
