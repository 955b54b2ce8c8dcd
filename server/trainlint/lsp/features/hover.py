"""Hover: the finding on the line (evidence apart from interpretation), else the points the line holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as t
from pygls.uris import to_fs_path

from ..hover import findings_markdown, point_markdown
from .common import findings_at, tracked_for

if TYPE_CHECKING:
    from ..server import TrainlintServer


def register(server: TrainlintServer) -> None:
    server.feature(t.TEXT_DOCUMENT_HOVER)(on_hover)


async def on_hover(ls: TrainlintServer, params: t.HoverParams) -> t.Hover | None:
    tr, member = tracked_for(ls, params.text_document.uri)
    if tr is None or tr.report is None:
        return None
    await ls.points_of(tr)
    lg = tr.log
    if tr.report is None or (member is not None and lg is None):
        return None
    line = ls.lines.line_from_client(to_fs_path(params.text_document.uri) if member is None else None,
                                     params.position)
    here = findings_at(ls, tr, member, line)
    if here:
        return _hover(findings_markdown(here, lg, ls.lines.line_to_client))
    if member is None:
        points = tr.points_at(line)
        return _hover(point_markdown(points)) if points else None
    view = ls.views.get(tr, member, fresh=False)
    hit = view.point_at(line) if view is not None else None
    if hit is not None and lg is not None and hit[0] in lg.series:
        return _hover(point_markdown([(lg.series[hit[0]], hit[1])]))
    return None


def _hover(md: str) -> t.Hover:
    return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=md))
