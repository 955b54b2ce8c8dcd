"""What the CI renderings share: which findings are shown, the path a CI service expects, and a fingerprint.

A fingerprint names a finding by what was measured, not where: the rule, the file (relative to the checkout, or
the URL of a remote log), the series and the text of the measured value on its line. GitHub code scanning keeps
a dismissed alert dismissed across pushes by its ``partialFingerprints``; one that contains the line number would
re-open the alert as soon as a line is inserted above it, so the line is never part of it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.findings import Finding, Level

if TYPE_CHECKING:
    from ..core.model import LogFile
    from ..core.report import Report

#: The findings a CI service is told about: PASS and INFO are the verdict's business, not an annotation's.
SHOWN = (Level.FAIL, Level.WARN, Level.NOT_CHECKED)
FINGERPRINT_KEY = "trainlintFinding/v1"


def is_url(path: str) -> bool:
    return "://" in path or path.startswith("mlflow:")


def ci_path(path: str, base: str | None = None) -> str:
    """The path relative to ``base`` (the checkout) in ``/`` form, a URL as it is, else the absolute path."""
    if is_url(path):
        return path
    base = os.path.abspath(base or os.getcwd())
    try:
        rel = os.path.relpath(os.path.abspath(path), base)
    except ValueError:
        return Path(path).resolve().as_posix()
    return Path(path).resolve().as_posix() if rel.startswith("..") else Path(rel).as_posix()


def value_text(f: Finding, log: LogFile | None) -> str:
    """The text of the measured value: the marked span of the finding's line, else the point's value (a record
    of an event file has no line), else ''."""
    loc = f.location
    if log is not None and loc.line is not None and loc.column is not None and loc.end_column:
        text = log.line_text(loc.line, loc.path)
        if text is not None and loc.end_column > loc.column:
            return text[loc.column - 1: loc.end_column - 1]
    if log is not None and loc.record is not None and f.series_key in log.series:
        s = log.series[f.series_key]
        for i in range(len(s.records)):
            if s.records[i] == loc.record:
                return repr(s.values[i])
    return ""


def fingerprints(rep: Report, base: str | None = None) -> list[str]:
    """One fingerprint per finding of ``rep`` (same order). Two findings with the same rule, file, series and
    value text get an ordinal so they stay apart; nothing in it depends on the line."""
    seen: dict[str, int] = {}
    out = []
    for f in rep.findings:
        parts = (f.id, ci_path(f.location.path, base), f.series or "", value_text(f, rep.log))
        h = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        n = seen.get(h, 0)
        seen[h] = n + 1
        out.append(f"{h}:{n + 1}")
    return out


def shown(reports: list[Report]) -> list[tuple[Report, Finding, str]]:
    """(report, finding, fingerprint) for every finding a CI service shows, in report order."""
    out = []
    for rep in reports:
        for f, fp in zip(rep.findings, fingerprints(rep), strict=True):
            if f.level in SHOWN:
                out.append((rep, f, fp))
    return out
