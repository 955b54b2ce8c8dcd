"""``trainlint check`` text output, as ruff prints it: ``concise`` (the default) is one line per finding with
the measured evidence; ``full`` adds the line of the log with the value marked, the interpretation, and the
related locations."""

from __future__ import annotations

import os
import re

from ..core.findings import Finding, Level
from ..core.linemap import LineMap
from ..core.model import Location, LogFile
from ..core.report import Report


def rel(path: str, base: str | None = None) -> str:
    if "://" in path or path.startswith("mlflow:"):  # a remote log is named by its URL
        return path
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


WIDTH = 160  # a concise line fits a terminal split in two; `full` has the whole evidence
COLOURS = {"FAIL": "\x1b[1;31m", "WARN": "\x1b[33m", "INFO": "\x1b[36m", "NOT-CHECKED": "\x1b[2m"}
DIM, RESET = "\x1b[2m", "\x1b[0m"
_ASIDE = re.compile(r" \((?:[^()]|\([^()]*\))*\)")


def shorten(text: str, room: int) -> str:
    """Evidence in ``room`` characters: the asides in parentheses go first (the series' own, right after its
    name, stays), then the last clauses; what was cut is marked with an ellipsis."""
    if len(text) <= room:
        return text
    name, sep, rest = text.partition(": ")
    if not sep:
        name, rest = "", text
    short = _ASIDE.sub("", rest)
    clauses = short.split("; ")
    while len(clauses) > 1 and len(name) + len(sep) + len("; ".join(clauses)) + 2 > room:
        clauses.pop()
    out = name + sep + "; ".join(clauses)
    if len(out) + 2 > room:
        out = out[: max(0, room - 2)].rsplit(" ", 1)[0].rstrip(",;:")  # at a word boundary
    return out + " …"


def finding_line(f: Finding, base: str | None = None, width: int | None = WIDTH, colour: bool = False) -> str:
    """The concise line: where, which rule, how bad, and what was measured (at most ``width`` characters, unless
    the place and rule alone are longer)."""
    head = f"{where(f.location, base)}: {f.id} [{f.level.value}] "
    text = f.evidence.text if width is None else shorten(f.evidence.text, max(40, width - len(head)))
    if not colour:
        return head + text
    lv = f.level.value
    return (f"{DIM}{where(f.location, base)}:{RESET} {f.id} {COLOURS.get(lv, '')}[{lv}]{RESET} {text}")


def use_colour(choice: str, stream: object) -> bool:
    """``--color auto`` colours a terminal unless NO_COLOR is set (https://no-color.org); always/never decide."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return not os.environ.get("NO_COLOR") and bool(getattr(stream, "isatty", lambda: False)())


def finding_full(f: Finding, log: LogFile | None, base: str | None = None,
                 maps: dict[str, LineMap] | None = None) -> list[str]:
    """The concise line, then the log's line with the value marked, the interpretation and the related places.

    With ``maps`` (the locations are told in ``\\n`` lines), the part of the line shown is the progress-bar redraw
    that holds the value, not the whole run of redraws."""
    out = [finding_line(f, base, width=None)]
    loc = f.location
    line, start = loc.line, max(0, (loc.column or 1) - 1)
    m = maps.get(loc.path) if maps is not None else None
    if m is not None and line is not None and not m.identity():
        line, start = m.to_lsp(line, start)
    text = log.line_text(line, loc.path) if log is not None and line is not None else None
    if text is not None and loc.line is not None:
        n = str(loc.line)
        pad = " " * len(n)
        shown = text.replace("\t", " ")[:200]
        end = start + (loc.end_column - loc.column) if loc.end_column and loc.column else start + 1
        width = max(1, min(end, len(shown)) - start)
        out += [f"{pad} |", f"{n} | {shown}", f"{pad} | {' ' * start}{'^' * width}"]
    out.append(f"  = {f.message}")
    out.extend(f"  = {r.role}: {where(r.location, base)}: {r.message}" for r in f.related)
    return out


def render(reports: list[Report], quiet: bool = False, verbose: bool = False, full: bool = False,
           maps: dict[str, LineMap] | None = None, colour: bool = False) -> list[str]:
    out: list[str] = []
    for rep in reports:
        shown = [f for f in rep.findings if f.level not in (Level.PASS,) and not (quiet and f.level == Level.INFO)]
        for f in shown:
            if full:
                out.extend(finding_full(f, rep.log, maps=maps))
                out.append("")
            else:
                out.append(finding_line(f, colour=colour))
        if not quiet:
            out.append(verdict_line(rep, full))
            if verbose:
                out.extend(f"    {m.check}: {m.series}: {m.text}" for m in rep.measurements)
    return out


def verdict_line(rep: Report, full: bool = False) -> str:
    if rep.error:
        return f"{rel(rep.path)}: {rep.verdict.value} — {rep.error}"
    counts = f"ran {len(rep.ran)} checks, skipped {len(rep.skipped)}"
    line = f"{rel(rep.path)}: {rep.verdict.value} ({counts})"
    if rep.live:
        line += " [judged as a live run: rules that need progress wait]"
    if not full:
        return line
    judged = [m for m in rep.measurements if m.check in ("divergence", "heldout-trend")]
    shows = "; ".join(f"{m.series} {m.text}" for m in judged)
    return line + (f" — {shows}" if shows else "")


def summary(reports: list[Report], skipped: int, unreadable: int, noun: str = "log") -> str:
    by: dict[str, int] = {}
    for r in reports:
        by[r.verdict.value] = by.get(r.verdict.value, 0) + 1
    parts = ", ".join(f"{n} {v}" for v, n in sorted(by.items(), key=lambda kv: kv[0]))
    s = f"Judged {len(reports)} {noun}{'s' if len(reports) != 1 else ''}: {parts or 'none'}"
    if skipped:
        s += f"; {skipped} file{'s' if skipped != 1 else ''} skipped (not training logs)"
    if unreadable:
        s += f"; {unreadable} unreadable"
    live = sum(1 for r in reports if r.live)
    if live:
        s += f"; {live} judged as live runs still being written"
    return s + "."
