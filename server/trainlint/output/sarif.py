"""``trainlint check --format sarif``: SARIF 2.1.0 on the real line and column of each finding."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..core.docs_links import rule_url
from ..core.findings import Level
from ..core.model import Location
from ..core.report import Report
from ..core.values import clean
from ..rules import RULES
from .ci_common import FINGERPRINT_KEY, fingerprints, is_url

if TYPE_CHECKING:
    from typing import Any

# GitHub code scanning's limits (per run): results beyond 25,000 are dropped by the upload, so the most severe are
# kept and the rest counted in the run's properties; a result keeps at most 1,000 related locations.
MAX_RESULTS = 25_000
MAX_LOCATIONS = 1_000
_SEVERITY = {Level.FAIL: 0, Level.WARN: 1, Level.NOT_CHECKED: 2, Level.INFO: 3, Level.PASS: 4}

LEVELS = {Level.FAIL: "error", Level.WARN: "warning", Level.NOT_CHECKED: "warning", Level.INFO: "note",
          Level.PASS: "none"}


def _uri(path: str, base: str) -> str:
    if is_url(path):  # a remote log (s3://, https://, mlflow:): its URL is its name
        return path
    try:
        r = os.path.relpath(path, base)
    except ValueError:
        return Path(path).resolve().as_uri()
    if r.startswith(".."):
        return Path(path).resolve().as_uri()
    return Path(r).as_posix()


def _physical(loc: Location, base: str) -> dict[str, Any]:
    art: dict[str, Any] = {"uri": _uri(loc.path, base)}
    if not art["uri"].startswith("file:") and not is_url(loc.path):
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
    every = [(f, fp, rep) for rep in reports for f, fp in zip(rep.findings, fingerprints(rep, base), strict=True)]
    kept = sorted(range(len(every)), key=lambda i: _SEVERITY[every[i][0].level])[:MAX_RESULTS]
    dropped = len(every) - len(kept)
    for k in sorted(kept):
        f, fp, rep = every[k]
        if f.id not in used:
            used.append(f.id)
        result: dict[str, Any] = {
            "ruleId": f.id,
            "ruleIndex": used.index(f.id),
            "level": LEVELS[f.level],
            "message": {"text": f"{f.evidence.text} — {f.message}"},
            "locations": [{"physicalLocation": _physical(f.location, base)}],
            "partialFingerprints": {FINGERPRINT_KEY: fp},
            "properties": {"trainlintLevel": f.level.value, "series": f.series,
                           "evidence": dict(f.evidence.values), "interpretation": f.message,
                           **({"live": True} if rep.live else {})},
        }
        if f.level == Level.PASS:
            result["kind"] = "pass"
        if f.related:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": _physical(r.location, base),
                 "message": {"text": f"{r.role}: {r.message}"}} for i, r in enumerate(f.related[:MAX_LOCATIONS])]
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
            **({"properties": {**({"resultsDropped": dropped, "resultsLimit": MAX_RESULTS} if dropped else {}),
                               **({"liveReports": [r.path for r in reports if r.live]}
                                  if any(r.live for r in reports) else {})}}
               if dropped or any(r.live for r in reports) else {}),
        }],
    })
