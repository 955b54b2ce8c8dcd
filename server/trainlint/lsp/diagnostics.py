"""A report as LSP diagnostics: one per finding, on the line and span of the value that decided it.

Event files cannot be opened as text, so their findings go to the server-rendered text view of
the event file (``trainlint-events:`` URIs), one scalar per line.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types as t

from ..core.docs_links import rule_url
from ..core.findings import Finding, Level
from ..core.model import Location, LogFile
from ..core.values import clean
from ..events_view import EventsView, render
from .settings import Settings
from .workspace import Tracked

SOURCE = "trainlint"
EVENTS_SCHEME = "trainlint-events"
_SEVERITY = {"error": t.DiagnosticSeverity.Error, "warning": t.DiagnosticSeverity.Warning,
             "information": t.DiagnosticSeverity.Information, "hint": t.DiagnosticSeverity.Hint}


def file_uri(path: str) -> str:
    return Path(path).absolute().as_uri()


def events_uri(member: str) -> str:
    return EVENTS_SCHEME + ":" + Path(member).absolute().as_uri()[len("file:"):]


def member_of(uri: str) -> str | None:
    """The event-file path a ``trainlint-events:`` URI shows."""
    if not uri.startswith(EVENTS_SCHEME + ":"):
        return None
    from pygls.uris import to_fs_path

    return to_fs_path("file:" + uri[len(EVENTS_SCHEME) + 1:])


def _units(text: str, col0: int, encoding: str) -> int:
    """A 0-based code-point column as the negotiated position encoding counts it."""
    head = text[:col0]
    if encoding == t.PositionEncodingKind.Utf8:
        return len(head.encode("utf-8"))
    if encoding == t.PositionEncodingKind.Utf32 or head.isascii():
        return len(head)
    return len(head.encode("utf-16-le")) // 2


class Views:
    """Event-file views, one per member, grown with their log (O(appended) per judgement).

    The worker thread makes and grows them (under a lock); a request on the event loop takes the view as it
    was last grown (``fresh=False``) and never renders 900,000 lines while an editor waits for a hover.
    """

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, EventsView]] = {}
        self._lock = threading.Lock()

    def forget(self, tr: Tracked) -> None:
        """Drop the views of a log's members (its points are being released)."""
        members = tr.log.members if tr.log is not None and tr.log.members else [tr.path]
        with self._lock:
            for m in members:
                self._cache.pop(m, None)

    def get(self, tr: Tracked, member: str, fresh: bool = True) -> EventsView | None:
        hit = self._cache.get(member)
        if hit is not None and (hit[0] == tr.generation or not fresh):
            return hit[1]
        if not fresh or tr.log is None:
            return None
        with self._lock:
            hit = self._cache.get(member)
            if hit is not None and hit[0] == tr.generation:
                return hit[1]
            view = hit[1] if hit is not None else None
            if view is None or not view.extend(tr.log):
                view = render(tr.log, member)
            self._cache[member] = (tr.generation, view)
            return view


def _range(log: LogFile | None, loc: Location, tr: Tracked, views: Views, series_key: str | None,
           encoding: str) -> tuple[str, t.Range]:
    if loc.record is not None and log is not None:
        view = views.get(tr, loc.path)
        line = 1
        if view is not None:
            line = view.line_of(loc.record, series_key or "") or view.first_line_of(loc.record) or 1
        text = view.line(log, line) if view is not None else ""
        return events_uri(loc.path), t.Range(t.Position(line - 1, 0), t.Position(line - 1, len(text)))
    uri = file_uri(loc.path)
    if loc.line is None:
        return uri, t.Range(t.Position(0, 0), t.Position(0, 0))
    line0 = loc.line - 1
    text = log.line_text(loc.line, loc.path) if log is not None else None
    if text is None:  # no log to read the line from (a dataset): the columns the finding carries
        c0 = max(0, (loc.column or 1) - 1)
        return uri, t.Range(t.Position(line0, c0), t.Position(line0, max(c0, (loc.end_column or 1) - 1)))
    c0 = max(0, (loc.column or 1) - 1)
    c1 = max(c0, (loc.end_column or len(text) + 1) - 1)
    return uri, t.Range(t.Position(line0, _units(text, c0, encoding)), t.Position(line0, _units(text, c1, encoding)))


def data_of(f: Finding) -> dict[str, Any]:
    return clean({"id": f.id, "level": f.level.value, "series": f.series, "evidence": dict(f.evidence.values),
                  "evidence_text": f.evidence.text, "interpretation": f.message})


def build(tr: Tracked, settings: Settings, views: Views, encoding: str = t.PositionEncodingKind.Utf16
          ) -> dict[str, list[t.Diagnostic]]:
    """Diagnostics of one tracked log, by URI. PASS is not a diagnostic (the code lens shows it)."""
    out: dict[str, list[t.Diagnostic]] = {}
    rep = tr.report
    if rep is None:
        return out
    lg = tr.log
    for f in rep.findings:
        if f.level == Level.PASS:
            continue
        sev = settings.severity.get(f.level.value, "hint")
        if sev == "off":
            continue
        uri, rng = _range(lg, f.location, tr, views, f.series_key, encoding)
        if f.location.line is None and f.location.record is None:
            uri = file_uri(tr.path) if not os.path.isdir(tr.path) else uri
        related = []
        for r in f.related:
            ruri, rrng = _range(lg, r.location, tr, views, f.series_key, encoding)
            related.append(t.DiagnosticRelatedInformation(t.Location(ruri, rrng), f"{r.role}: {r.message}"))
        diag = t.Diagnostic(
            range=rng,
            message=f"{f.evidence.text}\n{f.message}",
            severity=_SEVERITY.get(sev, t.DiagnosticSeverity.Hint),
            code=f.id,
            code_description=t.CodeDescription(href=rule_url(f.id)),
            source=SOURCE,
            related_information=related or None,
            data=data_of(f),
        )
        out.setdefault(uri, []).append(diag)
    for uri, diags in out.items():
        # Worst first (then by position): editors that show one sign per line, and the cap below, keep the worst.
        diags.sort(key=lambda d: (d.severity or t.DiagnosticSeverity.Hint, d.range.start.line, d.range.start.character))
        if len(diags) > settings.max_diagnostics_per_file:
            out[uri] = diags[: settings.max_diagnostics_per_file]
    return out
