"""The CI renderings by name, as one text each (the CLI prints it). Each is imported when chosen (start-up)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.report import Report

#: What ``--also-write FORMAT=PATH`` writes, besides the CI formats.
WRITABLE = ("json", "sarif", "concise", "github", "gitlab", "junit", "markdown")


def render(fmt: str, reports: list[Report], base: str | None = None) -> str:
    if fmt == "github":
        from . import github

        return "\n".join(github.render(reports, base))
    if fmt == "gitlab":
        from . import gitlab

        return json.dumps(gitlab.document(reports, base), indent=2, allow_nan=False)
    if fmt == "junit":
        from . import junit

        return junit.document(reports, base)
    if fmt == "markdown":
        from . import markdown

        return "\n".join(markdown.render(reports, base))
    raise ValueError(f"unknown CI output format {fmt!r}")


def any_format(fmt: str, reports: list[Report], discovery: dict[str, Any] | None = None) -> str:
    if fmt == "json":
        from . import check_json

        return json.dumps(check_json.document(reports, discovery=discovery), indent=2, allow_nan=False)
    if fmt == "sarif":
        from . import sarif

        return json.dumps(sarif.document(reports), indent=2, allow_nan=False)
    if fmt == "concise":
        from . import check_text

        return "\n".join(check_text.render(reports))
    return render(fmt, reports)


def parse_also(specs: list[str]) -> list[tuple[str, str]]:
    """``FORMAT=PATH`` pairs; ValueError with the reason for a bad one."""
    out = []
    for spec in specs:
        fmt, sep, path = spec.partition("=")
        if not sep or not path or fmt not in WRITABLE:
            raise ValueError(f"--also-write {spec!r}: expected FORMAT=PATH with FORMAT one of {', '.join(WRITABLE)}")
        out.append((fmt, path))
    return out


def write_also(specs: list[str], reports: list[Report], discovery: dict[str, Any] | None = None) -> None:
    """Each extra rendering of one judgement (the Action writes SARIF and the step summary from one check). A
    Markdown summary is appended (``$GITHUB_STEP_SUMMARY`` collects every step's); the others replace the file."""
    for fmt, path in parse_also(specs):
        text = any_format(fmt, reports, discovery) + "\n"
        if path == "-":
            sys.stdout.write(text)
            continue
        with open(path, "a" if fmt == "markdown" else "w", encoding="utf-8") as f:
            f.write(text)
