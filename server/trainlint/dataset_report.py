"""What ``preflight`` of a fine-tuning dataset and of a speech corpus share: a verdict from findings, the
tokenizer's NOT-CHECKED finding, and line ends for findings placed on a whole line. Its own module so that the
two reports do not import each other."""

from __future__ import annotations

from .core.findings import Evidence, Finding, Level
from .core.model import Location
from .core.report import verdict_of
from .readers.dataset import lines
from .rules.dataset import TL_PRE_TOKENIZER_NOT_CHECKED


def line_ends(path: str, findings: list[Finding]) -> None:
    """Give findings placed on a whole line (leakage, lengths) the end of that line: one more streamed pass that
    stops at the last such line."""
    want = {f.location.line: f for f in findings if f.location.line and f.location.end_column is None
            and f.location.path == path}
    if not want:
        return
    last = max(want)
    ends: dict[int, int] = {}
    try:
        for n, text in lines(path):
            if n in want:
                ends[n] = len(text) + 1
            if n >= last:
                break
    except OSError:
        return
    for f in findings:
        loc = f.location
        if loc.path == path and loc.line in ends and loc.end_column is None:
            f.location = Location(loc.path, loc.line, loc.column or 1, loc.line, ends[loc.line])


def tokenizer_not_checked(path: str, why: str) -> Finding:
    return Finding(TL_PRE_TOKENIZER_NOT_CHECKED.id, TL_PRE_TOKENIZER_NOT_CHECKED.level,
                   f"The token counts, lengths, EOS, pad and unknown-token checks did not run: {why}. This says "
                   "nothing about the data.", Evidence({"reason": why}, "not checked: {reason}"), Location(path, None))


def dataset_verdict(findings: list[Finding]) -> Level:
    levels = {f.level for f in findings}
    return verdict_of(levels, judged=Level.NOT_CHECKED not in levels)
