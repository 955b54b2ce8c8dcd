"""``trainlint/curves``: the charts of one log for the VS Code curves view and event-file editor.

``{"uri": <file URI, or an event file's, or its trainlint-events: view>}`` -> the JSON of ``trainlint.curves``
with every line told in the client's lines, and for an event file each point's line in the text view
(``viewUri`` per member) so a click on a point opens the view on that scalar.
"""

from __future__ import annotations

from typing import Any

from pygls.uris import to_fs_path

from ..curves import build
from ..readers import binary_formats
from . import diagnostics as dg

CURVES = "trainlint/curves"


async def on_curves(ls: Any, params: Any) -> dict[str, Any]:
    uri = getattr(params, "uri", None) or (params.get("uri") if isinstance(params, dict) else None)
    if not isinstance(uri, str) or not uri:
        raise ValueError("trainlint/curves needs {\"uri\": <file URI>}")
    path = dg.member_of(uri) or to_fs_path(uri)
    if not path:
        raise ValueError(f"not a file URI: {uri}")
    tr = ls.ws.by_file(path) or await ls.in_worker(ls.ws.track, path)
    if tr is None or tr.format == "dataset":
        return {"path": path, "verdict": "NOT-CHECKED", "error": "not a training log trainlint reads",
                "series": [], "findings": [], "seams": [], "members": []}
    if tr.report is None:
        await ls.judge(tr.path, keep=True)
    await ls.points_of(tr)
    if tr.report is None:
        return {"path": path, "verdict": "NOT-CHECKED", "error": "not judged yet", "series": [], "findings": [],
                "seams": [], "members": []}

    def make() -> dict[str, Any]:
        lf = ls.lines

        def tell(p: str, line: int) -> int:
            return lf.line_to_client(p, line)

        doc = build(tr.report, tell)
        if tr.format in binary_formats() and tr.log is not None:
            members = doc.get("members") or [tr.path]
            doc["viewUris"] = [dg.events_uri(m) for m in members]
            for s in doc["series"]:
                if not s.get("records"):
                    continue
                files = s.get("files") or [0] * len(s["records"])
                views = {}
                lines = []
                for rec, fi in zip(s["records"], files, strict=True):
                    m = members[fi] if fi < len(members) else members[0]
                    if m not in views:
                        views[m] = ls.views.get(tr, m)
                    v = views[m]
                    lines.append(v.line_of(rec, s["key"]) if v is not None else None)
                s["lines"] = lines
            for f in doc["findings"]:
                for mk in f["marks"]:
                    if mk.get("record") is not None:
                        key = f["series"]
                        m = f["path"] if f["path"] in members else members[0]
                        v = ls.views.get(tr, m)
                        mk["line"] = v.line_of(mk["record"], key) if v is not None else None
                if f.get("record") is not None:
                    v = ls.views.get(tr, f["path"]) if f["path"] in members else None
                    f["line"] = (v.line_of(f["record"], f["series"] or "") or v.first_line_of(f["record"])) \
                        if v is not None else None
        doc["uri"] = dg.file_uri(path)
        return doc

    return await ls.in_worker(make)
