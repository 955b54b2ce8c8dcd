"""``--output-format github``: GitHub Actions workflow commands, one per FAIL (``::error``), WARN (``::warning``)
and NOT-CHECKED (``::notice``), which GitHub shows as annotations on the log's line in the run and the diff.

Escaping follows GitHub's runner (``ActionCommand``): in the message ``%``, ``\\r`` and ``\\n`` become ``%25``,
``%0D`` and ``%0A``; in a property value ``:`` and ``,`` also become ``%3A`` and ``%2C`` (a file name with a comma
would otherwise end the property early).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.findings import Level
from .ci_common import ci_path, shown

if TYPE_CHECKING:
    from ..core.findings import Finding
    from ..core.report import Report

COMMANDS = {Level.FAIL: "error", Level.WARN: "warning", Level.NOT_CHECKED: "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(f: Finding, base: str | None = None) -> str:
    loc = f.location
    props = [("file", ci_path(loc.path, base))]
    if loc.line is not None:
        props.append(("line", str(loc.line)))
        if loc.end_line is not None:
            props.append(("endLine", str(loc.end_line)))
        if loc.column is not None:
            props.append(("col", str(loc.column)))
            if loc.end_column is not None and loc.end_line in (None, loc.line):
                props.append(("endColumn", str(loc.end_column)))
    props.append(("title", f"{f.id} [{f.level.value}]"))
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    text = f.evidence.text
    if loc.record is not None:
        text += f" (record {loc.record})"
    return f"::{COMMANDS[f.level]} {head}::{escape_data(text)}"


def render(reports: list[Report], base: str | None = None) -> list[str]:
    return [command(f, base) for _rep, f, _fp in shown(reports)]
