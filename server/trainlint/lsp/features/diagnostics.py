"""Pull diagnostics (``textDocument/diagnostic``), registered at initialize for clients that ask for them;
the others get them pushed (``publishing.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as t

from .common import tracked_for

if TYPE_CHECKING:
    from ..server import TrainlintServer


def register(server: TrainlintServer) -> None:
    """Nothing at start: ``enable_pull`` registers the request once the client said it pulls."""


def enable_pull(ls: TrainlintServer) -> None:
    ls.pull = True
    ls.feature(t.TEXT_DOCUMENT_DIAGNOSTIC, t.DiagnosticOptions(
        identifier="trainlint", inter_file_dependencies=False, workspace_diagnostics=False))(on_pull)


async def on_pull(ls: TrainlintServer,
                  params: t.DocumentDiagnosticParams) -> t.RelatedFullDocumentDiagnosticReport:
    tr, _ = tracked_for(ls, params.text_document.uri)
    items: list[t.Diagnostic] = []
    if tr is not None:
        await ls.points_of(tr)
        items = ls.build(tr).get(params.text_document.uri, [])
    return t.RelatedFullDocumentDiagnosticReport(items=items)
