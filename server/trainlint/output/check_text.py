"""``trainlint check`` text output, one line per finding as ruff prints them."""

from __future__ import annotations

import os

from ..judge import Report
from ..model import Location
from ..rules.base import Finding, Level


def rel(path: str, base: str | None = None) -> str:
    try:
        r = os.path.relpath(path, base or os.getcwd())
    except ValueError:
        return path
    return path if r.startswith("../../..") else r


def where(loc: Location, base: str | None = None) -> str:
    if loc.record is not None:
        return f"{rel(loc.path, base)}#record={loc.record}"
    if loc.line is None:
        return rel(loc.path, base)
    return f"{rel(loc.path, base)}:{loc.line}:{loc.column or 1}"


def finding_line(f: Finding, base: str | None = None) -> str:
    return f"{where(f.location, base)}: {f.id} [{f.level.value}] {f.evidence.text} — {f.message}"


def render(reports: list[Report], quiet: bool = False, verbose: bool = False) -> list[str]:
    out: list[str] = []
    for rep in reports:
        shown = [f for f in rep.findings if f.level not in (Level.PASS,) and not (quiet and f.level == Level.INFO)]
        for f in shown:
            out.append(finding_line(f))
        if not quiet:
            out.append(verdict_line(rep))
            if verbose:
                out.extend(f"    {m.check}: {m.series}: {m.text}" for m in rep.measurements)
    return out


def verdict_line(rep: Report) -> str:
    if rep.error:
        return f"{rel(rep.path)}: {rep.verdict.value} — {rep.error}"
    judged = [m for m in rep.measurements if m.check in ("divergence", "heldout-trend")]
    shows = "; ".join(f"{m.series} {m.text}" for m in judged)
    counts = f"ran {len(rep.ran)} checks, skipped {len(rep.skipped)}"
    return f"{rel(rep.path)}: {rep.verdict.value} ({counts})" + (f" — {shows}" if shows else "")


def summary(reports: list[Report], skipped: int, unreadable: int) -> str:
    by: dict[str, int] = {}
    for r in reports:
        by[r.verdict.value] = by.get(r.verdict.value, 0) + 1
    parts = ", ".join(f"{n} {v}" for v, n in sorted(by.items(), key=lambda kv: kv[0]))
    s = f"Judged {len(reports)} log{'s' if len(reports) != 1 else ''}: {parts or 'none'}"
    if skipped:
        s += f"; {skipped} file{'s' if skipped != 1 else ''} skipped (not training logs)"
    if unreadable:
        s += f"; {unreadable} unreadable"
    return s + "."
