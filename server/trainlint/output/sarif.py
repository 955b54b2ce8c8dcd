"""``trainlint check --format sarif``: SARIF 2.1.0 on the real line and column of each finding."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..docs_links import rule_url
from ..judge import Report
from ..model import Location
from ..rules import RULES
from ..rules.base import Level
from .values import clean

if TYPE_CHECKING:
    from typing import Any

LEVELS = {Level.FAIL: "error", Level.WARN: "warning", Level.NOT_CHECKED: "warning", Level.INFO: "note",
          Level.PASS: "none"}


def _uri(path: str, base: str) -> str:
    try:
        r = os.path.relpath(path, base)
    except ValueError:
        return Path(path).resolve().as_uri()
    if r.startswith(".."):
        return Path(path).resolve().as_uri()
    return Path(r).as_posix()


def _physical(loc: Location, base: str) -> dict[str, Any]:
    art: dict[str, Any] = {"uri": _uri(loc.path, base)}
    if not art["uri"].startswith("file:"):
        art["uriBaseId"] = "%SRCROOT%"
    phys: dict[str, Any] = {"artifactLocation": art}
    if loc.record is not None and loc.offset is not None:
        phys["region"] = {"byteOffset": loc.offset}
    elif loc.line is not None:
        region: dict[str, Any] = {"startLine": loc.line}
        if loc.column is not None:
            region["startColumn"] = loc.column
        if loc.end_line is not None:
            region["endLine"] = loc.end_line
        if loc.end_column is not None:
            region["endColumn"] = loc.end_column
        phys["region"] = region
    return phys


def document(reports: list[Report], base: str | None = None) -> dict[str, Any]:
    base = os.path.abspath(base or os.getcwd())
    used: list[str] = []
    results = []
    for rep in reports:
        for f in rep.findings:
            if f.id not in used:
                used.append(f.id)
            result: dict[str, Any] = {
                "ruleId": f.id,
                "ruleIndex": used.index(f.id),
                "level": LEVELS[f.level],
                "message": {"text": f"{f.evidence.text} — {f.message}"},
                "locations": [{"physicalLocation": _physical(f.location, base)}],
                "properties": {"trainlintLevel": f.level.value, "series": f.series,
                               "evidence": dict(f.evidence.values), "interpretation": f.message,
                               **({"live": True} if rep.live else {})},
            }
            if f.level == Level.PASS:
                result["kind"] = "pass"
            if f.related:
                result["relatedLocations"] = [
                    {"id": i, "physicalLocation": _physical(r.location, base),
                     "message": {"text": f"{r.role}: {r.message}"}} for i, r in enumerate(f.related)]
            results.append(result)
    rules = []
    for rid in used:
        rule = RULES.get(rid)
        rules.append({
            "id": rid,
            "name": rid,
            "shortDescription": {"text": rule.title if rule else rid},
            "helpUri": rule_url(rid),
            "defaultConfiguration": {"level": LEVELS[rule.level] if rule else "warning"},
        })
    return clean({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "trainlint", "version": __version__, "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(base).as_uri() + "/"}},
            "results": results,
            **({"properties": {"liveReports": [r.path for r in reports if r.live]}}
               if any(r.live for r in reports) else {}),
        }],
    })
