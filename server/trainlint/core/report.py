"""A judged file: its verdict, findings and coverage, and the one place verdicts are ordered and turned into
an exit code.

Verdict: FAIL if any FAIL finding; else WARN if any WARN; else NOT-CHECKED when nothing could be judged; else
PASS. INFO findings never change a verdict. Every output (text, JSON, SARIF), the watcher, the language server
and the status bar order verdicts through ``worst`` so that they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .findings import Finding, Level, Measurement, SkipReason
from .model import LogFile

#: Most severe first. INFO is last: it never decides a verdict.
ORDER = {Level.FAIL: 0, Level.WARN: 1, Level.NOT_CHECKED: 2, Level.PASS: 3, Level.INFO: 4}

EXIT_OK, EXIT_FAIL, EXIT_CANNOT_JUDGE = 0, 1, 2


@dataclass
class Report:
    path: str
    format: str | None
    verdict: Level
    findings: list[Finding] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    skipped: dict[str, SkipReason] = field(default_factory=dict)
    coverage: dict[str, dict[str, SkipReason | None]] = field(default_factory=dict)
    measurements: list[Measurement] = field(default_factory=list)
    log: LogFile | None = None
    error: str | None = None
    baseline: str | None = None     # compare reports: the baseline's path
    live: bool = False              # judged as a run still being written (rules that need progress waited)


def worst(levels: Iterable[Level]) -> Level | None:
    """The most severe of ``levels`` (None for none)."""
    return min(levels, key=lambda lv: ORDER[lv], default=None)


def verdict_of(levels: Iterable[Level], judged: bool = True) -> Level:
    """The verdict of findings at ``levels``: their worst FAIL or WARN; else NOT-CHECKED when nothing was
    ``judged``; else PASS. (Whether a NOT-CHECKED finding means "nothing judged" is the caller's to say: a log
    with one check skipped is still judged.)"""
    decided = worst(set(levels) & {Level.FAIL, Level.WARN})
    if decided is not None:
        return decided
    return Level.PASS if judged else Level.NOT_CHECKED


def exit_code(levels: Iterable[Level]) -> int:
    """1 when any of ``levels`` is FAIL; else 2 when one is NOT-CHECKED or there is none (something could not
    be judged: CI must not read that as a pass); else 0 (a WARN does not fail a build)."""
    seen = set(levels)
    if Level.FAIL in seen:
        return EXIT_FAIL
    if not seen or Level.NOT_CHECKED in seen:
        return EXIT_CANNOT_JUDGE
    return EXIT_OK
