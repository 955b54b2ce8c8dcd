"""``trainlint/renderEvents`` (the text view of an event file or an MLflow database, where their findings are
shown) and ``trainlint/isLog`` (so an editor attaches to every log the server recognises)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from ...readers import binary_formats
from .. import diagnostics as dg

if TYPE_CHECKING:
    from ..server import TrainlintServer

RENDER_EVENTS = "trainlint/renderEvents"
IS_LOG = "trainlint/isLog"


def register(server: TrainlintServer) -> None:
    server.feature(RENDER_EVENTS)(on_render_events)
    server.feature(IS_LOG)(on_is_log)


async def on_render_events(ls: TrainlintServer, params: Any) -> dict[str, Any]:
    """The text view of an event file: ``{"uri": ..., "text": ..., "lines": n}``."""
    uri = getattr(params, "uri", None) or (params.get("uri") if isinstance(params, dict) else None)
    if not isinstance(uri, str) or not uri:
        raise ValueError("trainlint/renderEvents needs {\"uri\": <event file or trainlint-events: URI as a "
                         f"string>}}, got {str(uri)[:40]!r}")
    member = dg.member_of(uri) or to_fs_path(uri)
    if not member:
        raise ValueError(f"not a file URI: {uri}")
    tr = ls.ws.by_file(member) or await ls.in_worker(ls.ws.track, member)
    if tr is None or tr.format not in binary_formats():
        raise ValueError(f"not a TensorBoard event file or an MLflow SQLite store: {uri}")
    await ls.judge(tr.path)
    await ls.points_of(tr)
    if tr.log is None:
        raise ValueError(f"cannot read {member}: {tr.report.error if tr.report else 'unknown error'}")
    log = tr.log

    def text() -> tuple[str, int]:
        view = ls.views.get(tr, member)
        assert view is not None
        return "\n".join(view.lines(log)) + "\n", len(view)

    body, lines = await ls.in_worker(text)
    return {"uri": dg.events_uri(member), "text": body, "lines": lines}


async def on_is_log(ls: TrainlintServer, params: Any) -> dict[str, Any]:
    """Whether the server judges this file (``{"uri": ...}`` -> ``{"log": bool, "format": str | None}``), so an
    editor attaches to every log the server recognises, not to a fixed list of names."""
    uri = getattr(params, "uri", None) or (params.get("uri") if isinstance(params, dict) else None)
    if not isinstance(uri, str) or not uri:
        raise ValueError("trainlint/isLog needs {\"uri\": <file URI>}")
    path = to_fs_path(uri)
    if path is None:
        return {"log": False, "format": None}
    tr = ls.ws.by_file(path) or await ls.in_worker(ls.ws.track, path)
    return {"log": tr is not None, "format": tr.format if tr is not None else None}
