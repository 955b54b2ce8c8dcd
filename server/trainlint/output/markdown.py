"""``--output-format markdown``: a summary for ``$GITHUB_STEP_SUMMARY`` (or a merge request comment): the verdict
of each log, then a table of the findings with their location and measured evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .ci_common import ci_path, shown

if TYPE_CHECKING:
    from ..core.report import Report

ICONS = {"FAIL": "❌", "WARN": "⚠️", "NOT-CHECKED": "❔", "PASS": "✅", "INFO": "ℹ️"}


def cell(s: str) -> str:
    """Text safe in a table cell: no line break, no cell separator, no accidental code span or HTML."""
    return (s.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
            .replace("<", "&lt;").replace(">", "&gt;"))


def code(s: str) -> str:
    """A path as a code span in a table cell (a backtick in a name would end the span early)."""
    return "`" + s.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


def render(reports: list[Report], base: str | None = None) -> list[str]:
    by: dict[str, int] = {}
    for r in reports:
        by[r.verdict.value] = by.get(r.verdict.value, 0) + 1
    counts = ", ".join(f"{n} {v}" for v, n in sorted(by.items()))
    out = ["## trainlint", "", f"Judged {len(reports)} log{'s' if len(reports) != 1 else ''}: {counts or 'none'}.",
           "", "| Verdict | Log | Checks |", "| --- | --- | --- |"]
    for r in reports:
        checks = r.error or f"ran {len(r.ran)}, skipped {len(r.skipped)}"
        out.append(f"| {ICONS[r.verdict.value]} {r.verdict.value} | {code(ci_path(r.path, base))} | {cell(checks)} |")
    found = shown(reports)
    if found:
        out += ["", "| Level | Rule | Where | Evidence |", "| --- | --- | --- | --- |"]
        for _rep, f, _fp in found:
            loc = f.location
            where = ci_path(loc.path, base)
            where += f"#record={loc.record}" if loc.record is not None else (f":{loc.line}" if loc.line else "")
            out.append(f"| {ICONS[f.level.value]} {f.level.value} | {f.id} | {code(where)} | "
                       f"{cell(f.evidence.text)} |")
    return out
