"""What every feature asks first: which tracked log a URI belongs to, and which findings sit on a line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pygls.uris import to_fs_path

from .. import diagnostics as dg

if TYPE_CHECKING:
    from ...core.findings import Finding
    from ..server import TrainlintServer
    from ..workspace import Tracked


def tracked_for(ls: TrainlintServer, uri: str) -> tuple[Tracked | None, str | None]:
    """The tracked log of ``uri`` and, for an event file's text view, the member file it shows."""
    member = dg.member_of(uri)
    if member is not None:
        return ls.ws.by_file(member), member
    path = to_fs_path(uri)
    return (ls.ws.by_file(path) if path else None), None


def findings_at(ls: TrainlintServer, tr: Tracked, member: str | None, line: int) -> list[Finding]:
    """The findings shown on 1-based ``line`` of the document: of the log itself, or of a text view (where a
    finding's record is mapped to its view line as the last publish left the view: never rendered here)."""
    if tr.report is None:
        return []
    if member is None:
        return [f for f in tr.report.findings if f.location.line == line and f.location.path == tr.path]
    view = ls.views.get(tr, member, fresh=False)
    if view is None:
        return []
    return [f for f in tr.report.findings if f.location.record is not None and f.location.path == member
            and view.line_of(f.location.record, f.series_key or "") == line]
