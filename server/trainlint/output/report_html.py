"""``trainlint report PATH... -o report.html``: the curves and findings of the judged logs in one self-contained
HTML file (uPlot, the chart script, the styles and the data inline; no URL is fetched), for a CI artifact a person
opens anywhere, offline.

The charts are those of the VS Code curves view (``assets/curves.js`` on ``curves.py``'s data); lines are told as
``grep -n`` counts them, as the CLI prints them.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import Any

from .. import __version__
from ..core.linemap import LineMap
from ..core.report import Report
from ..curves import build

# the vendored library's banner names its home page: a URL in a comment, dropped so the file holds none
_BANNER = re.compile(r"^/\*!.*?\*/\s*", re.S)
UPLOT_NOTICE = "uPlot 1.6.32 (MIT licence, (c) 2022 Leon Sorokin; full text in trainlint/assets/vendor/uPlot.LICENSE)"


def asset(name: str) -> str:
    return (resources.files("trainlint") / "assets" / name).read_text(encoding="utf-8")


def _script(text: str) -> str:
    return text.replace("</script", "<\\/script")


def lf_teller() -> Any:
    maps: dict[str, LineMap] = {}

    def tell(path: str, line: int) -> int:
        m = maps.get(path)
        if m is None:
            m = maps[path] = LineMap(path).update()
        return m.to_lf(line)[0] if not m.identity() else line

    return tell


def document(reports: list[Report], title: str = "trainlint report") -> str:
    tell = lf_teller()
    docs = [build(r, tell) for r in reports]
    data = json.dumps(docs, allow_nan=False, separators=(",", ":"))
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.verdict.value] = counts.get(r.verdict.value, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no logs"
    uplot_js = _BANNER.sub("", asset("vendor/uPlot.iife.min.js"), count=1)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="trainlint {html.escape(__version__)}">
<title>{html.escape(title)}</title>
<style>{asset("vendor/uPlot.min.css")}</style>
<style>{asset("curves.css")}</style>
</head><body>
<h1>{html.escape(title)}</h1>
<p class="tl-summary">{len(reports)} log{"s" if len(reports) != 1 else ""} judged: {html.escape(summary)}.
Click a point or a finding for its line; drag to zoom, double-click to reset.</p>
<div id="tl-root"></div>
<!-- {UPLOT_NOTICE} -->
<script>{_script(uplot_js)}</script>
<script>{_script(asset("curves.js"))}</script>
<script id="tl-data" type="application/json">{_script(data)}</script>
<script>
TrainlintCurves.render(document.getElementById("tl-root"),
  JSON.parse(document.getElementById("tl-data").textContent), {{
    onPoint: function (p) {{ var s = document.getElementById("tl-where"); if (s) s.textContent = p.path + ":" +
      (p.line || ("record " + p.record)); }}
  }});
</script>
<p class="tl-summary">Last point clicked: <code id="tl-where">none</code></p>
</body></html>
"""
